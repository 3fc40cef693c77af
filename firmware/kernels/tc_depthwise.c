/* tinycompile runtime: DEPTHWISE_CONV_2D, int8 (tc_dwconv_s8; see tc_depthwise.h), portable.
 *
 * Matches TensorFlow Lite Micro's reference DepthwiseConvPerChannel
 * (reference/integer_ops/depthwise_conv.h): per output channel, int32 accumulation of
 * filter * (input - input_zero_point) over the taps inside the image, plus bias, then
 * MultiplyByQuantizedMultiplier (tc_requant), output zero point and the activation clamp.
 * Written from those semantics; the loops are our own: the input offset is folded into bias_eff
 * (interior windows are pure int8 dot products, border windows use the reference formula over
 * their valid taps), 3x3 filters are unrolled, and in place (out == in) a ring holds each
 * output until its input pixel has been read for the last time.
 *
 * Fast paths beside it: tc_depthwise_dsp.c (Cortex-M4/M7, __ARM_FEATURE_DSP): the whole layer
 * for 3x3 filters at depth multiplier 1 (tc_dwconv3x3_dsp, tried first by tc_dwconv_s8; it
 * returns 0 where it does not apply), and four channels of an interior pixel at depth
 * multiplier 1 per call, one word of input and weights per tap (TC_DW_FAST, tc_dw_block4_fast)
 * for the other layers; tc_depthwise_kxk_dsp.c (M4/M7): the whole layer for any other window
 * up to 7x7, any depth multiplier, stride 1 or 2 along its lines (tc_dwconv_kxk_dsp, through
 * tc_dwconv_s8_kxk, which the compiler calls for those layers only, so that a model whose
 * layers the 3x3 path takes does not link it; it returns 0 where it does not apply; on ARMv6-M
 * the same entry tries tc_depthwise_m0.c's path for depth multipliers in fours). On the
 * Cortex-M55 (Helium, TC_MVE) tc_dwconv_s8, tc_dwconv_s8_3x3n and tc_dwconv_s8_kxk try
 * tc_depthwise_mve.c's whole-layer 3x3 path first (tc_dwconv3x3_mve: depth multiplier 1, any
 * channel count, stride 1 or 2 along the lines) and never the 3x3 DSP paths, which it covers.
 * 1x1 layers are lowered to tc_dwconv1x1_s8 (tc_depthwise_1x1.c) instead. All give identical
 * results.
 */
#include <stdint.h>
#include <string.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

/* Weights come re-laid-out by the compiler in blocks of four output channels:
 * [out_c / 4 (rounded up)][k_h][k_w][4], the last block zero-padded. Within a block the four
 * channels of one tap are one 32-bit word, and successive taps are 4 bytes apart. */
TC_INLINE const int8_t *tc_dw_wblock(const tc_conv_params_t *p, int32_t oc)
{
    return p->weights + (oc >> 2) * (p->k_h * p->k_w * 4) + (oc & 3);
}

