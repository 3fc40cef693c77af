/* tinycompile runtime: DEPTHWISE_CONV_2D (int8). Kernel: firmware/kernels/tc_depthwise.c (with
 * its DSP fast path in tc_depthwise_dsp.c).
 *
 * Semantics of TensorFlow Lite Micro's reference DepthwiseConvPerChannel, with the conventions
 * of tc_conv2d.h (bias_eff, border taps, NHWC activations); the parameter block is CONV_2D's
 * tc_conv_params_t (depth_mult = out_c / in_c; groups and col unused).
 *
 * Weights come re-laid-out by the compiler in blocks of four output channels,
 * [ceil(out_c / 4)][k_h][k_w][4], the last block zero-padded: a tap's four channels form one
 * 32-bit word and successive taps are 4 bytes apart.
 *
 * In place (params inplace = 1, out == in): the compiler sets this only for depth multiplier 1,
 * stride 1, output size == input size. The kernel runs in blocks of four channels, pixels in
 * raster order; input pixel j is last read by output pixel j + pad_h * in_w + pad_w, so outputs
 * wait in a ring (tmp, four-byte slots) of that many + 1 pixels before they are stored. The
 * per-pixel arithmetic is the ordinary path's, so results are identical.
 */
#ifndef TC_DEPTHWISE_H
#define TC_DEPTHWISE_H

#include <stdint.h>

#include "tc_conv2d.h"

void tc_dwconv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* 16x8 (tc_conv_s16_params_t, tc_conv2d.h): int16 activations, weights [k_h][k_w][out_c]. */
void tc_dwconv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out);
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* Internal (tc_depthwise_dsp.c, called by tc_dwconv_s8): the whole layer for 3x3 filters,
 * depth multiplier 1, no dilation; returns 0 without writing anything where it does not
 * apply. */
int tc_dwconv3x3_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#endif

#endif /* TC_DEPTHWISE_H */
