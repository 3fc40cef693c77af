/* tinycompile runtime: CONV_2D, int8 (tc_conv_s8; parameters and conventions in tc_conv2d.h):
 * the entry point and the portable paths (direct loops, im2col, in place).
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
 *   - in place (params inplace and out == in, see tc_conv2d.h): pointwise through a one-pixel
 *     temp (here), k x k through a ring of pending outputs (tc_conv2d_inplace.c).
 *
 * Fast paths: the dot products (tc_dot.h) have a DSP variant (tc_dot_dsp.h: SXTB16 + SMLAD,
 * Cortex-M4 and M7; same int32 sums, identical results), shared with FULLY_CONNECTED. Two
 * output pixels per pass everywhere but ARMv6-M (too few registers for four accumulators
 * there). On DSP cores also: tc_conv_s8_dsp (tc_conv2d_dsp.c) is tried first, the int16 column
 * GEMM or the pointwise loops of tc_conv2d_pw_dsp.c; a lone pixel takes four channels per pass
 * (tc_dot14_s8), a pair of interior pixels two channels per pass over the
 * window's rows (tc_conv_pair_dsp: no column needed), a border pixel only its taps inside the
 * image with the input offset added as they are unpacked (tc_conv_edge, tc_dot14v_s8);
 * requantization uses tc_out_s8_dsp (tc_requant's arithmetic, fewer instructions). ARMv6-M:
 * tc_conv2d_m0.c (these loops: grouped layers only). 16x8 (tc_conv_s16): tc_conv2d_int16.c.
 *
 * Without an im2col scratch (refused at the SRAM peak) a k x k layer with a small window
 * (k_h * k_w * in_c <= TC_CONV_OUTCOL_MAX_K) copies its windows into its own output's tail,
 * whose last pixels the direct loops compute last (DSP cores: their int16 column, any window).
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d_int.h" /* and tc_conv2d.h */
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if TC_DSP
#define TC_OUT tc_out_s8_dsp
#else
#define TC_OUT tc_out_s8
#endif

/* Largest window (k_h * k_w * in_c) copied into the output's tail when no im2col scratch is
 * given (see tc_conv_s8). */
#define TC_CONV_OUTCOL_MAX_K 64


/* A pixel whose window leaves the image: the reference formula (DSP: only tc_conv_edge's). */
#if TC_DSP
#define TC_CONV_BORDER_LINKAGE static
#else
#define TC_CONV_BORDER_LINKAGE
#endif
TC_CONV_BORDER_LINKAGE void tc_conv_border(const tc_conv_geo_t *g, const int8_t *img,
                                           int32_t oy, int32_t ox, int8_t *out)
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

/* 1: the portable in-place and im2col paths are built: not on DSP cores (their own), nor on
 * ARMv6-M (tc_conv_s8_m0 takes every layer without groups; grouped ones get neither). */
#if TC_DSP || defined(__ARM_ARCH_6M__)
#define TC_GENERIC_COL 0
#else
#define TC_GENERIC_COL 1
#endif
#define TC_PAIRS2 (!TC_DSP && TC_CONV_PAIRS) /* nx == 2 reaches the loops below */

#if TC_DSP
static void tc_conv_rows_dsp(const tc_conv_geo_t *g, const int8_t *x, int32_t wo, int32_t rows,
                             int32_t n, const int32_t *bias, int32_t off, int8_t *out);
#endif

