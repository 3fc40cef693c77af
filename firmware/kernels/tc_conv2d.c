/* tinycompile runtime: CONV_2D, int8 (tc_conv_s8; parameters and conventions in tc_conv2d.h).
 *
 * Matches TensorFlow Lite Micro's reference ConvPerChannel (reference/integer_ops/conv.h):
 * int32 accumulation of filter * (input - input_zero_point) over the taps inside the image, plus
 * bias, then MultiplyByQuantizedMultiplier (tc_requant), output zero point and the activation
 * clamp. Written from those semantics; the loop structure is our own:
 *   - the input offset is folded into bias_eff at compile time, so a window lying inside the
 *     image is a pure int8 dot product; border windows use the reference formula over their
 *     valid taps, or (im2col) are copied with the input zero point in the padding, which then
 *     contributes w * (zero_point + in_offset) = 0, like a skipped tap;
 *   - k x k windows (no groups, im2col scratch given) are copied two pixels at a time, and each
 *     output channel pair is one dot product of k_h * k_w * in_c with four accumulators sharing
 *     every load; 1x1, grouped and large windows read the input in place, a filter row being
 *     one contiguous dot product of k_w * in_c when dilation is 1 and there are no groups;
 *   - in place (params inplace and out == in, see tc_conv2d.h): pointwise convolutions run
 *     forwards or backwards through a one-pixel temp, stride-1 same-size k x k convolutions
 *     through a ring holding each output until its input pixel has been read for the last
 *     time; the per-pixel arithmetic is the ordinary path's.
 *
 * Fast paths: the dot products (tc_kernel_util.h) have a DSP variant (SXTB16 + SMLAD, Cortex-M4
 * and M7; same int32 sums, identical results), shared with FULLY_CONNECTED. Two output pixels
 * per pass everywhere but ARMv6-M (too few registers for four accumulators there). On DSP cores
 * also: a lone pixel takes four channels per pass (tc_dot14_s8 / tc_dot14r_s8); pointwise
 * layers run their own loops (tc_conv_pw_run for stride 1, channel pairs outermost;
 * tc_conv_pw_strided_row for stride s >= 2, channel pairs (oc, oc + s)); requantization uses
 * tc_out_s8_dsp (tc_requant's arithmetic, fewer instructions).
 *
 * Without an im2col scratch (the planner refused it at the SRAM peak) a k x k layer with a
 * small window (k_h * k_w * in_c <= TC_CONV_OUTCOL_MAX_K) copies its windows into the tail of
 * its own output, whose last pixels are computed by the direct loops once everything else is
 * done: no memory beyond the plan's.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if TC_DSP
#define TC_OUT tc_out_s8_dsp
#else
#define TC_OUT tc_out_s8
#endif

/* 1: the interior and im2col loops compute two output pixels per pass (four accumulators per
 * channel pair); 0 on ARMv6-M, which is short of registers for that (one pixel per pass). */
#if defined(__ARM_ARCH_6M__)
#define TC_CONV_PAIRS 0
#else
#define TC_CONV_PAIRS 1
#endif

/* Largest window (k_h * k_w * in_c) copied into the output's tail when no im2col scratch is
 * given (see tc_conv_s8). */
#define TC_CONV_OUTCOL_MAX_K 64

/* Smallest window (k_h * k_w * in_c) worth the int16 column GEMM (tc_conv2d_dsp.c) out of
 * place: below it the per-channel-pair overhead outweighs the saved sign extensions and the
 * int8 paths are faster; nor is it worth it for windows over in_c % 4 != 0 channels (copied
 * byte by byte) feeding fewer than 16 output channels (measured in QEMU on the layers of
 * MobileNet, DS-CNN and ResNet-8). In place a granted column buffer is always used (it also
 * spares the one-pixel temp). */