/* One output pixel whose window leaves the image: the reference formula over valid taps. */
static void tc_dwconv_border(const tc_conv_params_t *p, const int8_t *img, int32_t oy,
                             int32_t ox, int8_t *out)
{
    const int32_t W = p->in_w, C = p->in_c, OC = p->out_c, DM = p->depth_mult, KW = p->k_w;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    const int32_t xstep = p->dil_w * C, rstep = p->dil_h * W * C, off = p->in_offset;
    int32_t ky0, ky1, kx0, kx1, ic = 0, m = 0, oc;
    const int8_t *org;
    tc_tap_range(iy0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
    tc_tap_range(ix0, p->dil_w, KW, W, &kx0, &kx1);
    org = img + ((iy0 + ky0 * p->dil_h) * W + ix0 + kx0 * p->dil_w) * C;
    for (oc = 0; oc < OC; oc++) {
        const int32_t acc =
            tc_dw_taps_sum(org + ic, tc_dw_wblock(p, oc) + (ky0 * KW + kx0) * 4, ky1 - ky0,
                             kx1 - kx0, xstep, rstep, KW * 4, off, p->bias ? p->bias[oc] : 0);
        out[oc] = tc_out_s8(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
                            p->act_max);
        if (++m == DM) {
            m = 0;
            ic++;
        }
    }
}

/* One channel of an interior pixel: x points at its input channel, w at its weights (taps 4
 * bytes apart). */
TC_INLINE int32_t tc_dw_one(const int8_t *x, const int8_t *w, int32_t KH, int32_t KW,
                            int32_t xs, int32_t rs, int32_t acc)
{
    int32_t ky, kx;
    if (KH == 3 && KW == 3) {
        for (ky = 0; ky < 3; ky++) {
            acc += x[0] * w[0] + x[xs] * w[4] + x[2 * xs] * w[8];
            x += rs;
            w += 12;
        }
    } else {
        for (ky = 0; ky < KH; ky++) {
            const int8_t *xp = x;
            for (kx = 0; kx < KW; kx++) {
                acc += *xp * *w;
                xp += xs;
                w += 4;
            }
            x += rs;
        }
    }
    return acc;
}

/* ------------------------------------------------------------ fast path selection */

/* TC_DW_FAST: 1 where tc_depthwise_dsp.c provides the four-channel interior block (depth
 * multiplier 1). The kernel below runs tc_dw_block4_fast for every full block of four channels
 * of an interior pixel when it is 1, and its own per-channel loop otherwise. */
#if TC_DSP
#define TC_DW_FAST 1

TC_INLINE void tc_dw_block4_fast(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                                 int32_t oc, int32_t xs, int32_t rs, int8_t *dst)
{
    tc_dwconv_block4_dsp(p, x, w, oc, xs, rs, dst);
}
#else
#define TC_DW_FAST 0

/* Never called (TC_DW_FAST is 0); defined so that every build links, even unoptimized. */
TC_INLINE void tc_dw_block4_fast(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                                 int32_t oc, int32_t xs, int32_t rs, int8_t *dst)
{
    (void)p, (void)x, (void)w, (void)oc, (void)xs, (void)rs, (void)dst;
}
#endif

/* ------------------------------------------------------------------ portable kernel */

static void tc_dwconv_interior(const tc_conv_params_t *p, const int8_t *org, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t KH = p->k_h, KW = p->k_w;
    const int32_t xs = p->dil_w * C, rs = p->dil_h * p->in_w * C;
    int32_t oc = 0, ic = 0, m = 0;
    if (DM == 1) {
        const int8_t *wb = p->weights;
        const int32_t bstride = KH * KW * 4;
        if (TC_DW_FAST) {
            for (; oc + 3 < OC; oc += 4, wb += bstride) {
                tc_dw_block4_fast(p, org + oc, wb, oc, xs, rs, out + oc);
            }
        }
        for (; oc < OC; oc += 4, wb += bstride) {
            const int32_t cn = OC - oc < 4 ? OC - oc : 4;
            int32_t c;
            for (c = 0; c < cn; c++) {
                int32_t acc = tc_dw_one(org + oc + c, wb + c, KH, KW, xs, rs, p->bias_eff[oc + c]);
                out[oc + c] = tc_out_s8(acc, p->mult[oc + c], p->shift[oc + c], p->out_offset,
                                        p->act_min, p->act_max);
            }
        }
        return;
    }
    for (; oc < OC; oc++) {
        int32_t acc = tc_dw_one(org + ic, tc_dw_wblock(p, oc), KH, KW, xs, rs, p->bias_eff[oc]);
        out[oc] = tc_out_s8(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
                            p->act_max);
        if (++m == DM) {
            m = 0;
            ic++;
        }
    }
}

/* DEPTHWISE_CONV_2D with out == in (depth multiplier 1, stride 1, output size == input size):
 * in blocks of (up to) four channels, pixels in raster order. The window of output (y, x)
 * starts at input row y - pad_h, column x - pad_w, so input pixel j of a channel is last read
 * by output pixel j + D - 1, D = pad_h * W + pad_w + 1. Output pixel i of the block is
 * computed into slot i % R of the ring tmp (R = min(D, H * W) slots of four bytes) and stored
 * over input pixel i just before output i + D takes its slot, input i having been read for the
 * last time; the last R are stored after the plane. Interior pixels use the ordinary path's
 * four-channel block (fast path) or per-channel dot products, border pixels its reference
 * formula. */
static void tc_dwconv_inplace(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, HW = H * W;
    const int32_t KH = p->k_h, KW = p->k_w, off = p->in_offset;
    const int32_t xs = p->dil_w * C, rs = p->dil_h * W * C, bstride = KH * KW * 4;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int8_t *const ring = p->tmp, *const ring_end = p->tmp + 4 * R;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, c0;
    tc_interior(p->out_h, 1, p->pad_h, KH, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, 1, p->pad_w, KW, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * HW * C;
        int8_t *dst = out + n * HW * C;
        for (c0 = 0; c0 < C; c0 += 4) {
            const int32_t cn = C - c0 < 4 ? C - c0 : 4;
            const int8_t *wb = p->weights + (c0 >> 2) * bstride;
            int8_t *slot = ring;
            int32_t i = 0, oy, ox, k, c;
            for (oy = 0; oy < H; oy++) {
                const int32_t iy0 = oy - p->pad_h;
                const int inner = oy >= oy_lo && oy < oy_hi;
                for (ox = 0; ox < W; ox++, i++) {
                    const int32_t ix0 = ox - p->pad_w;
                    if (i >= D) {
                        memcpy(dst + (i - D) * C + c0, slot, (size_t)cn);
                    }
                    if (inner && ox >= ox_lo && ox < ox_hi) {
                        const int8_t *x = img + (iy0 * W + ix0) * C + c0;
                        if (TC_DW_FAST && cn == 4) {
                            tc_dw_block4_fast(p, x, wb, c0, xs, rs, slot);
                        } else {
                            for (c = 0; c < cn; c++) {
                                const int32_t acc =
                                    tc_dw_one(x + c, wb + c, KH, KW, xs, rs, p->bias_eff[c0 + c]);
                                slot[c] = tc_out_s8(acc, p->mult[c0 + c], p->shift[c0 + c], oo,
                                                    lo, hi);
                            }
                        }
                    } else {
                        int32_t ky0, ky1, kx0, kx1;
                        const int8_t *x, *w;
                        tc_tap_range(iy0, p->dil_h, KH, H, &ky0, &ky1);
                        tc_tap_range(ix0, p->dil_w, KW, W, &kx0, &kx1);
                        x = img + ((iy0 + ky0 * p->dil_h) * W + ix0 + kx0 * p->dil_w) * C + c0;
                        w = wb + (ky0 * KW + kx0) * 4;
                        for (c = 0; c < cn; c++) {
                            const int32_t acc =
                                tc_dw_taps_sum(x + c, w + c, ky1 - ky0, kx1 - kx0, xs, rs,
                                                 KW * 4, off, p->bias ? p->bias[c0 + c] : 0);
                            slot[c] =
                                tc_out_s8(acc, p->mult[c0 + c], p->shift[c0 + c], oo, lo, hi);
                        }
                    }
                    slot += 4;
                    if (slot == ring_end) {
                        slot = ring;
                    }
                }
            }
            for (k = HW - R; k < HW; k++) { /* the oldest pending output is at slot */
                memcpy(dst + k * C + c0, slot, (size_t)cn);
                slot += 4;
                if (slot == ring_end) {
                    slot = ring;
                }
            }
        }
    }
}

#if TC_DSP && !defined(__ARM_ARCH_6M__)
/* What the 3x3 DSP paths (tc_depthwise_dsp.c) and the Helium path (tc_depthwise_mve.c) take:
 * a 3x3 window, no dilation, depth multiplier 1, and in place only when the layer runs with
 * out == in; they check the rest. */
TC_INLINE int tc_dw3_fits(const tc_conv_params_t *p, const int8_t *in, const int8_t *out)
{
    return p->k_h == 3 && p->k_w == 3 && p->dil_h == 1 && p->dil_w == 1 &&
           p->depth_mult == 1 && (!p->inplace || in == out);
}
#endif

void tc_dwconv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, oy, ox;
#if defined(__ARM_ARCH_6M__)
    tc_dwconv_s8_m0(p, in, out); /* tc_depthwise_m0.c */
    return;
#elif TC_MVE
    if (tc_dw3_fits(p, in, out) && tc_dwconv3x3_mve(p, in, out)) {
        return;
    }
#elif TC_DSP
    if (tc_dw3_fits(p, in, out) && tc_dwconv3x3_dsp(p, in, out)) {
        return;
    }
#endif
    if (p->inplace && in == out) {
        tc_dwconv_inplace(p, in, out);
        return;
    }
    tc_interior(p->out_h, p->stride_h, p->pad_h, p->k_h, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, p->stride_w, p->pad_w, p->k_w, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            int8_t *orow = out + ((n * p->out_h + oy) * p->out_w) * OC;
            const int inner = oy >= oy_lo && oy < oy_hi;
            for (ox = 0; ox < p->out_w; ox++) {
                if (inner && ox >= ox_lo && ox < ox_hi) {
                    const int32_t iy0 = oy * p->stride_h - p->pad_h;
                    const int32_t ix0 = ox * p->stride_w - p->pad_w;
                    tc_dwconv_interior(p, img + (iy0 * W + ix0) * C, orow + ox * OC);
                } else {
                    tc_dwconv_border(p, img, oy, ox, orow + ox * OC);
                }
            }
        }
    }
}

