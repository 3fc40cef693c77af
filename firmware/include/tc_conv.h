/* tinycompile runtime: int8 convolutions and fully connected layers (portable C99).
 *
 * Semantics are those of TensorFlow Lite Micro's reference int8 kernels (ConvPerChannel,
 * DepthwiseConvPerChannel, FullyConnected / FullyConnectedPerChannel): int32 accumulation of
 * filter * (input - input_zero_point) over the taps inside the image (padding contributes
 * nothing), plus bias, then MultiplyByQuantizedMultiplier, + output zero point, clamp.
 *
 * The compiler precomputes per output channel
 *     bias_eff[c] = bias[c] + in_offset * sum(weights of channel c)     (exact in int32)
 * so that wherever the whole receptive field lies inside the image the inner loop is a pure
 * int8 dot product. Near borders the kernels fall back to bias[c] + sum(w * (x + in_offset))
 * over the valid taps, which is what the reference computes everywhere; or (CONV_2D with an
 * im2col buffer) copy the window with the input zero point in the padded taps, which then
 * contribute w * (zero_point + in_offset) = 0, exactly like a skipped tap.
 *
 * Layouts: activations NHWC; conv weights [out_c][k_h][k_w][in_c / groups] (TFLite's);
 * depthwise weights re-laid-out by the compiler in blocks of four output channels,
 * [ceil(out_c / 4)][k_h][k_w][4], zero-padded (a tap's four channels form one 32-bit word);
 * FC weights [out_c][depth] (TFLite's).
 */
#ifndef TC_CONV_H
#define TC_CONV_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_h, pad_w;       /* top and left padding (TFLite's padding_values) */
    int32_t groups;             /* CONV_2D: in_c / filter depth (1 for ordinary convolutions) */
    int32_t depth_mult;         /* DEPTHWISE_CONV_2D: out_c / in_c */
    int32_t in_offset;          /* -input zero point */
    int32_t out_offset;         /* output zero point */
    int32_t act_min, act_max;   /* clamp range of the fused activation */
    const int8_t *weights;
    const int32_t *bias;        /* [out_c] model bias, or 0 when the model has none */
    const int32_t *bias_eff;    /* [out_c] bias + in_offset * sum(weights[c]) */
    const int32_t *mult;        /* [out_c] requantization multipliers (Q31) */
    const int32_t *shift;       /* [out_c] requantization shifts (TFLite sign: > 0 is left) */
    int8_t *col;                /* CONV_2D: arena scratch of 2 * k_h * k_w * in_c bytes for
                                   im2col (windows copied with the input zero point in the
                                   padding), or NULL: direct loops */
} tc_conv_params_t;

typedef struct {
    int32_t batches;            /* rows of the flattened input */
    int32_t depth;              /* accumulation depth (weights' last dimension) */
    int32_t out_c;
    int32_t out_offset;
    int32_t act_min, act_max;
    int32_t per_channel;        /* 1: mult/shift hold out_c entries, 0: one entry */
    const int8_t *weights;      /* [out_c][depth] */
    const int32_t *bias_eff;    /* [out_c] bias + in_offset * sum(weights[c]) */
    const int32_t *mult;
    const int32_t *shift;
} tc_fc_params_t;

void tc_conv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_dwconv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_CONV_H */
