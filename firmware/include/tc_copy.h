/* tinycompile runtime: tc_copy_s8, one strided byte copy driven by a loop description computed
 * at compile time. It serves the data-movement operators whose output is a re-indexing of one
 * input: TRANSPOSE, STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, UNPACK, GATHER (constant indices),
 * RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE and SPACE_TO_DEPTH (each operator's module in
 * tinycompile/ops/ builds its loops; tinycompile/ops/datamove.py simplifies them). Like TFLM's
 * reference kernels for these operators it moves bytes and never requantizes.
 *
 * The output is written in order, `run` bytes per innermost step. Loop d (outermost first) moves
 * the input position by `in_stride[d]` bytes per step, or, when `table_at` is given and
 * `table_at[d] >= 0`, to `table[table_at[d] + i]` bytes for its step i (nearest-neighbour rows and
 * columns, gathered indices). Written from the operators' documented semantics, not copied.
 *
 * Everything is in bytes: for int16 tensors (16x8 models) the compiler multiplies counts of
 * elements (runs, strides, offsets, tables) by 2 and passes byte pointers, so one kernel moves
 * every element size.
 */
#ifndef TC_COPY_H
#define TC_COPY_H

#include <stdint.h>

#define TC_COPY_MAX_DIMS 6

typedef struct {
    int32_t rank;              /* 0..6 loops; 0: one copy of `run` bytes */
    const int32_t *count;      /* rank: steps of each loop, outermost first */
    const int32_t *in_stride;  /* rank: input bytes per step (may be negative) */
    const int32_t *table_at;   /* rank: start of loop d's offset table in `table`, -1: none;
                                  or 0 when no loop has a table */
    const int32_t *table;      /* input byte offsets, or 0 */
    int32_t in_offset;         /* input bytes before the first element copied */
    int32_t run;               /* contiguous bytes copied per innermost step (>= 1) */
} tc_copy_params_t;

void tc_copy_s8(const tc_copy_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_COPY_H */
