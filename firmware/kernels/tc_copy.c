/* tinycompile runtime: tc_copy_s8 (see tc_copy.h), the strided copy behind TRANSPOSE,
 * STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, UNPACK, GATHER, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE
 * and SPACE_TO_DEPTH. Matches TFLM's reference transpose.h, strided_slice.h, slice.h, split.cc,
 * unpack.cc, gather.cc, resize_nearest_neighbor.h, depth_to_space.h and space_to_depth.h, which
 * all only move bytes. No fast paths: the compiler merges contiguous loops, so the innermost
 * step is usually a memcpy of a whole row. */
#include "tc_copy.h"

#include <string.h>

static int32_t tc_copy_offset(const tc_copy_params_t *p, int d, int32_t i)
{
    if (p->table_at != 0 && p->table_at[d] >= 0) {
        return p->table[p->table_at[d] + i];
    }
    return i * p->in_stride[d];
}

void tc_copy_s8(const tc_copy_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t idx[TC_COPY_MAX_DIMS];
    const int n = p->rank;
    const int last = n - 1;
    const int32_t run = p->run;
    int32_t outer = 1;
    int32_t k;
    int32_t i;
    int d;

    in += p->in_offset;
    if (n <= 0) {
        memcpy(out, in, (size_t)run);
        return;
    }
    for (d = 0; d < last; ++d) {
        idx[d] = 0;
        outer *= p->count[d];
    }
    for (k = 0; k < outer; ++k) {
        const int32_t cnt = p->count[last];
        int32_t off = 0; /* byte offsets, not pointers: negative strides never leave the input */
        for (d = 0; d < last; ++d) {
            off += tc_copy_offset(p, d, idx[d]);
        }
        if (p->table_at != 0 && p->table_at[last] >= 0) {
            const int32_t *t = p->table + p->table_at[last];
            for (i = 0; i < cnt; ++i) {
                memcpy(out, in + off + t[i], (size_t)run);
                out += run;
            }
        } else if (run == 1) {
            const int32_t step = p->in_stride[last];
            for (i = 0; i < cnt; ++i) {
                *out++ = in[off];
                off += step;
            }
        } else {
            const int32_t step = p->in_stride[last];
            for (i = 0; i < cnt; ++i) {
                memcpy(out, in + off, (size_t)run);
                out += run;
                off += step;
            }
        }
        for (d = last - 1; d >= 0; --d) {
            if (++idx[d] < p->count[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}
