/* tinycompile runtime: DEPTHWISE_CONV_2D, 16x8 fast path (tc_dwconv_s16q; layout and arithmetic
 * in tc_s16.h).
 *
 * TFLM's int16 DepthwiseConvPerChannel for the layers the compiler proved exact in int32
 * (tinycompile/ops/s16_fast.py): bias + x . w summed in int32 over the taps inside the image,
 * the requantization with one SMMLA (tc_s16_util.h). Dilation 1 (the others keep
 * tc_dwconv_s16 in tc_depthwise.c). Per output pixel the valid tap range is computed once, then:
 *   - Cortex-M4/M7 (TC_DSP), depth multipliers 1, 2 and multiples of 4: four output channels
 *     at a time, per tap one word of weights (SXTB16 splits it into channels 0, 1 and 2, 3: the
 *     layout stores them 0, 2, 1, 3) and the activations they need (two words, one word, one
 *     halfword), SMLAxy into four accumulators (tc_dw16_block4);
 *   - elsewhere, other depth multipliers and the last out_c % 4 channels: per channel, the
 *     taps' activations and weights by pointer steps.
 */
#include <stdint.h>

#include "tc_kernel_util.h"
#include "tc_s16.h"
#include "tc_s16_util.h"

/* One output channel oc (input channel ic) over taps [ky0, ky1) x [kx0, kx1); xw at the input
 * of tap (ky0, kx0), channel ic; w at the weight of that tap, channel oc. */
TC_INLINE int32_t tc_dw16_chan(const int16_t *xw, const int8_t *w, int32_t nky, int32_t nkx,
                               int32_t xs, int32_t xrs, int32_t ws, int32_t wrs, int32_t acc)
{
    int32_t ky, kx;
    for (ky = 0; ky < nky; ky++) {
        const int16_t *xp = xw;
        const int8_t *wp = w;
        for (kx = 0; kx < nkx; kx++) {
            acc += *xp * *wp;
            xp += xs;
            wp += ws;
        }
        xw += xrs;
        w += wrs;
    }
    return acc;
}

#if TC_DSP
/* Output channels oc .. oc + 3 of one pixel over nky x nkx taps, x at the input of the first
 * tap (its channel for oc), w at that tap's weight block of oc. mode 1: depth multiplier 1 (two
 * words of four input channels per tap); 2: input channels oc / 2 and oc / 2 + 1, one word; 4:
 * a multiplier divisible by 4 (one input channel, one halfword). SMLAxy picks the halves. */
TC_INLINE void tc_dw16_block4(const tc_s16q_params_t *p, const int16_t *x, const int8_t *w,
                              int32_t nky, int32_t nkx, int32_t oc, const int32_t mode,
                              int16_t *o)
{
    const int32_t C = p->in_c, nb4 = ((p->out_c + 3) >> 2) * 4;
    const int32_t xrs = p->in_w * C, wrs = p->k_w * nb4, lo = p->act_min, hi = p->act_max;
    const int32_t *rq = p->rq + 4 * oc;
    int32_t a0 = rq[0], a1 = rq[4], a2 = rq[8], a3 = rq[12], ky, kx;
    for (ky = 0; ky < nky; ky++, x += xrs, w += wrs) {
        const int16_t *xp = x;
        const int8_t *wp = w;
        for (kx = 0; kx < nkx; kx++, xp += C, wp += nb4) {
            const uint32_t wv = *(const uint32_t *)(const void *)wp;
            const uint32_t w01 = tc_sxtb16_lo(wv), w23 = tc_sxtb16_hi(wv);
            if (mode == 1) {
                const uint32_t x01 = tc_ld32((const int8_t *)xp);
                const uint32_t x23 = tc_ld32((const int8_t *)(xp + 2));
                a0 = __smlabb(x01, w01, a0);
                a1 = __smlatt(x01, w01, a1);
                a2 = __smlabb(x23, w23, a2);
                a3 = __smlatt(x23, w23, a3);
            } else if (mode == 2) {
                const uint32_t x01 = tc_ld32((const int8_t *)xp);
                a0 = __smlabb(x01, w01, a0);
                a1 = __smlabt(x01, w01, a1);
                a2 = __smlatb(x01, w23, a2);
                a3 = __smlatt(x01, w23, a3);
            } else {
                const int32_t x0 = *xp;
                a0 = __smlabb(x0, w01, a0);
                a1 = __smlabt(x0, w01, a1);
                a2 = __smlabb(x0, w23, a2);
                a3 = __smlabt(x0, w23, a3);
            }
        }
    }
    o[0] = tc_s16_out(a0, rq, lo, hi);
    o[1] = tc_s16_out(a1, rq + 4, lo, hi);
    o[2] = tc_s16_out(a2, rq + 8, lo, hi);
    o[3] = tc_s16_out(a3, rq + 12, lo, hi);
}
#endif

void tc_dwconv_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, dm = p->depth_mult, W = p->in_w;
    const int32_t nb4 = ((OC + 3) >> 2) * 4; /* weight bytes per tap */
    const int8_t *wt = (const int8_t *)p->weights;
    const int32_t lo = p->act_min, hi = p->act_max;
    int32_t b, oy, ox, oc;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            tc_tap_range(y0, 1, p->k_h, p->in_h, &ky0, &ky1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1, nky, nkx;
                const int16_t *xw;
                const int8_t *ww;
                tc_tap_range(x0, 1, p->k_w, W, &kx0, &kx1);
                nky = ky1 - ky0;
                nkx = kx1 - kx0;
                xw = img + ((y0 + ky0) * W + x0 + kx0) * C;
                ww = wt + (ky0 * p->k_w + kx0) * nb4;
                oc = 0;
#if TC_DSP
                if (dm == 1) {
                    for (; oc + 4 <= OC; oc += 4) {
                        tc_dw16_block4(p, xw + oc, ww + oc, nky, nkx, oc, 1, out + oc);
                    }
                } else if (dm == 2) {
                    for (; oc + 4 <= OC; oc += 4) {
                        tc_dw16_block4(p, xw + (oc >> 1), ww + oc, nky, nkx, oc, 2, out + oc);
                    }
                } else if ((dm & 3) == 0) {
                    for (; oc + 4 <= OC; oc += 4) {
                        tc_dw16_block4(p, xw + oc / dm, ww + oc, nky, nkx, oc, 4, out + oc);
                    }
                }
#endif
                {
                    int32_t ic = 0, m = 0; /* oc = ic * dm + m */
                    if (oc > 0) {          /* after the DSP blocks */
                        ic = oc / dm;
                        m = oc - ic * dm;
                    }
                    for (; oc < OC; oc++) {
                        const int32_t *rq = p->rq + 4 * oc;
                        const int8_t *w = ww + (oc & ~3) + TC_S16_POS(oc & 3);
                        const int32_t acc = tc_dw16_chan(xw + ic, w, nky, nkx, C, W * C, nb4,
                                                         p->k_w * nb4, rq[0]);
                        out[oc] = tc_s16_out(acc, rq, lo, hi);
                        if (++m == dm) {
                            m = 0;
                            ic++;
                        }
                    }
                }
                out += OC;
            }
        }
    }
}