#define TC_COL16_MIN_K 16

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
            out[oc] = TC_OUT(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min,
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
        for (; TC_DSP && nx == 1 && oc + 3 < oc_end; oc += 4) {
            const int8_t *w0 = p->weights + oc * g->wstride;
            int32_t a[4], ky, s, k;
            for (k = 0; k < 4; k++) {
                a[k] = p->bias_eff[oc + k];
            }
            if (nseg == 1) { /* rows of k_w * in_c contiguous values */
                tc_dot14r_s8(x0, rstep, w0, g->wstride, seg, KH, a);
            } else {
                for (ky = 0; ky < KH; ky++) {
                    for (s = 0; s < nseg; s++) {
                        const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                        tc_dot14_s8(x0 + xo, w0 + wo, g->wstride, seg, a);
                    }
                }
            }
            for (k = 0; k < 4; k++) {
                out[oc + k] = TC_OUT(a[k], p->mult[oc + k], p->shift[oc + k], oo, lo, hi);
            }
        }
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
                out1[oc] = TC_OUT(a[2], p->mult[oc], p->shift[oc], oo, lo, hi);
                out1[oc + 1] = TC_OUT(a[3], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
            } else {
                for (ky = 0; ky < KH; ky++) {
                    for (s = 0; s < nseg; s++) {
                        const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                        tc_dot12_s8(x0 + xo, w0 + wo, w1 + wo, seg, a);
                    }
                }
            }
            out[oc] = TC_OUT(a[0], p->mult[oc], p->shift[oc], oo, lo, hi);
            out[oc + 1] = TC_OUT(a[1], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
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
            out[oc] = TC_OUT(a0, p->mult[oc], p->shift[oc], oo, lo, hi);
            if (nx == 2) {
                out1[oc] = TC_OUT(a1, p->mult[oc], p->shift[oc], oo, lo, hi);
            }
            oc++;
        }
    }
}

#if TC_DSP
/* Pointwise (1x1, stride 1, no groups) over npix consecutive pixels: in holds npix pixels of
 * in_c bytes, out receives npix pixels of out_c bytes (disjoint, or the in-place callers' own
 * guarantees). Two pixels x two channels per pass share every load (tc_dot22_s8: the second
 * pixel and the second channel are both in_c bytes on); a lone pixel takes four channels per
 * pass. No window bookkeeping: this is the loop the 1x1 layers of DS-CNN / MobileNet live in. */
