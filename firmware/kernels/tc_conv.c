/* tinycompile runtime: int8 convolution family (see tc_conv.h for the conventions).
 *
 * Semantics follow TensorFlow Lite Micro's reference kernels (ConvPerChannel,
 * DepthwiseConvPerChannel, FullyConnected[PerChannel]): int32 accumulation of
 * filter * (input - input_zero_point) over the taps inside the image, plus bias, then
 * MultiplyByQuantizedMultiplier, output zero point and the activation clamp. Written from those
 * semantics; the loop structure is our own:
 *   - the input offset is folded into bias_eff at compile time, so a window lying inside the
 *     image is a pure int8 dot product; border windows either use the reference formula over
 *     their valid taps or (im2col) are copied with the input zero point in the padding, which
 *     then contributes w * (zero_point + in_offset) = 0, like a skipped tap;
 *   - CONV_2D: k x k windows (no groups, small enough) are copied to the im2col scratch, two
 *     pixels at a time, and each output channel pair is one dot product of k_h * k_w * in_c
 *     with four accumulators sharing every load (one pixel per pass on ARMv6-M, short of
 *     registers); 1x1, grouped and large windows read the input in place, a filter row being
 *     one contiguous dot product of k_w * in_c when dilation is 1 and there are no groups;
 *   - DEPTHWISE_CONV_2D: weights re-laid-out in blocks of four channels; with DSP the four
 *     channels of a tap are one word of input and one of weights (SXTB16 + SMLABB/SMLATT),
 *     3x3 filters unrolled;
 *   - requantization is tc_qmath.h's tc_requant (MultiplyByQuantizedMultiplier without 64-bit
 *     divisions and with its two roundings merged exactly);
 *   - in place (params inplace and out == in, see tc_conv.h): pointwise convolutions run
 *     forwards or backwards through a one-pixel temp, stride-1 same-size k x k and depthwise
 *     convolutions through a ring holding each output until its input pixel has been read for
 *     the last time; the per-pixel arithmetic is the ordinary path's.
 *
 * With __ARM_FEATURE_DSP (Cortex-M4/M7) the int8 products use SXTB16 + SMLAD/SMLAxy, which sum
 * the same products in int32 with the same wrap-around, so results are identical; the tests
 * run these builds in QEMU against TFLM.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv.h"
#include "tc_qmath.h"

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TC_CONV_DSP 1
#include <arm_acle.h>

TC_INLINE uint32_t tc_ld32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* unaligned LDR: allowed on M4/M7 */
    return v;
}

/* SXTB16 of the value rotated right by 8 (bytes 1 and 3), in one instruction. */
TC_INLINE uint32_t tc_sxtb16_hi(uint32_t v)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

TC_INLINE uint32_t tc_sxtb16_lo(uint32_t v)
{
    return (uint32_t)__sxtb16(v);
}
#endif

/* ---------------------------------------------------------------------- requantization */

TC_INLINE int8_t tc_conv_out(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                             int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant(acc, mult, shift) + off, lo, hi);
}

/* ------------------------------------------------------------------------ dot products */

/* acc + sum(a[i] * b[i]) */
TC_INLINE int32_t tc_dot_s8(const int8_t *a, const int8_t *b, int32_t n, int32_t acc)
{
#ifdef TC_CONV_DSP
    for (; n >= 4; n -= 4) {
        uint32_t av = tc_ld32(a), bv = tc_ld32(b);
        a += 4;
        b += 4;
        acc = __smlad(__sxtb16(av), __sxtb16(bv), acc);
        acc = __smlad(tc_sxtb16_hi(av), tc_sxtb16_hi(bv), acc);
    }
    for (; n > 0; n--) {
        acc += *a++ * *b++;
    }
#else
    {
        int32_t i;
        a += n;
        b += n;
        for (i = -n; i < 0; i++) {
            acc += a[i] * b[i];
        }
    }
#endif
    return acc;
}

