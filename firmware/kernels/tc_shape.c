/* tinycompile runtime: int8 PAD / PADV2 and CONCATENATION (see tc_shape.h): byte moves like
 * TensorFlow Lite Micro's reference pad.cc and concatenation.cc. Two small operators kept in one
 * family file (tests build it alone). No fast paths. */
#include "tc_shape.h"

#include <string.h>

void tc_pad_s8(const tc_pad_params_t *p, const int8_t *in, const int8_t *value, int8_t *out)
{
    int32_t idx[TC_PAD_MAX_DIMS];
    int32_t out_dims[TC_PAD_MAX_DIMS];
    const int n = p->rank;
    const int last = n - 1;
    const int pad_byte = value != 0 ? (int)*value : (int)p->value;
    int32_t row_len;
    int32_t rows = 1;
    int32_t r;
    int d;

    if (n <= 0) {
        return;
    }
    for (d = 0; d < n; ++d) {
        idx[d] = 0;
        out_dims[d] = p->pad_before[d] + p->in_dims[d] + p->pad_after[d];
        if (d < last) {
            rows *= out_dims[d];
        }
    }
    row_len = out_dims[last];
    for (r = 0; r < rows; ++r) {
        /* Is this output row inside the input along every outer dim? */
        int inside = 1;
        int32_t src = 0;
        for (d = 0; d < last; ++d) {
            int32_t i = idx[d] - p->pad_before[d];
            if (i < 0 || i >= p->in_dims[d]) {
                inside = 0;
                break;
            }
            src = src * p->in_dims[d] + i;
        }
        if (!inside) {
            memset(out, pad_byte, (size_t)row_len);
        } else {
            const int32_t before = p->pad_before[last];
            const int32_t len = p->in_dims[last];
            memset(out, pad_byte, (size_t)before);
            memcpy(out + before, in + src * len, (size_t)len);
            memset(out + before + len, pad_byte, (size_t)p->pad_after[last]);
        }
        out += row_len;
        for (d = last - 1; d >= 0; --d) {
            if (++idx[d] < out_dims[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

void tc_concat_s8(const tc_concat_params_t *p, const int8_t *const *in, int8_t *out)
{
    int32_t o;
    int32_t i;

    for (o = 0; o < p->outer; ++o) {
        for (i = 0; i < p->n_inputs; ++i) {
            const int32_t len = p->chunk[i];
            memcpy(out, in[i] + o * len, (size_t)len);
            out += len;
        }
    }
}
