/* tinycompile runtime: CONV_2D (int8), and the parameter block it shares with
 * DEPTHWISE_CONV_2D (tc_depthwise.h). Kernel: firmware/kernels/tc_conv2d.c.
 *
 * Semantics are those of TensorFlow Lite Micro's reference int8 kernels (ConvPerChannel,
 * DepthwiseConvPerChannel): int32 accumulation of filter * (input - input_zero_point) over the
 * taps inside the image (padding contributes nothing), plus bias, then
 * MultiplyByQuantizedMultiplier, + output zero point, clamp.
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
 * depthwise weights: see tc_depthwise.h.
 *
 * In place (TinyEngine-style, params inplace = 1, output over input): the compiler sets this
 * only for
 *   - CONV_2D 1x1, stride 1, no groups: pixel p's out_c outputs take bytes [p * out_c,
 *     (p + 1) * out_c) from out, its input [p * in_c, (p + 1) * in_c) from in, where out == in
 *     (a buffer growing upwards or shrinking) or in - out = n * (out_c - in_c) for n pixels (a
 *     buffer growing downwards: an expanding layer's output ends where its input ends, so it
 *     starts below it; a later shrinking layer in that buffer ends where its input ends too).
 *     Pixels run forwards when no output reaches input still unread (out == in with
 *     out_c <= in_c; the expanding layer growing downwards), else backwards. A pixel whose
 *     outputs would overlap its own input is computed into tmp and copied; the others straight
 *     into place. With a column buffer (col, Cortex-M4/M7) pixel pairs are copied there first
 *     and no temp is needed; without one, M4/M7 builds keep a small column on the stack where
 *     the column GEMM pays (in_c >= 16), else run maximal blocks of pixels whose outputs miss
 *     their own input. tc_conv_pw_s8 (below) reads a pixel's inputs before storing any of its
 *     outputs and needs no temp.
 *   - CONV_2D k x k, stride 1, output size == input size, out_c <= in_c, no groups: pixels in
 *     raster order; input pixel j is last read by output pixel j + pad_h * in_w + pad_w, so
 *     outputs wait in a ring (tmp) of that many + 1 pixels before they are stored (their bytes
 *     then cover only input pixels <= j).
 *   - DEPTHWISE_CONV_2D: see tc_depthwise.h.
 * The per-pixel arithmetic is the ordinary path's, so results are identical. When the planner
 * did not overlap output and input after all, the kernels take the ordinary path (tmp unused).
 */
#ifndef TC_CONV2D_H
#define TC_CONV2D_H

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
    int32_t depth_mult;         /* DEPTHWISE_CONV_2D: out_c / in_c. CONV_2D (which has no
                                   depth multiplier) keeps its requantization flag here:
                                   TC_CONV_RQ_SMMLAR below */
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
                                   padding), or NULL: direct loops; DEPTHWISE_CONV_2D
                                   (tc_dwconv_s8_small): a block's padded copy, or NULL */
    int32_t inplace;            /* 1: the layer may run with out == in (same arena bytes);
                                   see "In place" above */
    int8_t *tmp;                /* inplace: arena scratch (disjoint from in / out) of
                                   R = min(pad_h * in_w + pad_w + 1, in_h * in_w) outputs:
                                   CONV_2D R * out_c bytes (1x1: out_c), DEPTHWISE_CONV_2D
                                   4 * R bytes (a block of four channels) */
    const int16_t *wfew;        /* tc_conv_few_s8 / tc_conv_pw_s8: the weights laid out for
                                   that kernel (below), or NULL (every other kernel) */
} tc_conv_params_t;

/* CONV_2D: 1 where the compiler proved the requantization exact with SMMLAR for every channel
 * and input (shifts right, |accumulator| < 2^30: ops/conv_common.py smmlar_ok); the M4/M7
 * column paths then use it (tc_dsp.h tc_rq_smmlar_s8). It lives in depth_mult's word, which
 * CONV_2D does not otherwise use: a field of its own would cost every convolution layer 4 B of
 * flash on every core, and an anonymous union is not C99. */
#define TC_CONV_RQ_SMMLAR(p) ((p)->depth_mult)