/* 16x8 (tc_dwconv_s16): TFLM's int16 DepthwiseConvPerChannel, int64 accumulation over the taps
 * inside the image, weights in TFLite's [k_h][k_w][out_c] layout. */
void tc_dwconv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, dm = p->depth_mult;
    int32_t b, oy, ox, ic, m, ky, kx;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            tc_tap_range(y0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                tc_tap_range(x0, p->dil_w, p->k_w, p->in_w, &kx0, &kx1);
                for (ic = 0; ic < C; ic++) {
                    for (m = 0; m < dm; m++) {
                        const int32_t oc = ic * dm + m;
                        int64_t acc = p->bias[oc];
                        for (ky = ky0; ky < ky1; ky++) {
                            const int16_t *row = img + (y0 + ky * p->dil_h) * p->in_w * C + ic;
                            const int8_t *w = p->weights + ky * p->k_w * OC + oc;
                            for (kx = kx0; kx < kx1; kx++) {
                                acc += (int32_t)row[(x0 + kx * p->dil_w) * C] * w[kx * OC];
                            }
                        }
                        *out++ = tc_out_s16(acc, p->rm[oc], p->ts[oc], p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}

void tc_dwconv_s8_kxk(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
#if defined(__ARM_ARCH_6M__)
    /* depth multipliers in fours (tc_depthwise_m0.c) */
    if ((p->depth_mult & 3) == 0 && tc_dwconv_dm4_m0(p, in, out)) {
        return;
    }
#elif TC_DSP
#if TC_MVE
    if (tc_dw3_fits(p, in, out) && tc_dwconv3x3_mve(p, in, out)) {
        return;
    }
#endif
    if ((!p->inplace || in == out) && tc_dwconv_kxk_dsp(p, in, out)) {
        return;
    }
#endif
    tc_dwconv_s8(p, in, out);
}

void tc_dwconv_s8_3x3n(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
#if TC_MVE
    if (tc_dw3_fits(p, in, out) && tc_dwconv3x3_mve(p, in, out)) {
        return;
    }
#elif TC_DSP && !defined(__ARM_ARCH_6M__)
    if (tc_dw3_fits(p, in, out) && tc_dwconv3x3n_dsp(p, in, out)) {
        return;
    }
#endif
    tc_dwconv_s8(p, in, out);
}
