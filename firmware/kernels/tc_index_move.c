/* tinycompile runtime: EMBEDDING_LOOKUP (int8) and DYNAMIC_UPDATE_SLICE (int8, int16; indices read at
 * run time), matching TensorFlow Lite Micro's embedding_lookup.cc (EvalSimple: one table row
 * per id, an id outside the table fails Invoke) and dynamic_update_slice.cc (the operand
 * copied unless in place, start indices clamped into the operand, the update written row by
 * row; an update as large as the operand replaces it whatever the indices). Written from those
 * semantics; no fast path.
 */
#include "tc_index_move.h"

#include <string.h>

int tc_embedding_lookup_s8(const tc_embedding_lookup_params_t *p, const int32_t *ids,
                           const int8_t *table, int8_t *out)
{
    int32_t i;

    for (i = 0; i < p->n_ids; ++i) {
        const int32_t id = ids[i];
        if (id < 0 || id >= p->rows) {
            return 1;
        }
        memcpy(out + i * p->row_bytes, table + id * p->row_bytes, (size_t)p->row_bytes);
    }
    return 0;
}

void tc_update_slice_s8(const tc_update_slice_params_t *p, const int8_t *operand,
                        const int8_t *update, const int32_t *start, int8_t *out)
{
    int32_t stride[TC_UPDATE_SLICE_MAX_DIMS];
    int32_t idx[TC_UPDATE_SLICE_MAX_DIMS];
    int32_t size = p->elem_bytes; /* bytes */
    int32_t update_size = p->elem_bytes;
    int32_t offset = 0;
    int32_t run;
    int32_t d;

    for (d = p->rank - 1; d >= 0; --d) {
        stride[d] = size;
        size *= p->dims[d];
        update_size *= p->update_dims[d];
    }
    if (update_size == size) {
        memcpy(out, update, (size_t)size);
        return;
    }
    if (out != operand) {
        memcpy(out, operand, (size_t)size);
    }
    if (update_size == 0) {
        return;
    }
    for (d = 0; d < p->rank; ++d) {
        int32_t s = start[d];
        const int32_t hi = p->dims[d] - p->update_dims[d];
        s = s < 0 ? 0 : (s > hi ? hi : s);
        offset += s * stride[d];
        idx[d] = 0;
    }
    run = p->update_dims[p->rank - 1] * p->elem_bytes;
    for (;;) {
        int32_t at = offset;
        for (d = 0; d < p->rank - 1; ++d) {
            at += idx[d] * stride[d];
        }
        memcpy(out + at, update, (size_t)run);
        update += run;
        for (d = p->rank - 2; d >= 0; --d) { /* odometer over the outer dims */
            if (++idx[d] < p->update_dims[d]) {
                break;
            }
            idx[d] = 0;
        }
        if (d < 0) {
            return;
        }
    }
}
