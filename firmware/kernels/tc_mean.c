/* tinycompile runtime: MEAN, int8 (tc_mean_s8; see tc_mean.h).
 *
 * Matches TensorFlow Lite Micro's reference QuantizedMeanOrSum (reference/reduce.h, the path
 * TFLM takes for int8 MEAN even when input and output quantization are equal): int32 sum over
 * the reduced axes (wrapping like TFLM), minus in_zp * count, rescaled by tc_requant with 1/count
 * folded into the multiplier, plus out_zp, saturated to int8. No fast paths.
 */
#include <stdint.h>

#include "tc_mean.h"
#include "tc_qmath.h"

/* Sum of the reduced elements starting at `in` (int32 with wrap-around, like TFLM). */
static int32_t tc_mean_sum(const tc_mean_params_t *p, const int8_t *in)
{
    uint32_t acc = 0;
    int32_t idx[TC_MEAN_MAX_DIMS];
    int32_t off = 0;
    int32_t inner;
    int32_t inner_stride;
    int32_t rows;
    int32_t r;
    int32_t i;
    int d;
    const int n = p->n_red;

    if (n <= 0) {
        return in[0];
    }
    inner = p->red_dims[n - 1];
    inner_stride = p->red_strides[n - 1];
    if (inner <= 0) {
        return 0;
    }
    rows = p->count / inner;
    for (d = 0; d < n; ++d) {
        idx[d] = 0;
    }
    for (r = 0; r < rows; ++r) {
        const int8_t *src = in + off;
        for (i = 0; i < inner; ++i) {
            acc += (uint32_t)(int32_t)src[i * inner_stride];
        }
        for (d = n - 2; d >= 0; --d) {
            off += p->red_strides[d];
            if (++idx[d] < p->red_dims[d]) {
                break;
            }
            off -= p->red_strides[d] * p->red_dims[d];
            idx[d] = 0;
        }
    }
    return (int32_t)acc;
}

void tc_mean_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t idx[TC_MEAN_MAX_DIMS];
    int32_t off = 0;
    int32_t o;
    int d;
    const int n = p->n_kept;

    for (d = 0; d < n; ++d) {
        idx[d] = 0;
    }
    for (o = 0; o < p->out_size; ++o) {
        int32_t sum = tc_mean_sum(p, in + off);
        int32_t shifted = (int32_t)((uint32_t)sum - (uint32_t)(p->in_zp * p->count));
        int32_t v = tc_requant(shifted, p->multiplier, p->shift) + p->out_zp;
        v = tc_clamp(v, -128, 127);
        out[o] = (int8_t)v;
        for (d = n - 1; d >= 0; --d) {
            off += p->kept_strides[d];
            if (++idx[d] < p->kept_dims[d]) {
                break;
            }
            off -= p->kept_strides[d] * p->kept_dims[d];
            idx[d] = 0;
        }
    }
}
