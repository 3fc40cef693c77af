/* tinycompile runtime: TRANSPOSE_CONV (int8). Kernel: firmware/kernels/tc_transpose_conv.c.
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

#endif /* TC_TRANSPOSE_CONV_H */
