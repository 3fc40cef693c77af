/* tinycompile runtime: TRANSPOSE_CONV (int8; int16 16x8 below). Kernel: firmware/kernels/tc_transpose_conv.c.
 *
 * Semantics of TensorFlow Lite Micro's reference int8 TransposeConv
 * (reference/integer_ops/transpose_conv.h): every input pixel scatters
 * (input + in_offset) * weights into an int32 accumulator per output element; then bias,
 * per-channel MultiplyByQuantizedMultiplier, output zero point, clamp. Weights
 * [out_c][k_h][k_w][in_c] (TFLite's). pad_h / pad_w are TFLM's (computed by the compiler).
 */
#ifndef TC_TRANSPOSE_CONV_H
#define TC_TRANSPOSE_CONV_H

#include <stdint.h>

typedef struct {
    int32_t batches, in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, pad_h, pad_w;
    int32_t in_offset, out_offset;
    int32_t act_min, act_max;
    const int8_t *weights;      /* [out_c][k_h][k_w][in_c] */
    const int32_t *bias;        /* [out_c], or 0 (no bias) */
    const int32_t *mult;        /* [out_c] */
    const int32_t *shift;       /* [out_c] */
} tc_transpose_conv_params_t;

void tc_transpose_conv_s8(const tc_transpose_conv_params_t *p, const int8_t *in, int8_t *out);

/* 16x8 (TFLM's int16 TransposeConv, the same file's int16_t overload with an int64
 * accumulator): int16 input and output with zero point 0, int8 weights, int64 bias or none,
 * TFLM's 64-bit requantization (tc_requant64 with the Q15 multipliers rm and total shifts ts
 * the compiler reduces from TFLM's per-channel multipliers). */
typedef struct {
    int32_t batches, in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, pad_h, pad_w;
    int32_t act_min, act_max;
    const int8_t *weights;      /* [out_c][k_h][k_w][in_c] */
    const int64_t *bias;        /* [out_c], or 0 (no bias) */
    const int32_t *rm;          /* [out_c] */
    const int32_t *ts;          /* [out_c] */
} tc_transpose_conv_s16_params_t;

void tc_transpose_conv_s16(const tc_transpose_conv_s16_params_t *p, const int16_t *in,
                           int16_t *out);

#endif /* TC_TRANSPOSE_CONV_H */