/* Interior output pixels: nx (1 or 2) pixels starting at org (the second pstep later). */
void tc_conv_interior(const tc_conv_geo_t *g, const int8_t *org, int32_t nx, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t KH = p->k_h, KW = p->k_w, KC = g->kc, OC = p->out_c;
    const int32_t seg = g->seg, nseg = g->nseg, rstep = g->rstep, xstep = g->xstep;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t *out1 = out + OC;
    int32_t grp, oc = 0;
#if TC_DSP
    if (nx == 2) { /* rows of k_w * in_c contiguous values, no groups: two pixels at once */
        if (nseg == 1) {
            tc_conv_pair_dsp(p, org, g->pstep, rstep, seg, out, out1); /* tc_conv2d_pw_dsp.c */
        } else {
            tc_conv_interior(g, org, 1, out);
            tc_conv_interior(g, org + g->pstep, 1, out1);
        }
        return;
    }
    if (nseg == 1) { /* one pixel: the border routine's rows, here the whole window */
        tc_conv_rows_dsp(g, org, 0, KH, seg, p->bias_eff, 0, out);
        return;
    }
#endif
    /* below, nx == 2 only on cores without the DSP extension (TC_PAIRS2: 0 on the others) */

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
            for (ky = 0; ky < KH; ky++) { /* (DSP cores, groups or dilation across) */
                for (s = 0; s < nseg; s++) {
                    const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                    tc_dot14_s8(x0 + xo, w0 + wo, g->wstride, seg, a);
                }
            }
            for (k = 0; k < 4; k++) {
                out[oc + k] = TC_OUT(a[k], p->mult[oc + k], p->shift[oc + k], oo, lo, hi);
            }
        }
        for (; !TC_DSP && oc + 1 < oc_end; oc += 2) { /* DSP: blocks of 4, then lone */
            const int8_t *w0 = p->weights + oc * g->wstride;
            const int8_t *w1 = w0 + g->wstride;
            int32_t a[4];
            int32_t ky, s;
            a[0] = a[2] = p->bias_eff[oc];
            a[1] = a[3] = p->bias_eff[oc + 1];
            if (TC_PAIRS2 && nx == 2) {
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
        while (oc < oc_end) { /* one left (DSP cores: up to three) */
            const int8_t *w = p->weights + oc * g->wstride;
            int32_t a0 = p->bias_eff[oc], a1 = a0;
            int32_t ky, s;
            for (ky = 0; ky < KH; ky++) {
                for (s = 0; s < nseg; s++) {
                    const int32_t xo = ky * rstep + s * xstep, wo = (ky * KW + s) * KC;
                    a0 = tc_dot_s8(x0 + xo, w + wo, seg, a0);
                    if (TC_PAIRS2 && nx == 2) {
                        a1 = tc_dot_s8(x1 + xo, w + wo, seg, a1);
                    }
                }
            }
            out[oc] = TC_OUT(a0, p->mult[oc], p->shift[oc], oo, lo, hi);
            if (TC_PAIRS2 && nx == 2) {
                out1[oc] = TC_OUT(a1, p->mult[oc], p->shift[oc], oo, lo, hi);
            }
            oc++;
        }
    }
}

#if TC_GENERIC_COL /* DSP: borders in place (tc_conv_edge), windows tc_conv2d_dsp.c */
/* Row iy of a window starting at input column ix0, to dst (k_w * in_c bytes): the input zero
 * point at taps outside the image. Out of line: smaller code, at a call per window row. */
__attribute__((noinline)) static void tc_im2col_row(const tc_conv_params_t *p,
                                                    const int8_t *img, int32_t iy, int32_t ix0,
                                                    int8_t *dst)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, KW = p->k_w, dw = p->dil_w;
    const int zp = (int)(-p->in_offset);
    const int8_t *row = img + iy * W * C;
    int32_t kx;
    if (iy < 0 || iy >= H) {
        memset(dst, zp, (size_t)(KW * C));
    } else if (dw == 1 && ix0 >= 0 && ix0 + KW <= W) {
        tc_copy_s8(dst, row + ix0 * C, KW * C);
    } else {
        for (kx = 0; kx < KW; kx++) {
            const int32_t ix = ix0 + kx * dw;
            if (ix < 0 || ix >= W) {
                memset(dst + kx * C, zp, (size_t)C);
            } else {
                tc_copy_s8(dst + kx * C, row + ix * C, C);
            }
        }
    }
}

/* Copy the window of the output pixel whose top-left input is (iy0, ix0) to col as
 * [k_h][k_w][in_c], with the input zero point at taps outside the image. */
static void tc_im2col(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                      int8_t *col)
{
    const int32_t rowlen = p->k_w * p->in_c;
    int32_t ky;
    for (ky = 0; ky < p->k_h; ky++, col += rowlen) {
        tc_im2col_row(p, img, iy0 + ky * p->dil_h, ix0, col);
    }
}
#endif

#if TC_DSP
/* Largest window copied whole for a border pixel over fewer than 4 channels (stack bytes). */
#define TC_CONV_EDGE_SMALL_K 64