/* Two output channels share the input: a[0] += x.w0, a[1] += x.w1. */
TC_INLINE void tc_dot12_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1];
#ifdef TC_CONV_DSP
    for (; n >= 4; n -= 4) {
        uint32_t xv = tc_ld32(x), v0 = tc_ld32(w0), v1 = tc_ld32(w1);
        uint32_t xe = (uint32_t)__sxtb16(xv), xo = (uint32_t)tc_sxtb16_hi(xv);
        x += 4;
        w0 += 4;
        w1 += 4;
        a0 = __smlad(xe, __sxtb16(v0), a0);
        a0 = __smlad(xo, tc_sxtb16_hi(v0), a0);
        a1 = __smlad(xe, __sxtb16(v1), a1);
        a1 = __smlad(xo, tc_sxtb16_hi(v1), a1);
    }
    for (; n > 0; n--) {
        int32_t xv = *x++;
        a0 += xv * *w0++;
        a1 += xv * *w1++;
    }
#else
    {
        /* one index register counting up to zero serves all three streams (ARMv6-M has
         * only register-offset LDRSB) */
        int32_t i;
        x += n;
        w0 += n;
        w1 += n;
        for (i = -n; i < 0; i++) {
            int32_t xv = x[i];
            a0 += xv * w0[i];
            a1 += xv * w1[i];
        }
    }
#endif
    a[0] = a0;
    a[1] = a1;
}

