/* tinycompile runtime: MEAN, SUM, REDUCE_MAX, REDUCE_MIN (int8), MEAN int16. Kernel:
 * firmware/kernels/tc_mean.c.
 *
 * Semantics of TensorFlow Lite Micro's reference kernels (reduce_common.cc / reference/reduce.h,
 * QuantizedMeanOrSum and ReduceGeneric); the multiplier, shift and loop description are
 * computed at compile time by tinycompile/ops/mean.py. Written from the documented semantics,
 * not copied.
 */
#ifndef TC_MEAN_H
#define TC_MEAN_H

#include <stdint.h>

#define TC_MEAN_MAX_DIMS 6

/* MEAN over any set of axes, as TFLM's QuantizedMeanOrSum: (sum - in_zp * count) rescaled by a
 * multiplier with 1/count folded in, plus out_zp, saturated to int8. TFLM takes this path even
 * when input and output quantization are equal. The compiler splits the input dims into kept
 * dims (in output order) and reduced dims, merging neighbours, each with its input stride. */
typedef struct {
    int32_t out_size;        /* number of output elements */
    int32_t n_kept;          /* kept loops (<= TC_MEAN_MAX_DIMS) */
    const int32_t *kept_dims;
    const int32_t *kept_strides;
    int32_t n_red;           /* reduced loops (<= TC_MEAN_MAX_DIMS) */
    const int32_t *red_dims;
    const int32_t *red_strides;
    int32_t count;           /* elements reduced into each output */
    int32_t in_zp;
    int32_t out_zp;
    int32_t multiplier;      /* folded with 1/count */
    int32_t shift;
} tc_mean_params_t;

/* MEAN, and SUM (the multiplier without 1/count). */
void tc_mean_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out);
/* REDUCE_MAX, REDUCE_MIN: the raw int8 values (count, zero points and multiplier unused). */
void tc_reduce_max_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out);
void tc_reduce_min_s8(const tc_mean_params_t *p, const int8_t *in, int8_t *out);

/* 16x8: the same on int16 elements (zero points 0), saturated to int16, as TFLM's int16 MEAN. */
void tc_mean_s16(const tc_mean_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_MEAN_H */