/* A border pixel on DSP cores: with no groups and dilation 1 across, only the taps inside the
 * image, read in place with the input offset added as they are unpacked (tc_conv_rows_dsp),
 * from the model's bias: TFLM's sum over the valid taps term for term, no work or copy for the
 * padding (small windows over 1-3 channels: copied whole). Else the reference loops. */
void tc_conv_edge(const tc_conv_geo_t *g, const int8_t *img, int32_t oy, int32_t ox,
                  int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t C = p->in_c, K = g->wstride, wrs = p->k_w * C;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    int32_t ky0, ky1, kx0, kx1, rows, n;
    if (g->nseg != 1) {
        tc_conv_border(g, img, oy, ox, out);
        return;
    }
    if (C < 4 && K <= TC_CONV_EDGE_SMALL_K) {
        /* rows of 1-3 values cost more than the window: copied whole, zero point outside
         * the image (bias_eff applies), one dot product per channel; not tc_im2col_row,
         * which cost more flash and instructions here (DS-CNN, MobileNetV1) */
        uint32_t win[TC_CONV_EDGE_SMALL_K / 4];
        int8_t *d = (int8_t *)win;
        const int8_t zp = (int8_t)(-p->in_offset);
        int32_t ky, kx, c;
        for (ky = 0; ky < p->k_h; ky++) {
            const int32_t iy = iy0 + ky * p->dil_h;
            if (iy < 0 || iy >= p->in_h) {
                memset(d, zp, (size_t)wrs);
                d += wrs;
                continue;
            }
            if (ix0 >= 0 && ix0 + p->k_w <= p->in_w) {
                memcpy(d, img + (iy * p->in_w + ix0) * C, (size_t)wrs);
                d += wrs;
                continue;
            }
            for (kx = 0; kx < p->k_w; kx++) {
                const int32_t ix = ix0 + kx;
                for (c = 0; c < C; c++) {
                    *d++ = ix >= 0 && ix < p->in_w ? img[(iy * p->in_w + ix) * C + c] : zp;
                }
            }
        }
        tc_conv_window_dsp(p, (const int8_t *)win, K, out); /* tc_conv2d_pw_dsp.c */
        return;
    }
    tc_tap_range(iy0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
    tc_tap_range(ix0, 1, p->k_w, p->in_w, &kx0, &kx1);
    rows = ky1 > ky0 ? ky1 - ky0 : 0;
    n = kx1 > kx0 ? (kx1 - kx0) * C : 0;
    tc_conv_rows_dsp(g, img + ((iy0 + ky0 * p->dil_h) * p->in_w + ix0 + kx0) * C,
                     ky0 * wrs + kx0 * C, n ? rows : 0, n, p->bias, p->in_offset, out);
}

/* Every output channel of one pixel: bias (0: none) + (x + off) * w over rows rows of n input
 * values at x (rstep apart), filters from offset wo (rows k_w * in_c apart), four channels per
 * pass (tc_dot14v_s8 / tc_dot14o_s8). A whole window (interior: bias_eff, off 0; the raw bias
 * exists only with borders) or a border's part inside the image (bias, in_offset). */
static void tc_conv_rows_dsp(const tc_conv_geo_t *g, const int8_t *x, int32_t wo, int32_t rows,
                             int32_t n, const int32_t *bias, int32_t off, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t OC = p->out_c, K = g->wstride, wrs = p->k_w * p->in_c;
    const uint32_t o2 = ((uint32_t)off << 16) | ((uint32_t)off & 0xFFFFu);
    const int8_t *w = p->weights + wo;
    int32_t oc = 0, j, r, nc;
    for (; oc < OC; oc += nc, w += nc * K) {
        int32_t a[4];
        if (OC - oc < 4 && OC >= 4) { /* the last block ends at OC, over some channels again */
            w -= (4 - (OC - oc)) * K;
            oc = OC - 4;
        }
        nc = OC - oc >= 4 ? 4 : 1; /* blocks of four channels (under four in all: one by one) */
        for (j = 0; j < nc; j++) {
            a[j] = bias ? bias[oc + j] : 0;
        }
        for (r = 0; r < rows; r++) {
            const int8_t *xr = x + r * g->rstep, *wr = w + r * wrs;
            if (nc == 1) {
                a[0] = tc_dot_off_s8(xr, wr, n, off, a[0]);
            } else if (n >= 8) {
                tc_dot14v_s8(xr, wr, K, n, o2, a);
            } else {
                tc_dot14o_s8(xr, wr, K, n, o2, a);
            }
        }
        for (j = 0; j < nc; j++) {
            out[oc + j] = tc_out_s8_dsp(a[j], p->mult[oc + j], p->shift[oc + j], p->out_offset,
                                        p->act_min, p->act_max);
        }
    }
}
#endif

#if !defined(__ARM_ARCH_6M__)
/* Output pixel (n, oy, ox) by the direct loops, interior or border; with pair, also the next
 * one of its row when both are interior (two at once). Returns the pixels computed. */
static int32_t tc_conv_pixel(const tc_conv_geo_t *g, const int8_t *in, int32_t n, int32_t oy,
                             int32_t ox, int pair, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c;
    const int8_t *img = in + n * H * W * C;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    int32_t ky0, ky1, kx0, kx1;
    tc_tap_range(iy0, p->dil_h, p->k_h, H, &ky0, &ky1);
    tc_tap_range(ix0, p->dil_w, p->k_w, W, &kx0, &kx1);
    if (ky0 == 0 && ky1 == p->k_h && kx0 == 0 && kx1 == p->k_w) {
        pair = pair && ix0 + p->stride_w + (p->k_w - 1) * p->dil_w < W;
        tc_conv_interior(g, img + (iy0 * W + ix0) * C, pair ? 2 : 1, out);
        return pair ? 2 : 1;
    }
    tc_conv_edge(g, img, oy, ox, out);
    return 1;
}
#endif

#if TC_GENERIC_COL /* DSP cores: the int16 column GEMM of tc_conv2d_dsp.c instead */
/* CONV_2D through im2col (groups == 1): every output pixel one dot product of k_h * k_w * in_c
 * per channel, two pixels x two channels per pass (one pixel on ARMv6-M); col: 2 windows.
 * Pixels (over batches, rows and columns) from lim on are left to the direct loops (tc_conv_s8
 * may have placed col over their output bytes). */
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
                    tc_conv_pixel(g, in, n, oy, ox, 0, out);
                    out += OC;
                    ox++;
                    idx++;
                    continue;
                }
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
#endif

