/* tinycompile runtime: PAD / PADV2 and CONCATENATION, int8 and int16 (see tc_shape.h): byte
 * moves like TensorFlow Lite Micro's reference pad.cc and concatenation.cc. Two small operators kept in one
 * family file (tests build it alone). No fast paths. */
#include "tc_shape.h"

#include <string.h>

/* n elements of elem_size bytes (1 or 2), each the pad value */
static void tc_pad_fill(int8_t *out, int32_t n, int32_t elem_size, int32_t value)
{
    int32_t i;

    if (elem_size == 1) {
        memset(out, value, (size_t)n);
        return;
    }
    for (i = 0; i < n; ++i) {
        const int16_t v = (int16_t)value;
        memcpy(out + 2 * i, &v, 2);
    }
}

void tc_pad_s8(const tc_pad_params_t *p, const int8_t *in, const int8_t *value, int8_t *out)
{
    int32_t idx[TC_PAD_MAX_DIMS];
    int32_t out_dims[TC_PAD_MAX_DIMS];
    const int n = p->rank;
    const int last = n - 1;
    const int32_t es = p->elem_size;
    int32_t pad = p->value;
    int32_t row_len;
    int32_t rows = 1;
    int32_t r;
    int d;

    if (n <= 0) {
        return;
    }
    if (value != 0 && es == 1) {
        pad = (int32_t)*value;
    } else if (value != 0) {
        int16_t v16;
        memcpy(&v16, value, 2);
        pad = (int32_t)v16;
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
            tc_pad_fill(out, row_len, es, pad);
        } else {
            const int32_t before = p->pad_before[last];
            const int32_t len = p->in_dims[last];
            tc_pad_fill(out, before, es, pad);
            memcpy(out + before * es, in + src * len * es, (size_t)(len * es));
            tc_pad_fill(out + (before + len) * es, p->pad_after[last], es, pad);
        }
        out += row_len * es;
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