void tc_conv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* The same for a grouped layer (groups > 1), what the compiler calls for one: on ARMv6-M the
 * portable loops (tc_conv_s8 there runs only tc_conv2d_m0.c's paths, which need groups == 1,
 * so that models without grouped layers do not link those loops), elsewhere tc_conv_s8 itself. */
#if defined(__ARM_ARCH_6M__) && !defined(TC_PORTABLE)
void tc_conv_s8_grouped(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#else
#define tc_conv_s8_grouped tc_conv_s8
#endif
/* The same for layers the compiler sends through the column GEMM for every pixel
 * (ops/conv2d.py, col_entry): tc_conv_s8_col with a granted column or a whole one on the stack,
 * tc_conv_s8_chunk with one in chunks on the stack. On cores with the DSP extension they are
 * tc_conv2d_dsp.c's, which leave tc_conv_s8's other loops (and each other's) unlinked where
 * no layer needs them; elsewhere tc_conv_s8 itself. On the Cortex-M55 (Helium) every entry
 * tries tc_conv2d_mve.c's column GEMM first (any groups-1 layer, in place or not), and these
 * DSP paths run only where it declines. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !defined(TC_PORTABLE)
void tc_conv_s8_col(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_conv_s8_chunk(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#else
#define tc_conv_s8_col tc_conv_s8
#define tc_conv_s8_chunk tc_conv_s8
#endif

/* CONV_2D over few input channels (kernels/tc_conv2d_few*.c; the compiler chooses it:
 * tinycompile/ops/few.py): groups 1, dil_w 1, not in place, no col; in_c * k_w <= 16 and
 * k_h * 4 * ceil(in_c * k_w / 4) <= 512. Same results as tc_conv_s8. With R = k_w * in_c and
 * G = ceil(R / 4), wfew holds the weights as int16 in blocks of four output channels b, per
 * filter row ky and word g of the window row:
 *     wfew[((b * k_h + ky) * G + g) * 16 + 4 * k + j] = weights[4 b + k][ky][e],
 *     e = 4 g + (0, 2, 1, 3)[j]  (e = kx * in_c + c),
 * zero for e >= R and for channels past out_c. weights (the model's layout) is read too. */
void tc_conv_few_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* Pointwise CONV_2D over few input channels (kernels/tc_conv2d_pwf.c; the compiler chooses it:
 * tinycompile/ops/pwf.py): 1x1, groups 1, in_c 1..12, any stride, in place (the 1x1 layouts
 * above, no temp) or not; no col. Same results as tc_conv_s8. Reads only the geometry,
 * act_min / act_max and wfew, which here is a stream of int32 words, 4 + NW per output channel
 * oc (NW = 2 * (in_c / 4) + (0, 1, 2, 2)[in_c % 4]):
 *     2 * bias_eff[oc], mult[oc], 2^(r-1) + out_offset * 2^r, r       (r = -shift[oc] >= 1)
 * then word j = 2 g + h (group g of four input values, h = 0 for values 4 g and 4 g + 2, h = 1
 * for 4 g + 1 and 4 g + 3) holding the doubled weights of those two values as int16, the first
 * in the low half; zero for values >= in_c. (The compiler checks the ranges the requantization
 * needs: ops/pwf.py.) */
void tc_conv_pw_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* 16x8 CONV_2D and DEPTHWISE_CONV_2D (TFLM's int16 ConvPerChannel / DepthwiseConvPerChannel):
 * int16 activations (zero point 0), int8 per-channel weights in TFLite's layout (conv
 * [out_c][k_h][k_w][in_c / groups], depthwise [k_h][k_w][out_c]), int64 bias; int64
 * accumulation over the taps inside the image, tc_requant64 (one rounding), clamp. */
typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_h, pad_w;
    int32_t groups;             /* CONV_2D: in_c / filter depth */
    int32_t depth_mult;         /* DEPTHWISE_CONV_2D: out_c / in_c */
    int32_t act_min, act_max;
    const int8_t *weights;
    const int64_t *bias;        /* [out_c] */
    const int32_t *rm;          /* [out_c] reduced Q15 multipliers (tc_requant64) */
    const int32_t *ts;          /* [out_c] total right shifts */
} tc_conv_s16_params_t;

void tc_conv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_CONV2D_H */