static void tc_conv_pw_run(const tc_conv_params_t *p, const int8_t *in, int32_t npix,
                           int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int8_t *const wts = p->weights;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t npair = npix & ~1;
    int32_t i = npair, oc;
    /* channel pairs outermost: their weights, bias and requantization stay put while the
     * pixel pairs stream by (out does not overlap in, or npix <= 2) */
    for (oc = 0; npair > 0 && oc + 1 < OC; oc += 2) {
        const int8_t *const w = wts + oc * C;
        const int32_t b0 = be[oc], b1 = be[oc + 1];
        const int32_t m0 = mu[oc], m1 = mu[oc + 1], s0 = sh[oc], s1 = sh[oc + 1];
        const int8_t *x = in;
        int8_t *o = out + oc;
        for (i = 0; i < npair; i += 2) {
            int32_t a[4];
            a[0] = a[2] = b0;
            a[1] = a[3] = b1;
            if ((C & 7) == 0) {
                tc_dot22_x8_s8(x, w, C, C, a);
            } else {
                tc_dot22_s8(x, x + C, w, w + C, C, a);
            }
            o[0] = TC_OUT(a[0], m0, s0, oo, lo, hi);
            o[1] = TC_OUT(a[1], m1, s1, oo, lo, hi);
            o[OC] = TC_OUT(a[2], m0, s0, oo, lo, hi);
            o[OC + 1] = TC_OUT(a[3], m1, s1, oo, lo, hi);
            x += 2 * C;
            o += 2 * OC;
        }
    }
    if (npair > 0 && oc < OC) {
        const int8_t *const w = wts + oc * C;
        for (i = 0; i < npair; i++) {
            out[i * OC + oc] =
                TC_OUT(tc_dot_s8(in + i * C, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
        }
    }
    if (i < npix) {
        const int8_t *x = in + i * C;
        int8_t *o = out + i * OC;
        for (oc = 0; oc + 3 < OC; oc += 4) {
            int32_t a[4], k;
            for (k = 0; k < 4; k++) {
                a[k] = be[oc + k];
            }
            tc_dot14_s8(x, wts + oc * C, C, C, a);
            for (k = 0; k < 4; k++) {
                o[oc + k] = TC_OUT(a[k], mu[oc + k], sh[oc + k], oo, lo, hi);
            }
        }
        for (; oc < OC; oc++) {
            o[oc] = TC_OUT(tc_dot_s8(x, wts + oc * C, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
        }
    }
}

/* Pointwise with stride s >= 2 (1x1, no groups), one output row of nx pixels from x (input
 * pixels s * in_c apart): pixel pairs x channel pairs (oc, oc + s), whose weights are s * in_c
 * apart too, so tc_dot22_s8 runs its assembly loop with one offset for both. Channels beyond
 * the last whole block of 2s and a lone last pixel take plain dot products. */
static void tc_conv_pw_strided_row(const tc_conv_params_t *p, const int8_t *x, int32_t nx,
                                   int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, S = p->stride_w, d = S * C;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t oc_blk = OC - OC % (2 * S);
    int32_t i, oc, j;
    for (i = 0; i + 1 < nx; i += 2) {
        const int8_t *xi = x + i * d;
        int8_t *o = out + i * OC;
        for (oc = 0; oc < oc_blk; oc += 2 * S) {
            for (j = oc; j < oc + S; j++) {
                const int8_t *w = p->weights + j * C;
                int32_t a[4];
                a[0] = a[2] = be[j];
                a[1] = a[3] = be[j + S];
                tc_dot22_s8(xi, xi + d, w, w + d, C, a);
                o[j] = TC_OUT(a[0], mu[j], sh[j], oo, lo, hi);
                o[j + S] = TC_OUT(a[1], mu[j + S], sh[j + S], oo, lo, hi);
                o[OC + j] = TC_OUT(a[2], mu[j], sh[j], oo, lo, hi);
                o[OC + j + S] = TC_OUT(a[3], mu[j + S], sh[j + S], oo, lo, hi);
            }
        }
        for (; oc < OC; oc++) {
            const int8_t *w = p->weights + oc * C;
            o[oc] = TC_OUT(tc_dot_s8(xi, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
            o[OC + oc] = TC_OUT(tc_dot_s8(xi + d, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
        }
    }
    if (i < nx) {
        tc_conv_pw_run(p, x + i * d, 1, out + i * OC);
    }
}
#endif

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
            tc_copy_s8(col, row + ix0 * C, rowlen);
        } else {
            for (kx = 0; kx < KW; kx++) {
                const int32_t ix = ix0 + kx * dw;
                if (ix < 0 || ix >= W) {
                    memset(col + kx * C, zp, (size_t)C);
                } else {
                    tc_copy_s8(col + kx * C, row + ix * C, C);
                }
            }
        }
    }
}

#if TC_DSP
/* Largest window (k_h * k_w * in_c) whose border copies go to the stack (tc_conv_edge). */
#define TC_CONV_EDGE_MAX_K 576

/* A border pixel on DSP cores (groups == 1, small windows): its window is copied to a stack
 * buffer with the zero point in the padding (those taps then add w * (zero_point + in_offset)
 * = 0, so bias_eff applies) and run as one contiguous dot product, four channels per pass,
 * instead of the reference formula channel by channel over short rows. The buffer is stack,
 * not arena: TC_CONV_EDGE_MAX_K bytes at most, within every board's stack reserve. */
static void tc_conv_edge(const tc_conv_geo_t *g, const int8_t *img, int32_t oy, int32_t ox,
                         int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t K = g->wstride, OC = p->out_c;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    uint32_t buf[TC_CONV_EDGE_MAX_K / 4];
    int8_t *const win = (int8_t *)buf;
    int32_t oc = 0, k;
    if (p->groups != 1 || K > TC_CONV_EDGE_MAX_K) {
        tc_conv_border(g, img, oy, ox, out);
        return;
    }
    tc_im2col(p, img, oy * p->stride_h - p->pad_h, ox * p->stride_w - p->pad_w, win);
    for (; oc + 3 < OC; oc += 4) {
        int32_t a[4];
        for (k = 0; k < 4; k++) {
            a[k] = p->bias_eff[oc + k];
        }
        tc_dot14_s8(win, p->weights + oc * K, K, K, a);
        for (k = 0; k < 4; k++) {
            out[oc + k] = TC_OUT(a[k], p->mult[oc + k], p->shift[oc + k], oo, lo, hi);
        }
    }
    for (; oc < OC; oc++) {
        out[oc] = TC_OUT(tc_dot_s8(win, p->weights + oc * K, K, p->bias_eff[oc]), p->mult[oc],
                         p->shift[oc], oo, lo, hi);
    }
}
#else
#define tc_conv_edge tc_conv_border
#endif

/* One output pixel (n, oy, ox) by the direct loops: interior or border. */
static void tc_conv_pixel(const tc_conv_geo_t *g, const int8_t *in, int32_t n, int32_t oy,
                          int32_t ox, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c;
    const int8_t *img = in + n * H * W * C;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    int32_t ky0, ky1, kx0, kx1;
    tc_tap_range(iy0, p->dil_h, p->k_h, H, &ky0, &ky1);
    tc_tap_range(ix0, p->dil_w, p->k_w, W, &kx0, &kx1);
    if (ky0 == 0 && ky1 == p->k_h && kx0 == 0 && kx1 == p->k_w) {
        tc_conv_interior(g, img + (iy0 * W + ix0) * C, 1, out);
    } else {
        tc_conv_edge(g, img, oy, ox, out);
    }
}

/* CONV_2D through im2col (groups == 1): every output pixel, border or not, is one dot product
 * of k_h * k_w * in_c per output channel, two pixels x two channels per pass (DSP cores: one
 * pixel x four channels when a pixel is alone). col holds 2 * k_h * k_w * in_c bytes. Pixels
 * (counted over batches, rows and columns) from lim on are left to the direct loops: the
 * caller may have placed col over their output bytes (see tc_conv_s8). */
static void tc_conv_im2col(const tc_conv_geo_t *g, const int8_t *in, int8_t *out, int8_t *col,
                           int32_t lim)
{
    const tc_conv_params_t *p = g->p;
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * C;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t *col0 = col, *col1 = col + K;
    int32_t n, oy, ox, oc, idx = 0;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (ox = 0; ox < p->out_w;) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                const int32_t nx = TC_CONV_PAIRS && ox + 1 < p->out_w && idx + 1 < lim ? 2 : 1;
                if (idx >= lim) {
                    tc_conv_pixel(g, in, n, oy, ox, out);
                    out += OC;
                    ox++;
                    idx++;
                    continue;
                }
                tc_im2col(p, img, iy0, ix0, col0);
                if (nx == 2) {
                    tc_im2col(p, img, iy0, ix0 + p->stride_w, col1);
                }
                for (oc = 0; TC_DSP && nx == 1 && oc + 3 < OC; oc += 4) {
                    int32_t a[4], k;
                    for (k = 0; k < 4; k++) {
                        a[k] = p->bias_eff[oc + k];
                    }
                    tc_dot14_s8(col0, p->weights + oc * K, K, K, a);
                    for (k = 0; k < 4; k++) {
                        out[oc + k] =
                            TC_OUT(a[k], p->mult[oc + k], p->shift[oc + k], oo, lo, hi);
                    }
                }
                for (; oc + 1 < OC; oc += 2) {
                    const int8_t *w0 = p->weights + oc * K;
                    int32_t a[4];
                    a[0] = a[2] = p->bias_eff[oc];
                    a[1] = a[3] = p->bias_eff[oc + 1];
                    if (nx == 2) {
#if TC_DSP
                        if ((K & 7) == 0) {
                            tc_dot22_x8_s8(col0, w0, K, K, a);
                        } else {
                            tc_dot22_s8(col0, col1, w0, w0 + K, K, a);
                        }
#else
                        tc_dot22_s8(col0, col1, w0, w0 + K, K, a);
#endif
                        out[OC + oc] = TC_OUT(a[2], p->mult[oc], p->shift[oc], oo, lo, hi);
                        out[OC + oc + 1] =
                            TC_OUT(a[3], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
                    } else {
                        tc_dot12_s8(col0, w0, w0 + K, K, a);
                    }
                    out[oc] = TC_OUT(a[0], p->mult[oc], p->shift[oc], oo, lo, hi);
                    out[oc + 1] = TC_OUT(a[1], p->mult[oc + 1], p->shift[oc + 1], oo, lo, hi);
                }
                if (oc < OC) {
                    const int8_t *w = p->weights + oc * K;
                    out[oc] = TC_OUT(tc_dot_s8(col0, w, K, p->bias_eff[oc]), p->mult[oc],
                                        p->shift[oc], oo, lo, hi);
                    if (nx == 2) {
                        out[OC + oc] = TC_OUT(tc_dot_s8(col1, w, K, p->bias_eff[oc]),
                                                 p->mult[oc], p->shift[oc], oo, lo, hi);
                    }
                }
                out += nx * OC;
                ox += nx;
                idx += nx;
            }
        }
    }
}

#if TC_DSP
/* Next output pixel in raster order over batches, rows and columns. */
TC_INLINE void tc_conv_next(const tc_conv_params_t *p, int32_t *n, int32_t *oy, int32_t *ox)
{
    if (++*ox == p->out_w) {
        *ox = 0;
        if (++*oy == p->out_h) {
            *oy = 0;
            ++*n;
        }
    }
}

/* CONV_2D through the int16 column GEMM (tc_conv2d_dsp.c), groups == 1, any window (1x1
 * included): output pixels (counted over batches, rows and columns) two at a time, each pair's
 * windows copied to col, then every output channel of both. Pixels from lim on are left to the
 * direct loops: the caller may have put col over their output bytes (see tc_conv_s8). */
static void tc_conv_col16(const tc_conv_geo_t *g, const int8_t *in, int8_t *out, int16_t *col,
                          int32_t lim)
{
    const tc_conv_params_t *p = g->p;
    const int32_t HWC = p->in_h * p->in_w * p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * p->in_c, npix = p->batches * p->out_h * p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w, ph = p->pad_h, pw = p->pad_w;
    int32_t idx = 0, n = 0, oy = 0, ox = 0;
    for (; idx < npix && idx < lim; idx += 2) {
        int8_t *const o0 = out + idx * OC;
        tc_col16_window(p, in + n * HWC, oy * sh - ph, ox * sw - pw, col, 0);
        tc_conv_next(p, &n, &oy, &ox);
        if (idx + 1 < npix && idx + 1 < lim) {
            tc_col16_window(p, in + n * HWC, oy * sh - ph, ox * sw - pw, col, 1);
            tc_conv_next(p, &n, &oy, &ox);
            tc_conv_col16_pair(p, col, K, o0, o0 + OC);
        } else {
            tc_conv_col16_pair(p, col, K, o0, 0);
            idx--; /* one pixel done */
        }
    }
    for (; idx < npix; idx++) {
        tc_conv_pixel(g, in, n, oy, ox, out + idx * OC);
        tc_conv_next(p, &n, &oy, &ox);
    }
}

/* 1x1 CONV_2D, stride 1, no groups, in place (input d = in - out bytes from the output, see
 * tc_pw_forward), with a column buffer: pixels i, i + 1 are copied to col first, so their own
 * input bytes are free and both outputs go straight to their place (forwards: outputs never
 * reach input pixels > i + 1; backwards, pairs (i - 1, i): never input pixels < i - 1). No
 * temp. */
static void tc_conv_pw_inplace_col16(const tc_conv_params_t *p, const int8_t *in, int8_t *out,
                                     int16_t *col)
{
    const int32_t C = p->in_c, OC = p->out_c, N = p->batches * p->in_h * p->in_w;
    int32_t i;
    if (tc_pw_forward((int32_t)(in - out), N, C, OC)) {
        for (i = 0; i < N; i += 2) {
            const int two = i + 1 < N;
            tc_col16_pixels(in + i * C, C, col, 0);
            if (two) {
                tc_col16_pixels(in + (i + 1) * C, C, col, 1);
            }
            tc_conv_col16_pair(p, col, C, out + i * OC, two ? out + (i + 1) * OC : 0);
        }
    } else {
        for (i = N - 1; i >= 0; i -= 2) {
            if (i > 0) {
                tc_col16_pixels(in + (i - 1) * C, C, col, 0);
                tc_col16_pixels(in + i * C, C, col, 1);
                tc_conv_col16_pair(p, col, C, out + (i - 1) * OC, out + i * OC);
            } else {
                tc_col16_pixels(in, C, col, 0);
                tc_conv_col16_pair(p, col, C, out, 0);
            }
        }
    }
}

/* The k x k in-place ring (tc_conv_ring_inplace) with a column buffer: outputs i, i + 1 are
 * computed together once both windows are in col; their slots' pending outputs i - D and
 * i + 1 - D are stored first (input pixel i + 1 - D was last read by output i's window, which
 * col now holds), so the ring keeps its R = min(D, H * W) slots. */
static void tc_conv_ring_col16(const tc_conv_params_t *p, int8_t *buf, int16_t *col)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, HW = H * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    const int32_t K = p->k_h * p->k_w * C;
    int8_t *const ring = p->tmp;
    int32_t n, i, k;
    for (n = 0; n < p->batches; n++) {
        const int8_t *const img = buf + n * HW * C;
        int8_t *const dst = buf + n * HW * OC;
        int32_t s0 = 0;
        for (i = 0; i < HW; i += 2) {
            const int two = i + 1 < HW;
            const int32_t s1 = s0 + 1 == R ? 0 : s0 + 1;
            tc_col16_window(p, img, i / W - p->pad_h, i % W - p->pad_w, col, 0);
            if (two) {
                tc_col16_window(p, img, (i + 1) / W - p->pad_h, (i + 1) % W - p->pad_w, col, 1);
            }
            if (i >= D) {
                memcpy(dst + (i - D) * OC, ring + s0 * OC, (size_t)OC);
            }
            if (two && i + 1 >= D) {
                memcpy(dst + (i + 1 - D) * OC, ring + s1 * OC, (size_t)OC);
            }
            tc_conv_col16_pair(p, col, K, ring + s0 * OC, two ? ring + s1 * OC : 0);
            s0 = !two ? s1 : (s1 + 1 == R ? 0 : s1 + 1);
        }
        for (k = HW - R; k < HW; k++) {
            memcpy(dst + k * OC, ring + (k % R) * OC, (size_t)OC);
        }
    }
}
#endif

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

/* 1x1 CONV_2D, stride 1, no groups, in place: pixel i (of batches * h * w) reads input bytes
 * in + [i * C, (i + 1) * C) and writes out + [i * OC, (i + 1) * OC), the input d = in - out
 * bytes from the output (0, or n * (OC - C) for an expanding layer whose output ends where its
 * input ends: tc_conv2d.h). Forwards or backwards (tc_pw_forward), so that no output lands on
 * input still to be read; a pixel (or pair) whose outputs miss its own input is computed
 * straight into place with the ordinary routine, one whose outputs overlap it goes through tmp
 * (out_c bytes) and is copied. */
#if TC_DSP
#define TC_PW(g, x, nx, o) tc_conv_pw_run((g)->p, (x), (nx), (o))
#else
#define TC_PW(g, x, nx, o) tc_conv_interior((g), (x), (nx), (o))
#endif
static void tc_conv_pw_inplace(const tc_conv_geo_t *g, const int8_t *in, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t N = p->batches * p->in_h * p->in_w, d = (int32_t)(in - out);
    int8_t *tmp = p->tmp;
    int32_t i;
    if (tc_pw_forward(d, N, C, OC)) {
        for (i = 0; i < N;) {
            if (TC_CONV_PAIRS && i + 1 < N && tc_pw_apart(d, i, i + 2, C, OC)) {
                TC_PW(g, in + i * C, 2, out + i * OC);
                i += 2;
                continue;
            }
            if (tc_pw_apart(d, i, i + 1, C, OC)) {
                TC_PW(g, in + i * C, 1, out + i * OC);
            } else {
                TC_PW(g, in + i * C, 1, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
            i++;
        }
    } else {
        for (i = N - 1; i >= 0;) {
            if (TC_CONV_PAIRS && i > 0 && tc_pw_apart(d, i - 1, i + 1, C, OC)) {
                TC_PW(g, in + (i - 1) * C, 2, out + (i - 1) * OC);
                i -= 2;
                continue;
            }
            if (tc_pw_apart(d, i, i + 1, C, OC)) {
                TC_PW(g, in + i * C, 1, out + i * OC);
            } else {
                TC_PW(g, in + i * C, 1, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
            i--;
        }
    }
}

#undef TC_PW

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
                    tc_conv_edge(g, img, oy, ox, slot);
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
#if defined(__ARM_ARCH_6M__)
    if (tc_conv_s8_m0(p, in, out)) { /* tc_conv2d_m0.c (groups == 1) */
        return;
    }
#endif
    tc_conv_geo_init(&g, p);
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * H * W, C, OC)) {
#if TC_DSP
        if (p->col != 0) { /* a column buffer beside the temp */
            tc_conv_pw_inplace_col16(p, in, out, (int16_t *)(void *)p->col);
            return;
        }
#endif
        tc_conv_pw_inplace(&g, in, out);
        return;
    }
    if (p->inplace && in == out) {
#if TC_DSP
        if (p->col != 0) { /* a column buffer beside the ring */
            tc_conv_ring_col16(p, out, (int16_t *)(void *)p->col);
            return;
        }
#endif
        tc_conv_ring_inplace(&g, in, out);
        return;
    }
#if TC_DSP
    if (p->groups == 1 && p->k_h * p->k_w * C >= TC_COL16_MIN_K && (C % 4 == 0 || OC >= 16)) {
        const int32_t K = p->k_h * p->k_w * C, npix = p->batches * p->out_h * p->out_w;
        const int32_t t = (tc_col16_bytes(K, C) + 7 + OC - 1) / OC;
        if (p->col != 0) {
            tc_conv_col16(&g, in, out, (int16_t *)(void *)p->col, INT32_MAX);
            return;
        }
        if (4 * t <= npix) {
            /* No column buffer (refused by the planner): the output of the last t pixels is
             * not written before those pixels are computed, and the output does not overlap
             * the input outside in place, so the column buffer goes there (8-byte aligned for
             * LDRD) and the last t pixels take the direct loops. */
            const uintptr_t at = (uintptr_t)(out + (npix - t) * OC);
            tc_conv_col16(&g, in, out, (int16_t *)((at + 7u) & ~(uintptr_t)7u), npix - t);
            return;
        }
    }
    if (p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->groups == 1) {
        tc_conv_pw_run(p, in, p->batches * H * W, out);
        return;
    }
    if (p->k_h == 1 && p->k_w == 1 && p->groups == 1 && p->stride_w > 1) {
        for (n = 0; n < p->batches; n++) {
            for (oy = 0; oy < p->out_h; oy++) {
                tc_conv_pw_strided_row(p, in + ((n * H + oy * p->stride_h) * W) * C, p->out_w,
                                       out + ((n * p->out_h + oy) * p->out_w) * OC);
            }
        }
        return;
    }
#endif
    if (p->groups == 1 && p->col != 0 && (p->k_h > 1 || p->k_w > 1)) {
        tc_conv_im2col(&g, in, out, p->col, INT32_MAX);
        return;
    }
    if (p->groups == 1 && (p->k_h > 1 || p->k_w > 1)) {
        /* No im2col scratch (refused by the planner): the output of the last t pixels (t * OC
         * >= 2 * K bytes) is not written before those pixels are computed, and the output
         * does not overlap the input outside in place, so the windows of all other pixels are
         * copied there. Worth it for small windows with many pixels (a first layer over one or
         * a few input channels), where the direct loops spend most of their time in borders
         * and short rows. */
        const int32_t K = p->k_h * p->k_w * C, npix = p->batches * p->out_h * p->out_w;
        const int32_t t = (2 * K + OC - 1) / OC;
        if (K <= TC_CONV_OUTCOL_MAX_K && 8 * t <= npix) {
            tc_conv_im2col(&g, in, out, out + (npix - t) * OC, npix - t);
            return;
        }
    }
    tc_interior(p->out_h, p->stride_h, p->pad_h, p->k_h, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, p->stride_w, p->pad_w, p->k_w, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            int8_t *orow = out + ((n * p->out_h + oy) * p->out_w) * OC;
            if (oy < oy_lo || oy >= oy_hi) {
                for (ox = 0; ox < p->out_w; ox++) {
                    tc_conv_edge(&g, img, oy, ox, orow + ox * OC);
                }
                continue;
            }
            for (ox = 0; ox < ox_lo; ox++) {
                tc_conv_edge(&g, img, oy, ox, orow + ox * OC);
            }
            {
                const int8_t *org =
                    img + ((oy * p->stride_h - p->pad_h) * W + ox_lo * p->stride_w - p->pad_w) * C;
                for (ox = ox_lo; TC_CONV_PAIRS && ox + 1 < ox_hi; ox += 2) {
                    tc_conv_interior(&g, org, 2, orow + ox * OC);
                    org += 2 * g.pstep;
                }
                for (; ox < ox_hi; ox++) {
                    tc_conv_interior(&g, org, 1, orow + ox * OC);
                    org += g.pstep;
                }
            }
            for (; ox < p->out_w; ox++) {
                tc_conv_edge(&g, img, oy, ox, orow + ox * OC);
            }
        }
    }
}

/* 16x8 (tc_conv_s16): TFLM's int16 ConvPerChannel. Per output pixel the valid tap range is
 * computed once (tc_tap_range), then per channel an int64 sum over the taps inside the image
 * (padding contributes nothing) of int16 x int8 products, plus the int64 bias. */
void tc_conv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t kc = p->in_c / p->groups, ocg = p->out_c / p->groups;
    const int32_t wstride = p->k_h * p->k_w * kc;
    int32_t b, oy, ox, g, oc, ky, kx;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            tc_tap_range(y0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                tc_tap_range(x0, p->dil_w, p->k_w, p->in_w, &kx0, &kx1);
                for (g = 0; g < p->groups; g++) {
                    for (oc = g * ocg; oc < (g + 1) * ocg; oc++) {
                        const int8_t *w = p->weights + oc * wstride;
                        int64_t acc = p->bias[oc];
                        for (ky = ky0; ky < ky1; ky++) {
                            const int16_t *row =
                                img + ((y0 + ky * p->dil_h) * p->in_w) * p->in_c + g * kc;
                            for (kx = kx0; kx < kx1; kx++) {
                                acc += tc_dot_s16_s8(row + (x0 + kx * p->dil_w) * p->in_c,
                                                     w + (ky * p->k_w + kx) * kc, kc, 1);
                            }
                        }
                        *out++ = tc_out_s16(acc, p->rm[oc], p->ts[oc], p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
