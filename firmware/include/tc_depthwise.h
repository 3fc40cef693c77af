/* tinycompile runtime: DEPTHWISE_CONV_2D (int8). Kernel: firmware/kernels/tc_depthwise.c (with
 * its DSP fast paths in tc_depthwise_dsp.c, tc_depthwise_kxk_dsp.c, tc_depthwise_block4_dsp.c,
 * and on the Cortex-M55 the Helium 3x3 path of tc_depthwise_mve.c, tried instead of the 3x3
 * DSP paths).
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
 * per-pixel arithmetic is the ordinary path's, so results are identical. (tc_dwconv_s8_small
 * on ARMv6-M needs no ring: its temporary is a padded copy of the block, below; the whole-layer
 * 3x3 paths, DSP and Helium, need none either: they buffer the input lines they read and leave
 * tmp unused.)
 */
#ifndef TC_DEPTHWISE_H
#define TC_DEPTHWISE_H

#include <stdint.h>

#include "tc_conv2d.h"

void tc_dwconv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* The same layer, trying the any-window DSP path first on Cortex-M4/M7 (tc_depthwise_kxk_dsp.c;
 * on the Cortex-M55 the Helium 3x3 path before it), on ARMv6-M the path for depth multipliers in
 * fours (tc_depthwise_m0.c): what the compiler calls for the layers the 3x3 DSP path does not
 * take (ops/depthwise.py), so that other models do not link those paths. */
void tc_dwconv_s8_kxk(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* The same layer, trying the 3x3 DSP path for channels not in fours first on Cortex-M4/M7
 * (tc_dwconv3x3n_dsp; the Helium 3x3 path on the Cortex-M55): what the compiler calls for such
 * 3x3 layers, so that other models do not link that instance. */
void tc_dwconv_s8_3x3n(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* The same layer over a small image with col (4-byte aligned) holding 4 * BH * BW bytes,
 * BH = (out_h - 1) * stride_h + (k_h - 1) * dil_h + 1 and BW likewise: on ARMv6-M a block of
 * four channels at a time through a zero-point-padded copy there (tc_depthwise_m0.c), in place
 * too (col = tmp); what the compiler calls instead of tc_dwconv_s8 where it grants that buffer
 * (ops/depthwise.py). Elsewhere tc_dwconv_s8 itself (col unused), so the other cores' code is
 * the same. */
#if defined(__ARM_ARCH_6M__) && !defined(TC_PORTABLE)
void tc_dwconv_s8_small(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#else
#define tc_dwconv_s8_small tc_dwconv_s8
#endif

/* 1x1 DEPTHWISE_CONV_2D (any stride and depth multiplier; a 1x1 window never reaches the
 * padding), kernel firmware/kernels/tc_depthwise_1x1.c: output channel oc of output pixel
 * (oy, ox) reads input channel oc / depth_mult of input pixel (oy * stride_h, ox * stride_w).
 * With lut (the compiler's choice), the output is lut[oc * 256 + x + 128]: the compiler
 * tabulates, per output channel, TFLM's result for each of the 256 input values; without,
 * it is requantized (tc_out_s8) from bias_eff[oc] + weights[oc] * x, weights in the model's
 * order [out_c]. In place (out == in: stride 1, depth multiplier 1) each output replaces its
 * own input after reading it. */
typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t stride_h, stride_w;
    int32_t depth_mult;
    const int8_t *lut;          /* [out_c][256] outputs by input value + 128, or NULL */
    const int8_t *weights;      /* [out_c] (lut NULL) */
    const int32_t *bias_eff;    /* [out_c] (lut NULL) */
    const int32_t *mult;        /* [out_c] (lut NULL) */
    const int32_t *shift;       /* [out_c] (lut NULL) */
    int32_t out_offset, act_min, act_max;
} tc_dw1x1_params_t;

void tc_dwconv1x1_s8(const tc_dw1x1_params_t *p, const int8_t *in, int8_t *out);

/* 16x8 (tc_conv_s16_params_t, tc_conv2d.h): int16 activations, weights [k_h][k_w][out_c]. */
void tc_dwconv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out);
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* Internal (tc_depthwise_dsp.c, called by tc_dwconv_s8): the whole layer for 3x3 filters,
 * depth multiplier 1, no dilation, channels in fours; returns 0 without writing anything where
 * it does not apply. */
int tc_dwconv3x3_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* The same for any channel count (a last block of one to three channels), TFLite's
 * requantization only. */
int tc_dwconv3x3n_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* Internal (tc_depthwise_kxk_dsp.c): the whole layer for windows up to 7x7, any depth
 * multiplier, no dilation, stride 1 or 2 along its output lines; returns 0 without writing
 * anything where it does not apply. */
int tc_dwconv_kxk_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
/* Internal (tc_depthwise_mve.c, Helium: the Cortex-M55): the whole layer for 3x3 filters,
 * depth multiplier 1, no dilation, any channel count, stride 1 or 2 along its output lines;
 * returns 0 without writing anything where it does not apply. On such cores tc_dwconv_s8,
 * tc_dwconv_s8_3x3n and tc_dwconv_s8_kxk try it instead of the 3x3 DSP paths above. */
int tc_dwconv3x3_mve(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#endif

#endif /* TC_DEPTHWISE_H */