#if TC_DSP
/* Output pixels from idx on (counted over batches, rows and columns) by the direct loops: the
 * tail a DSP path left (tc_conv_s8_dsp), whose output bytes held its column buffer. */
static void tc_conv_tail(const tc_conv_geo_t *g, const int8_t *in, int8_t *out, int32_t idx)
{
    const tc_conv_params_t *p = g->p;
    const int32_t OW = p->out_w, OHW = p->out_h * OW, npix = p->batches * OHW;
    while (idx < npix) { /* two interior pixels of a row at once */
        const int32_t ox = idx % OW;
        idx += tc_conv_pixel(g, in, idx / OHW, idx % OHW / OW, ox, ox + 1 < OW,
                             out + idx * p->out_c);
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
#if TC_GENERIC_COL /* DSP cores: tc_conv_pw_inplace_dsp (tc_conv2d_pw_dsp.c) */
#define TC_PW(g, x, nx, o) tc_conv_interior((g), (x), (nx), (o))
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
#endif
#if defined(__ARM_ARCH_6M__) /* tc_conv_s8: tc_conv2d_m0.c */
#define TC_CONV_LOOPS tc_conv_s8_grouped
#else
#define TC_CONV_LOOPS tc_conv_s8
#endif

void TC_CONV_LOOPS(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    tc_conv_geo_t g;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, oy, ox;
    tc_conv_geo_init(&g, p);
#if TC_DSP /* pixels done, from the first: tc_conv2d_mve.c (Helium) all or none, else _dsp.c */
    n = TC_CONV_MVE(p, in, out) ? p->batches * p->out_h * p->out_w : tc_conv_s8_dsp(p, in, out);
    if (n > 0) {
        tc_conv_tail(&g, in, out, n);
        return;
    }
#endif
#if !defined(__ARM_ARCH_6M__)
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * H * W, C, OC)) {
#if TC_DSP
        tc_conv_pw_inplace_dsp(p, in, out);
#else
        tc_conv_pw_inplace(&g, in, out);
#endif
        return;
    }
    if (p->inplace && in == out) {
        tc_conv_ring_inplace(&g, in, out);
        return;
    }
#endif
#if TC_GENERIC_COL
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
#endif
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
