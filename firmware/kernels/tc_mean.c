/* tinycompile runtime: MEAN, int8 (tc_mean_s8) and int16 (tc_mean_s16, 16x8); see tc_mean.h.
 *
 * Matches TensorFlow Lite Micro's reference QuantizedMeanOrSum (reference/reduce.h, the path
 * TFLM takes for int8 MEAN even when input and output quantization are equal): int32 sum over
 * the reduced axes (wrapping like TFLM), minus in_zp * count, rescaled by tc_requant with 1/count
 * folded into the multiplier, plus out_zp, saturated to int8. TFLM's int16 MEAN is the same
 * template on int16_t (int32 sum, saturated to int16): one driver serves both. No fast paths.
 */
#include <stdint.h>

#include "tc_mean.h"
#include "tc_qmath.h"

/* Sum of the reduced elements starting at `in` (int32 with wrap-around, like TFLM). */
static int32_t tc_mean_sum(const tc_mean_params_t *p, const int8_t *in8, const int16_t *in16)
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
        return in8 != 0 ? in8[0] : in16[0];
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
        if (in8 != 0) {
            const int8_t *src = in8 + off;
            for (i = 0; i < inner; ++i) {
                acc += (uint32_t)(int32_t)src[i * inner_stride];
            }
        } else {
            const int16_t *src = in16 + off;
            for (i = 0; i < inner; ++i) {
                acc += (uint32_t)(int32_t)src[i * inner_stride];
            }
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

/* One of in8/in16 and out8/out16 is given (the element type). */
static void tc_mean_run(const tc_mean_params_t *p, const int8_t *in8, const int16_t *in16,
                        int8_t *out8, int16_t *out16)
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
        int32_t sum = tc_mean_sum(p, in8 != 0 ? in8 + off : 0, in8 != 0 ? 0 : in16 + off);
        int32_t shifted = (int32_t)((uint32_t)sum - (uint32_t)(p->in_zp * p->count));
        int32_t v = tc_requant(shifted, p->multiplier, p->shift) + p->out_zp;
        if (out8 != 0) {
            out8[o] = (int8_t)tc_clamp(v, -128, 127);
        } else {
            out16[o] = (int16_t)tc_clamp(v, -32768, 32767);
        }
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

void tc_mean_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_mean_run(p, in, 0, out, 0);
}

void tc_mean_s16(const tc_mean_params_t *p, const int16_t *in, int16_t *out)
{
    tc_mean_run(p, 0, in, 0, out);
}
