/* tinycompile runtime: byte moves driven by indices read at run time (kernels:
 * firmware/kernels/tc_index_move.c): EMBEDDING_LOOKUP and DYNAMIC_UPDATE_SLICE, as TensorFlow
 * Lite Micro's embedding_lookup.cc and dynamic_update_slice.cc move them (no requantization).
 * Moves whose indices are constant go through tc_copy_s8 (tc_copy.h) instead where they can.
 */
#ifndef TC_INDEX_MOVE_H
#define TC_INDEX_MOVE_H

#include <stdint.h>

#define TC_UPDATE_SLICE_MAX_DIMS 6

typedef struct {
    int32_t n_ids;      /* ids to look up */
    int32_t rows;       /* rows of the table */
    int32_t row_bytes;  /* bytes per row */
} tc_embedding_lookup_params_t;

/* out row i = table row ids[i]. Returns 1, having stopped, at the first id outside
 * [0, rows) (TFLM's Invoke fails there), else 0. */
int tc_embedding_lookup_s8(const tc_embedding_lookup_params_t *p, const int32_t *ids,
                           const int8_t *table, int8_t *out);

typedef struct {
    int32_t rank;               /* 1..6 */
    const int32_t *dims;        /* rank: the operand's (and output's) dims */
    const int32_t *update_dims; /* rank: the update's, each at most the operand's */
    int32_t elem_bytes;         /* 1 (int8) or 2 (int16) */
} tc_update_slice_params_t;

/* out = operand (elements of elem_bytes bytes) with `update` written at the start indices, each clamped to
 * [0, dims[d] - update_dims[d]] as TFLM clamps them. May run in place (out == operand). */
void tc_update_slice_s8(const tc_update_slice_params_t *p, const int8_t *operand,
                        const int8_t *update, const int32_t *start, int8_t *out);

#endif /* TC_INDEX_MOVE_H */
