/* tinycompile runtime: MEAN and SUM, REDUCE_MAX and REDUCE_MIN, int8 (tc_mean_s8,
 * tc_reduce_max_s8, tc_reduce_min_s8), and MEAN int16 (tc_mean_s16, 16x8); see tc_mean.h.
 *
 * MEAN and SUM match TensorFlow Lite Micro's reference QuantizedMeanOrSum (reference/reduce.h,
 * the path TFLM takes for int8 MEAN even when input and output quantization are equal, and for
 * int8 SUM): int32 sum over the reduced axes (wrapping like TFLM), minus in_zp * count,
 * rescaled by tc_requant (MEAN: 1/count folded into the multiplier), plus out_zp, saturated to
 * int8. TFLM's int16 MEAN is the same template on int16_t (int32 sum, saturated to int16).
 * REDUCE_MAX / REDUCE_MIN match reduce_common.cc's EvalMinMaxHelper (ReduceGeneric on the raw
 * int8 values; TFLM requires input and output quantization to be equal). One walk over the
 * reduced axes serves all of them, inlined into each entry point (MEAN keeps its speed). No fast
 * paths.
 */
#include <stdint.h>

#include "tc_mean.h"
#include "tc_qmath.h"

enum { TC_REDUCE_SUM = 0, TC_REDUCE_MAX = 1, TC_REDUCE_MIN = 2 };

/* The reduced elements starting at in8 (int8) or in16 (int16: sums only) folded by `mode`:
 * their sum (int32 with wrap-around, like TFLM), maximum or minimum. */
TC_INLINE int32_t tc_reduce_fold(const tc_mean_params_t *p, const int8_t *in8,
                                 const int16_t *in16, int mode)
{
    uint32_t acc = 0;
    int32_t best = mode == TC_REDUCE_MAX ? -128 : 127;
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
        if (in8 == 0) {
            const int16_t *src = in16 + off;
            for (i = 0; i < inner; ++i) {
                acc += (uint32_t)(int32_t)src[i * inner_stride];
            }
        } else if (mode == TC_REDUCE_SUM) {
            const int8_t *src = in8 + off;
            for (i = 0; i < inner; ++i) {
                acc += (uint32_t)(int32_t)src[i * inner_stride];
            }
        } else if (mode == TC_REDUCE_MAX) {
            const int8_t *src = in8 + off;
            for (i = 0; i < inner; ++i) {
                best = src[i * inner_stride] > best ? src[i * inner_stride] : best;
            }
        } else {
            const int8_t *src = in8 + off;
            for (i = 0; i < inner; ++i) {
                best = src[i * inner_stride] < best ? src[i * inner_stride] : best;
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
    return mode == TC_REDUCE_SUM ? (int32_t)acc : best;
}

/* One of in8/in16 and out8/out16 is given (the element type; int16 for sums only). */
TC_INLINE void tc_reduce_run(const tc_mean_params_t *p, const int8_t *in8, const int16_t *in16,
                             int8_t *out8, int16_t *out16, int mode)
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
        int32_t v = tc_reduce_fold(p, in8 != 0 ? in8 + off : 0, in8 != 0 ? 0 : in16 + off, mode);
        if (mode == TC_REDUCE_SUM) {
            int32_t shifted = (int32_t)((uint32_t)v - (uint32_t)(p->in_zp * p->count));
            v = tc_requant(shifted, p->multiplier, p->shift) + p->out_zp;
        }
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
    tc_reduce_run(p, in, 0, out, 0, TC_REDUCE_SUM);
}

void tc_mean_s16(const tc_mean_params_t *p, const int16_t *in, int16_t *out)
{
    tc_reduce_run(p, 0, in, 0, out, TC_REDUCE_SUM);
}

void tc_reduce_max_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_reduce_run(p, in, 0, out, 0, TC_REDUCE_MAX);
}

void tc_reduce_min_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_reduce_run(p, in, 0, out, 0, TC_REDUCE_MIN);
}
