/* tinycompile runtime: MEAN and SUM, REDUCE_MAX and REDUCE_MIN, int8 (tc_mean_s8,
 * tc_reduce_max_s8, tc_reduce_min_s8; see tc_mean.h).
 *
 * MEAN and SUM match TensorFlow Lite Micro's reference QuantizedMeanOrSum (reference/reduce.h,
 * the path TFLM takes for int8 MEAN even when input and output quantization are equal, and for
 * int8 SUM): int32 sum over the reduced axes (wrapping like TFLM), minus in_zp * count,
 * rescaled by tc_requant (MEAN: 1/count folded into the multiplier), plus out_zp, saturated to
 * int8. REDUCE_MAX / REDUCE_MIN match reduce_common.cc's EvalMinMaxHelper (ReduceGeneric on the
 * raw int8 values; TFLM requires input and output quantization to be equal). One walk over the
 * reduced axes serves all four. No fast paths.
 */
#include <stdint.h>

#include "tc_mean.h"
#include "tc_qmath.h"

enum { TC_REDUCE_SUM = 0, TC_REDUCE_MAX = 1, TC_REDUCE_MIN = 2 };

/* The reduced elements starting at `in` folded by `mode`: their sum (int32 with wrap-around,
 * like TFLM), maximum or minimum. */
TC_INLINE int32_t tc_reduce_fold(const tc_mean_params_t *p, const int8_t *in, int mode)
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
        if (mode == TC_REDUCE_SUM) {
            for (i = 0; i < inner; ++i) {
                acc += (uint32_t)(int32_t)src[i * inner_stride];
            }
        } else if (mode == TC_REDUCE_MAX) {
            for (i = 0; i < inner; ++i) {
                best = src[i * inner_stride] > best ? src[i * inner_stride] : best;
            }
        } else {
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

TC_INLINE void tc_reduce_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out, int mode)
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
        int32_t v = tc_reduce_fold(p, in + off, mode);
        if (mode == TC_REDUCE_SUM) {
            int32_t shifted = (int32_t)((uint32_t)v - (uint32_t)(p->in_zp * p->count));
            v = tc_requant(shifted, p->multiplier, p->shift) + p->out_zp;
            v = tc_clamp(v, -128, 127);
        }
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

void tc_mean_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_reduce_s8(p, in, out, TC_REDUCE_SUM);
}

void tc_reduce_max_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_reduce_s8(p, in, out, TC_REDUCE_MAX);
}

void tc_reduce_min_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out)
{
    tc_reduce_s8(p, in, out, TC_REDUCE_MIN);
}