/* Two inputs x two channels: a[0] += x0.w0, a[1] += x0.w1, a[2] += x1.w0, a[3] += x1.w1. */
TC_INLINE void tc_dot22_s8(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                           const int8_t *w1, int32_t n, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
#ifdef TC_CONV_DSP
    for (; n >= 4; n -= 4) {
        uint32_t p = tc_ld32(x0), q = tc_ld32(x1), u = tc_ld32(w0), v = tc_ld32(w1);
        uint32_t pe = (uint32_t)__sxtb16(p), po = (uint32_t)tc_sxtb16_hi(p);
        uint32_t qe = (uint32_t)__sxtb16(q), qo = (uint32_t)tc_sxtb16_hi(q);
        uint32_t ue = (uint32_t)__sxtb16(u), uo = (uint32_t)tc_sxtb16_hi(u);
        uint32_t ve = (uint32_t)__sxtb16(v), vo = (uint32_t)tc_sxtb16_hi(v);
        x0 += 4;
        x1 += 4;
        w0 += 4;
        w1 += 4;
        a00 = __smlad(pe, ue, a00);
        a00 = __smlad(po, uo, a00);
        a01 = __smlad(pe, ve, a01);
        a01 = __smlad(po, vo, a01);
        a10 = __smlad(qe, ue, a10);
        a10 = __smlad(qo, uo, a10);
        a11 = __smlad(qe, ve, a11);
        a11 = __smlad(qo, vo, a11);
    }
#endif
    for (; n > 0; n--) {
        int32_t p = *x0++, q = *x1++, u = *w0++, v = *w1++;
        a00 += p * u;
        a01 += p * v;
        a10 += q * u;
        a11 += q * v;
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

/* acc + sum((x[i] + off) * w[i]): the border path, identical to TFLM's inner loop.
 * DSP: x + off (in [-255, 255]) is formed in 16-bit lanes with SADD16, then SMLAD. */
TC_INLINE int32_t tc_dot_off_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t off,
                                int32_t acc)
{
#ifdef TC_CONV_DSP
    const uint32_t off2 = ((uint32_t)off << 16) | ((uint32_t)off & 0xFFFFu);
    for (; n >= 4; n -= 4) {
        uint32_t xv = tc_ld32(x), wv = tc_ld32(w);
        uint32_t xe = (uint32_t)__sadd16(tc_sxtb16_lo(xv), off2);
        uint32_t xo = (uint32_t)__sadd16(tc_sxtb16_hi(xv), off2);
        x += 4;
        w += 4;
        acc = __smlad(xe, tc_sxtb16_lo(wv), acc);
        acc = __smlad(xo, tc_sxtb16_hi(wv), acc);
    }
#endif
    for (; n > 0; n--) {
        acc += (*x++ + off) * *w++;
    }
    return acc;
}

/* Range [*lo, *hi) of filter taps t with 0 <= origin + dil * t < size. */
static void tc_tap_range(int32_t origin, int32_t dil, int32_t k, int32_t size, int32_t *lo,
                         int32_t *hi)
{
    int32_t a = 0, b = k;
    if (origin < 0) {
        a = (-origin + dil - 1) / dil;
    }
    if (origin + (k - 1) * dil >= size) {
        b = size - origin > 0 ? (size - origin - 1) / dil + 1 : 0;
    }
    if (b < a) {
        b = a;
    }
    *lo = a;
    *hi = b;
}

/* Outputs o in [*lo, *hi) whose whole window o * stride - pad + [0, (k - 1) * dil] is inside
 * [0, size); *hi >= *lo. */
static void tc_interior(int32_t n_out, int32_t stride, int32_t pad, int32_t k, int32_t dil,
                        int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t a = pad > 0 ? (pad + stride - 1) / stride : 0;
    int32_t last = size - 1 - (k - 1) * dil + pad; /* largest o * stride allowed */
    int32_t b = last < 0 ? 0 : last / stride + 1;
    if (b > n_out) {
        b = n_out;
    }
    if (a > b) {
        a = b;
    }
    *lo = a;
    *hi = b;
}

/* ------------------------------------------------------------------------------ CONV_2D */

/* Per-call constants of a convolution, computed once (no divisions in the pixel loops). */
typedef struct {
    const tc_conv_params_t *p;
    int32_t kc;         /* filter depth: input channels per group */
    int32_t opg;        /* output channels per group */
    int32_t wstride;    /* weights per output channel */
    int32_t rstep;      /* input step between filter rows */
    int32_t xstep;      /* input step between filter columns */
    int32_t pstep;      /* input step between horizontally adjacent output pixels */
    int32_t seg, nseg;  /* a filter row is nseg contiguous dot products of seg values */
} tc_conv_geo_t;

/* One output pixel whose window leaves the image: the reference formula over valid taps. */
static void tc_conv_border(const tc_conv_geo_t *g, const int8_t *img, int32_t oy, int32_t ox,
                           int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t W = p->in_w, C = p->in_c, KW = p->k_w, KC = g->kc;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    const int row_contig = g->nseg == 1;
    int32_t ky0, ky1, kx0, kx1, grp, oc = 0;
    tc_tap_range(iy0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
    tc_tap_range(ix0, p->dil_w, KW, W, &kx0, &kx1);
    for (grp = 0; grp < p->groups; grp++) {
        const int8_t *base = img + (iy0 * W + ix0) * C + grp * KC;
        const int32_t oc_end = oc + g->opg;
        for (; oc < oc_end; oc++) {
            const int8_t *w = p->weights + oc * g->wstride;
            int32_t acc = p->bias ? p->bias[oc] : 0;
            int32_t ky, kx;
            for (ky = ky0; ky < ky1; ky++) {
                const int8_t *row = base + ky * g->rstep;
                const int8_t *wr = w + ky * KW * KC;
                if (row_contig) {
                    acc = tc_dot_off_s8(row + kx0 * C, wr + kx0 * KC, (kx1 - kx0) * C,
                                        p->in_offset, acc);
                } else {
                    for (kx = kx0; kx < kx1; kx++) {
                        acc = tc_dot_off_s8(row + kx * g->xstep, wr + kx * KC, KC, p->in_offset,
                                            acc);
                    }
                }
            }
            out[oc] = tc_conv_out(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
                                  p->act_max);
        }
    }
}

/* Interior output pixels: nx (1 or 2) pixels starting at org (the second pstep later). */
static void tc_conv_interior(const tc_conv_geo_t *g, const int8_t *org, int32_t nx, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t KH = p->k_h, KW = p->k_w, KC = g->kc, OC = p->out_c;
    const int32_t seg = g->seg, nseg = g->nseg, rstep = g->rstep, xstep = g->xstep;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t *out1 = out + OC;
    int32_t grp, oc = 0;

    for (grp = 0; grp < p->groups; grp++) {
        const int8_t *x0 = org + grp * KC;
        const int8_t *x1 = x0 + g->pstep;
        const int32_t oc_end = oc + g->opg;
        for (; oc + 1 < oc_end; oc += 2) {
            const int8_t *w0 = p->weights + oc * g->wstride;
            const int8_t *w1 = w0 + g->wstride;
            int32_t a[4];
            int32_t ky, s;
            a[0] = a[2] = p->bias_eff[oc];
            a[1] = a[3] = p->bias_eff[oc + 1];
            if (nx == 2) {
                for (ky = 0; ky < KH; ky++) {
                    for (s = 0; s < nseg; s++) {
                        const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                        tc_dot22_s8(x0 + xo, x1 + xo, w0 + wo, w1 + wo, seg, a);
                    }
                }
                out1[oc] = tc_conv_out(a[2], p->mult[oc], p->shift[oc], oo, lo, hi);
                out1[oc + 1] = tc_conv_out(a[3], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
            } else {
                for (ky = 0; ky < KH; ky++) {
                    for (s = 0; s < nseg; s++) {
                        const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                        tc_dot12_s8(x0 + xo, w0 + wo, w1 + wo, seg, a);
                    }
                }
            }
            out[oc] = tc_conv_out(a[0], p->mult[oc], p->shift[oc], oo, lo, hi);
            out[oc + 1] = tc_conv_out(a[1], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
        }
        if (oc < oc_end) {
            const int8_t *w = p->weights + oc * g->wstride;
            int32_t a0 = p->bias_eff[oc], a1 = a0;
            int32_t ky, s;
            for (ky = 0; ky < KH; ky++) {
                for (s = 0; s < nseg; s++) {
                    const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                    a0 = tc_dot_s8(x0 + xo, w + wo, seg, a0);
                    if (nx == 2) {
                        a1 = tc_dot_s8(x1 + xo, w + wo, seg, a1);
                    }
                }
            }
            out[oc] = tc_conv_out(a0, p->mult[oc], p->shift[oc], oo, lo, hi);
            if (nx == 2) {
                out1[oc] = tc_conv_out(a1, p->mult[oc], p->shift[oc], oo, lo, hi);
            }
            oc++;
        }
    }
}

/* Copy the window of the output pixel whose top-left input is (iy0, ix0) to col as
 * [k_h][k_w][in_c], with the input zero point at taps outside the image. */
static void tc_im2col(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                      int8_t *col)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, KW = p->k_w, dw = p->dil_w;
    const int zp = (int)(-p->in_offset);
    const int32_t rowlen = KW * C;
    int32_t ky, kx;
    for (ky = 0; ky < p->k_h; ky++, col += rowlen) {
        const int32_t iy = iy0 + ky * p->dil_h;
        const int8_t *row = img + iy * W * C;
        if (iy < 0 || iy >= H) {
            memset(col, zp, (size_t)rowlen);
        } else if (dw == 1 && ix0 >= 0 && ix0 + KW <= W) {
            memcpy(col, row + ix0 * C, (size_t)rowlen);
        } else {
            for (kx = 0; kx < KW; kx++) {
                const int32_t ix = ix0 + kx * dw;
                if (ix < 0 || ix >= W) {
                    memset(col + kx * C, zp, (size_t)C);
                } else {
                    memcpy(col + kx * C, row + ix * C, (size_t)C);
                }
            }
        }
    }
}

/* CONV_2D through im2col (groups == 1): every output pixel, border or not, is one dot product
 * of k_h * k_w * in_c per output channel, two pixels x two channels per pass. */
static void tc_conv_im2col(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * C;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t *col0 = p->col, *col1 = p->col + K;
    int32_t n, oy, ox, oc;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (ox = 0; ox < p->out_w;) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
#if !defined(__ARM_ARCH_6M__)
                const int32_t nx = ox + 1 < p->out_w ? 2 : 1;
#else
                const int32_t nx = 1;
#endif
                tc_im2col(p, img, iy0, ix0, col0);
                if (nx == 2) {
                    tc_im2col(p, img, iy0, ix0 + p->stride_w, col1);
                }
                for (oc = 0; oc + 1 < OC; oc += 2) {
                    const int8_t *w0 = p->weights + oc * K;
                    int32_t a[4];
                    a[0] = a[2] = p->bias_eff[oc];
                    a[1] = a[3] = p->bias_eff[oc + 1];
                    if (nx == 2) {
                        tc_dot22_s8(col0, col1, w0, w0 + K, K, a);
                        out[OC + oc] = tc_conv_out(a[2], p->mult[oc], p->shift[oc], oo, lo, hi);
                        out[OC + oc + 1] =
                            tc_conv_out(a[3], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
                    } else {
                        tc_dot12_s8(col0, w0, w0 + K, K, a);
                    }
                    out[oc] = tc_conv_out(a[0], p->mult[oc], p->shift[oc], oo, lo, hi);
                    out[oc + 1] = tc_conv_out(a[1], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
                }
                if (oc < OC) {
                    const int8_t *w = p->weights + oc * K;
                    out[oc] = tc_conv_out(tc_dot_s8(col0, w, K, p->bias_eff[oc]), p->mult[oc],
                                          p->shift[oc], oo, lo, hi);
                    if (nx == 2) {
                        out[OC + oc] = tc_conv_out(tc_dot_s8(col1, w, K, p->bias_eff[oc]),
                                                   p->mult[oc], p->shift[oc], oo, lo, hi);
                    }
                }
                out += nx * OC;
                ox += nx;
            }
        }
    }
}

static void tc_conv_geo_init(tc_conv_geo_t *g, const tc_conv_params_t *p)
{
    const int32_t W = p->in_w, C = p->in_c, OC = p->out_c;
    g->p = p;
    g->kc = C / p->groups;
    g->opg = OC / p->groups;
    g->wstride = p->k_h * p->k_w * g->kc;
    g->rstep = p->dil_h * W * C;
    g->xstep = p->dil_w * C;
    g->pstep = p->stride_w * C;
    if (p->dil_w == 1 && g->kc == C) {
        g->seg = p->k_w * C;
        g->nseg = 1;
    } else {
        g->seg = g->kc;
        g->nseg = p->k_w;
    }
}

/* 1x1 CONV_2D, stride 1, no groups, with out == in: pixel i (of batches * h * w) reads input
 * bytes [i * C, (i + 1) * C) and writes output bytes [i * OC, (i + 1) * OC) of the same buffer.
 * OC <= C: forwards, so every write lands on input pixels <= i; OC > C: backwards, writes land
 * on input pixels >= i. A pixel (or pair) whose outputs miss every input byte still to be read
 * is computed straight into place with the ordinary interior routine; one whose outputs
 * overlap its own input is computed into tmp (out_c bytes) and copied. */
static void tc_conv_pw_inplace(const tc_conv_geo_t *g, const int8_t *in, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t N = p->batches * p->in_h * p->in_w;
    int8_t *tmp = p->tmp;
    int32_t i;
    if (OC <= C) {
        for (i = 0; i < N;) {
#if !defined(__ARM_ARCH_6M__)
            if (i + 1 < N && (i + 2) * OC <= i * C) { /* both outputs below input pixel i */
                tc_conv_interior(g, in + i * C, 2, out + i * OC);
                i += 2;
                continue;
            }
#endif
            if ((i + 1) * OC <= i * C) {
                tc_conv_interior(g, in + i * C, 1, out + i * OC);
            } else {
                tc_conv_interior(g, in + i * C, 1, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
            i++;
        }
    } else {
        for (i = N - 1; i >= 0;) {
#if !defined(__ARM_ARCH_6M__)
            if (i > 0 && (i - 1) * OC >= (i + 1) * C) { /* pixels i - 1, i above input pixel i */
                tc_conv_interior(g, in + (i - 1) * C, 2, out + (i - 1) * OC);
                i -= 2;
                continue;
            }
#endif
            if (i * OC >= (i + 1) * C) {
                tc_conv_interior(g, in + i * C, 1, out + i * OC);
            } else {
                tc_conv_interior(g, in + i * C, 1, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
            i--;
        }
    }
}

/* k x k CONV_2D with out == in (stride 1, output size == input size, out_c <= in_c, no groups):
 * pixels in raster order, per image. The window of output (y, x) starts at input row y - pad_h,
 * column x - pad_w, so input pixel j is last read by output pixel j + D - 1,
 * D = pad_h * W + pad_w + 1. Output i is computed into slot i % R of the ring tmp (R =
 * min(D, H * W) slots of out_c bytes) and stored just before output i + D takes its slot: its
 * bytes [i * OC, (i + 1) * OC) then only cover input pixels <= i, all read. The last R outputs
 * are stored after the image. Pixels use the ordinary interior / border routines. */
static void tc_conv_ring_inplace(const tc_conv_geo_t *g, const int8_t *in, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, HW = H * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    int8_t *const ring = p->tmp, *const ring_end = p->tmp + R * OC;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, k;
    tc_interior(p->out_h, 1, p->pad_h, p->k_h, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, 1, p->pad_w, p->k_w, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * HW * C;
        int8_t *dst = out + n * HW * OC;
        int8_t *slot = ring;
        int32_t i = 0, oy, ox;
        for (oy = 0; oy < H; oy++) {
            const int inner = oy >= oy_lo && oy < oy_hi;
            for (ox = 0; ox < W; ox++, i++) {
                if (i >= D) {
                    memcpy(dst + (i - D) * OC, slot, (size_t)OC);
                }
                if (inner && ox >= ox_lo && ox < ox_hi) {
                    tc_conv_interior(g, img + ((oy - p->pad_h) * W + ox - p->pad_w) * C, 1, slot);
                } else {
                    tc_conv_border(g, img, oy, ox, slot);
                }
                slot += OC;
                if (slot == ring_end) {
                    slot = ring;
                }
            }
        }
        for (k = HW - R; k < HW; k++) { /* the oldest pending output is at slot */
            memcpy(dst + k * OC, slot, (size_t)OC);
            slot += OC;
            if (slot == ring_end) {
                slot = ring;
            }
        }
    }
}

void tc_conv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    tc_conv_geo_t g;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, oy, ox;
    if (p->inplace && in == out) {
        tc_conv_geo_init(&g, p);
        if (p->k_h == 1 && p->k_w == 1) {
            tc_conv_pw_inplace(&g, in, out);
        } else {
            tc_conv_ring_inplace(&g, in, out);
        }
        return;
    }
    if (p->col != 0 && p->groups == 1) {
        tc_conv_im2col(p, in, out);
        return;
    }
    tc_conv_geo_init(&g, p);
    tc_interior(p->out_h, p->stride_h, p->pad_h, p->k_h, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, p->stride_w, p->pad_w, p->k_w, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            int8_t *orow = out + ((n * p->out_h + oy) * p->out_w) * OC;
            if (oy < oy_lo || oy >= oy_hi) {
                for (ox = 0; ox < p->out_w; ox++) {
                    tc_conv_border(&g, img, oy, ox, orow + ox * OC);
                }
                continue;
            }
            for (ox = 0; ox < ox_lo; ox++) {
                tc_conv_border(&g, img, oy, ox, orow + ox * OC);
            }
            {
                const int8_t *org =
                    img + ((oy * p->stride_h - p->pad_h) * W + ox_lo * p->stride_w - p->pad_w) * C;
#if !defined(__ARM_ARCH_6M__)
                /* two pixels per pass (four accumulators); ARMv6-M has too few registers */
                for (ox = ox_lo; ox + 1 < ox_hi; ox += 2) {
                    tc_conv_interior(&g, org, 2, orow + ox * OC);
                    org += 2 * g.pstep;
                }
#else
                ox = ox_lo;
#endif
                for (; ox < ox_hi; ox++) {
                    tc_conv_interior(&g, org, 1, orow + ox * OC);
                    org += g.pstep;
                }
            }
            for (; ox < p->out_w; ox++) {
                tc_conv_border(&g, img, oy, ox, orow + ox * OC);
            }
        }
    }
}

/* -------------------------------------------------------------------- DEPTHWISE_CONV_2D */

/* Weights come re-laid-out by the compiler in blocks of four output channels:
 * [out_c / 4 (rounded up)][k_h][k_w][4], the last block zero-padded. Within a block the four
 * channels of one tap are one 32-bit word, and successive taps are 4 bytes apart. */
TC_INLINE const int8_t *tc_dw_wblock(const tc_conv_params_t *p, int32_t oc)
{
    return p->weights + (oc >> 2) * (p->k_h * p->k_w * 4) + (oc & 3);
}

/* One channel of a border pixel: acc + sum((x + off) * w) over nky x nkx valid taps, x at the
 * first valid tap of its channel, w at that tap's weight (taps 4 bytes apart, rows wrs). */
TC_INLINE int32_t tc_dw_border_one(const int8_t *x, const int8_t *w, int32_t nky, int32_t nkx,
                                   int32_t xstep, int32_t rstep, int32_t wrs, int32_t off,
                                   int32_t acc)
{
    int32_t ky, kx;
    for (ky = 0; ky < nky; ky++) {
        const int8_t *xp = x, *wp = w;
        for (kx = 0; kx < nkx; kx++) {
            acc += (*xp + off) * *wp;
            xp += xstep;
            wp += 4;
        }
        x += rstep;
        w += wrs;
    }
    return acc;
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
            tc_dw_border_one(org + ic, tc_dw_wblock(p, oc) + (ky0 * KW + kx0) * 4, ky1 - ky0,
                             kx1 - kx0, xstep, rstep, KW * 4, off, p->bias ? p->bias[oc] : 0);
        out[oc] = tc_conv_out(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
                              p->act_max);
        if (++m == DM) {
            m = 0;
            ic++;
        }
    }
}

/* Requantize channels oc .. oc + 3 and store them at dst[0 .. 3]. */
TC_INLINE void tc_dw_store4(const tc_conv_params_t *p, int32_t oc, int32_t a0, int32_t a1,
                            int32_t a2, int32_t a3, int8_t *dst)
{
    const int32_t *mult = p->mult + oc, *shift = p->shift + oc;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t r0 = tc_conv_out(a0, mult[0], shift[0], oo, lo, hi);
    int8_t r1 = tc_conv_out(a1, mult[1], shift[1], oo, lo, hi);
    int8_t r2 = tc_conv_out(a2, mult[2], shift[2], oo, lo, hi);
    int8_t r3 = tc_conv_out(a3, mult[3], shift[3], oo, lo, hi);
    dst[0] = r0;
    dst[1] = r1;
    dst[2] = r2;
    dst[3] = r3;
}

#ifdef TC_CONV_DSP
/* One tap of four channels (depth multiplier 1): a[c] += x[c] * w[c], c = 0..3. */
#define TC_DW_TAP(xp, wp)                                                                   \
    do {                                                                                    \
        uint32_t xv_ = tc_ld32(xp), wv_ = tc_ld32(wp);                                      \
        uint32_t xe_ = tc_sxtb16_lo(xv_), we_ = tc_sxtb16_lo(wv_);                          \
        uint32_t xo_ = tc_sxtb16_hi(xv_), wo_ = tc_sxtb16_hi(wv_);                          \
        a0 = __smlabb(xe_, we_, a0);                                                        \
        a2 = __smlatt(xe_, we_, a2);                                                        \
        a1 = __smlabb(xo_, wo_, a1);                                                        \
        a3 = __smlatt(xo_, wo_, a3);                                                        \
    } while (0)

/* Four channels oc .. oc + 3 of an interior pixel, depth multiplier 1 (DSP: one word per
 * tap), stored at dst[0 .. 3]. */
static void tc_dw_block4(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                         int32_t oc, int32_t xs, int32_t rs, int8_t *dst)
{
    const int32_t KH = p->k_h, KW = p->k_w;
    int32_t a0 = p->bias_eff[oc], a1 = p->bias_eff[oc + 1];
    int32_t a2 = p->bias_eff[oc + 2], a3 = p->bias_eff[oc + 3];
    int32_t ky, kx;
    if (KH == 3 && KW == 3) {
        for (ky = 0; ky < 3; ky++) {
            TC_DW_TAP(x, w);
            TC_DW_TAP(x + xs, w + 4);
            TC_DW_TAP(x + 2 * xs, w + 8);
            x += rs;
            w += 12;
        }
    } else {
        for (ky = 0; ky < KH; ky++) {
            const int8_t *xp = x;
            for (kx = 0; kx < KW; kx++) {
                TC_DW_TAP(xp, w);
                xp += xs;
                w += 4;
            }
            x += rs;
        }
    }
    tc_dw_store4(p, oc, a0, a1, a2, a3, dst);
}
#endif

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

static void tc_dwconv_interior(const tc_conv_params_t *p, const int8_t *org, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t KH = p->k_h, KW = p->k_w;
    const int32_t xs = p->dil_w * C, rs = p->dil_h * p->in_w * C;
    int32_t oc = 0, ic = 0, m = 0;
    if (DM == 1) {
        const int8_t *wb = p->weights;
        const int32_t bstride = KH * KW * 4;
#ifdef TC_CONV_DSP
        for (; oc + 3 < OC; oc += 4, wb += bstride) {
            tc_dw_block4(p, org + oc, wb, oc, xs, rs, out + oc);
        }
#endif
        for (; oc < OC; oc += 4, wb += bstride) {
            const int32_t cn = OC - oc < 4 ? OC - oc : 4;
            int32_t c;
            for (c = 0; c < cn; c++) {
                int32_t acc = tc_dw_one(org + oc + c, wb + c, KH, KW, xs, rs, p->bias_eff[oc + c]);
                out[oc + c] = tc_conv_out(acc, p->mult[oc + c], p->shift[oc + c], p->out_offset,
                                          p->act_min, p->act_max);
            }
        }
        return;
    }
    for (; oc < OC; oc++) {
        int32_t acc = tc_dw_one(org + ic, tc_dw_wblock(p, oc), KH, KW, xs, rs, p->bias_eff[oc]);
        out[oc] = tc_conv_out(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
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
 * four-channel block (DSP) or per-channel dot products, border pixels its reference formula. */
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
#ifdef TC_CONV_DSP
                        if (cn == 4) {
                            tc_dw_block4(p, x, wb, c0, xs, rs, slot);
                        } else
#endif
                        {
                            for (c = 0; c < cn; c++) {
                                const int32_t acc =
                                    tc_dw_one(x + c, wb + c, KH, KW, xs, rs, p->bias_eff[c0 + c]);
                                slot[c] = tc_conv_out(acc, p->mult[c0 + c], p->shift[c0 + c], oo,
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
                                tc_dw_border_one(x + c, w + c, ky1 - ky0, kx1 - kx0, xs, rs,
                                                 KW * 4, off, p->bias ? p->bias[c0 + c] : 0);
                            slot[c] =
                                tc_conv_out(acc, p->mult[c0 + c], p->shift[c0 + c], oo, lo, hi);
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

void tc_dwconv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, oy, ox;
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

/* ---------------------------------------------------------------------- FULLY_CONNECTED */

void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, qs = p->per_channel ? 1 : 0;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int32_t b = 0, oc;
    for (; b + 1 < p->batches; b += 2) {
        const int8_t *x0 = in + b * D;
        int8_t *o0 = out + b * OC;
        for (oc = 0; oc + 1 < OC; oc += 2) {
            const int8_t *w0 = p->weights + oc * D;
            int32_t a[4];
            a[0] = a[2] = p->bias_eff[oc];
            a[1] = a[3] = p->bias_eff[oc + 1];
            tc_dot22_s8(x0, x0 + D, w0, w0 + D, D, a);
            o0[oc] = tc_conv_out(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[oc + 1] =
                tc_conv_out(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
            o0[OC + oc] = tc_conv_out(a[2], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc + 1] =
                tc_conv_out(a[3], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            const int8_t *w = p->weights + oc * D;
            o0[oc] = tc_conv_out(tc_dot_s8(x0, w, D, p->bias_eff[oc]), p->mult[oc * qs],
                                 p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc] = tc_conv_out(tc_dot_s8(x0 + D, w, D, p->bias_eff[oc]),
                                      p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
    for (; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
        for (oc = 0; oc + 1 < OC; oc += 2) {
            const int8_t *w0 = p->weights + oc * D;
            int32_t a[2];
            a[0] = p->bias_eff[oc];
            a[1] = p->bias_eff[oc + 1];
            tc_dot12_s8(x, w0, w0 + D, D, a);
            o[oc] = tc_conv_out(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o[oc + 1] =
                tc_conv_out(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            o[oc] = tc_conv_out(tc_dot_s8(x, p->weights + oc * D, D, p->bias_eff[oc]),
                                p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
}
