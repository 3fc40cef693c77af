/* tinycompile runtime: CONV_2D, int8, the ARMv6-M (Cortex-M0/M0+) path (tc_conv_s8_m0, entered
 * from tc_conv_s8 in tc_conv2d.c on __ARM_ARCH_6M__), and its four-channel dot product
 * tc_m0_dot14.
 *
 * Same arithmetic as tc_conv2d.c (TFLM's reference ConvPerChannel): interior windows are pure
 * int8 dot products from bias_eff, border windows bias + sum((x + in_offset) * w) over their
 * valid taps (or, im2col, windows copied with the input zero point in the padding), then
 * tc_requant (on ARMv6-M tc_qmath.h's tc_requant16), output zero point, clamp. The int32 sums
 * are the same sums in another order (wrapping int32 addition commutes). Loops are organised
 * for ARMv6-M:
 *   - one output pixel at a time, four output channels per pass sharing each input load
 *     (tc_m0_dot14: per element one LDRSB of the input, four of weights, four MULS, four ADDs
 *     into accumulators kept in r8-r11, one index register counting up to zero);
 *   - no division; windows of at most TC_CONV_M0_WIN bytes (few input channels) copied to the
 *     stack with the zero point in the padding, so each four channels take one dot product;
 *   - tc_requant is tc_requant16 here (tc_qmath.h): no 64x64-bit multiply; an ONNX layer's
 *     (tc_qmath.h's ONNX variant) is chosen once per tc_m0_out4 / tc_m0_outn call (tc_m0.h).
 * Handled here: groups == 1 (direct, im2col, and both in-place layouts of tc_conv2d.h, with the
 * same scratch). Grouped convolutions return 0: the compiler calls tc_conv_s8_grouped for them,
 * the portable loops (tc_conv2d.h), which other models then do not link.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

/* ------------------------------------------------------------- four-channel dot product */

#if defined(__ARM_ARCH_6M__)
/* a[k] += sum_{i < n} x[i] * w[k * ws + i], k = 0..3 (n >= 0), two elements per loop pass
 * (14.5 instructions per element, 4 MACs). Naked: the body is the whole
 * function (AAPCS: x, w, ws, n in r0-r3, a on the stack), so it can use all eight low
 * registers and keep the four accumulators in r8-r11. */
__attribute__((naked)) void tc_m0_dot14(const int8_t *x TC_M0_ARG, const int8_t *w TC_M0_ARG,
                                        int32_t ws TC_M0_ARG, int32_t n TC_M0_ARG,
                                        int32_t *a TC_M0_ARG)
{
    __asm__(".syntax unified\n\t"
            TC_M0_ENTER
            "cmp r3, #0\n\t"
            "ble 2f\n\t"
            TC_M0_A_LOAD
            "adds r0, r0, r3\n\t" /* every stream at its end, index -n .. -1 */
            "adds r1, r1, r3\n\t"
            "adds r5, r1, r2\n\t"
            "adds r6, r5, r2\n\t"
            "adds r7, r6, r2\n\t"
            "negs r3, r3\n\t"
            TC_M0_DOT14_RUN
            TC_M0_A_STORE
            "2:\n\t"
            TC_M0_LEAVE
            ".syntax divided");
}
#else
/* The same sums in C (other cores never call it; kept so the file builds and reads the same
 * everywhere). */
void tc_m0_dot14(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t *a)
{
    int32_t i, a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (i = 0; i < n; i++) {
        const int32_t v = x[i];
        a0 += v * w[i];
        a1 += v * w[ws + i];
        a2 += v * w[2 * ws + i];
        a3 += v * w[3 * ws + i];
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#endif

/* tc_m0_out4's ONNX instance. */
__attribute__((noinline)) static void tc_m0_out4_onnx(const int32_t *a, const int32_t *mult,
                                                      const int32_t *shift, int32_t oo,
                                                      int32_t lo, int32_t hi, int8_t *o)
{
    int32_t k;
    for (k = 0; k < 4; k++) {
        o[k] = tc_out_s8_m0v(a[k], mult[k], shift[k], oo, lo, hi, 1);
    }
}

/* Its TFLite instance, apart from the test where the build has the ONNX variant: the ONNX
 * instance's deep calls then stack under the small frame of tc_m0_out4, not this one's (as
 * GCC's partial inlining had split it); inline in a build without it. */
#if TC_ONNX_VARIANT
#define TC_M0_OUT4_TFL __attribute__((noinline)) static void
#else
#define TC_M0_OUT4_TFL TC_INLINE void
#endif
TC_M0_OUT4_TFL tc_m0_out4_tfl(const int32_t *a, const int32_t *mult, const int32_t *shift,
                              int32_t oo, int32_t lo, int32_t hi, int8_t *o)
{
    int32_t k;
    for (k = 0; k < 4; k++) {
        o[k] = tc_out_s8_m0(a[k], mult[k], shift[k], oo, lo, hi);
    }
}

void tc_m0_out4(const int32_t *a, const int32_t *mult, const int32_t *shift, int32_t oo,
                int32_t lo, int32_t hi, int8_t *o)
{
    if (TC_M0_ONNX(shift[0])) {
        tc_m0_out4_onnx(a, mult, shift, oo, lo, hi, o);
        return;
    }
    tc_m0_out4_tfl(a, mult, shift, oo, lo, hi, o);
}

void tc_m0_outn(const int32_t *a, const int32_t *mult, const int32_t *shift, int32_t oo,
                int32_t lo, int32_t hi, int8_t *o, int32_t n)
{
    int32_t k;
    if (TC_M0_ONNX(shift[0])) { /* four at a time (the CONV_2D pixel gives such layers fours) */
        for (k = 0; k < n; k += 4) {
            tc_m0_out4_onnx(a + k, mult + k, shift + k, oo, lo, hi, o + k);
        }
        return;
    }
    for (k = 0; k < n; k++) {
        o[k] = tc_out_s8_m0(a[k], mult[k], shift[k], oo, lo, hi);
    }
}

int8_t tc_m0_out1(int32_t acc, int32_t mult, int32_t shift, int32_t oo, int32_t lo, int32_t hi)
{
    return TC_M0_ONNX(shift) ? tc_out_s8_m0v(acc, mult, shift, oo, lo, hi, 1)
                             : tc_out_s8_m0(acc, mult, shift, oo, lo, hi);
}

/* ---------------------------------------------------------------------- convolution */

/* Per-call constants (groups == 1). */
typedef struct {
    const tc_conv_params_t *p;
    int32_t wstride;   /* weights per output channel */
    int32_t kh;        /* filter rows (1 for an im2col copy: one run of wstride values) */
    int32_t rstep;     /* input step between filter rows */
    int32_t xstep;     /* input step between filter columns */
    int32_t seg, nseg; /* a filter row: nseg contiguous runs of seg values */
} tc_conv_m0_geo_t;

/* All out_c outputs of one pixel whose window lies inside the image (or is an im2col copy):
 * org at the window's first tap, rows rstep apart, a row nseg runs of seg values xstep apart;
 * outputs requantized nb (4 or TC_M0_OUTN, a constant) at a time. */
TC_INLINE void tc_conv_m0_pixel_nb(const tc_conv_m0_geo_t *g, const int8_t *org, int8_t *out,
                                   const int32_t nb)
{
    const tc_conv_params_t *p = g->p;
    const int32_t OC = p->out_c, KH = g->kh, KW = p->k_w, C = p->in_c, ws = g->wstride;
    const int32_t seg = g->seg, nseg = g->nseg, rstep = g->rstep, xstep = g->xstep;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t acc[TC_M0_OUTN], oc, ky, s, k = 0;
    for (oc = 0; oc + 3 < OC; oc += 4) {
        const int8_t *w = p->weights + oc * ws;
        const int32_t *be = p->bias_eff + oc;
        int32_t *const a = acc + k;
        a[0] = be[0];
        a[1] = be[1];
        a[2] = be[2];
        a[3] = be[3];
        if (nseg == 1 && KH == 1) {
            tc_m0_dot14(org, w, ws, seg, a);
        } else {
            for (ky = 0; ky < KH; ky++) {
                for (s = 0; s < nseg; s++) {
                    tc_m0_dot14(org + ky * rstep + s * xstep, w + (ky * KW + s) * C, ws, seg, a);
                }
            }
        }
        k += 4;
        if (nb == 4) {
            tc_m0_out4(a, p->mult + oc, p->shift + oc, oo, lo, hi, out + oc);
            k = 0;
        } else if (k == nb || oc + 7 >= OC) { /* requantized together: one call per block */
            const int32_t c0 = oc + 4 - k;
            tc_m0_outn(acc, p->mult + c0, p->shift + c0, oo, lo, hi, out + c0, k);
            k = 0;
        }
    }
    for (; oc < OC; oc++) {
        const int8_t *w = p->weights + oc * ws;
        int32_t acc = p->bias_eff[oc], i;
        for (ky = 0; ky < KH; ky++) {
            for (s = 0; s < nseg; s++) {
                const int8_t *x = org + ky * rstep + s * xstep, *wr = w + (ky * KW + s) * C;
                for (i = 0; i < seg; i++) {
                    acc += x[i] * wr[i];
                }
            }
        }
        out[oc] = tc_m0_out1(acc, p->mult[oc], p->shift[oc], oo, lo, hi);
    }
}

/* tc_conv_m0_pixel_nb's two instances: an ONNX layer's requantization (tc_m0_out4_onnx) four
 * outputs a call, as before blocks existed (in blocks GCC compiled the ONNX instance worse). */
static void tc_conv_m0_pixel(const tc_conv_m0_geo_t *g, const int8_t *org, int8_t *out)
{
    if (TC_M0_ONNX(g->p->shift[0])) {
        tc_conv_m0_pixel_nb(g, org, out, 4);
    } else {
        tc_conv_m0_pixel_nb(g, org, out, TC_M0_OUTN);
    }
}

/* Windows of at most this many bytes are copied to the stack (tc_conv_m0_im2col) and
 * reduced with one dot product per four channels; larger ones are read in place. */
#define TC_CONV_M0_WIN 128
/* Bytes of the input zero point standing in for taps outside the image. */
#define TC_CONV_M0_ZP 64

/* One output pixel whose window leaves the image, window read in place: every tap is one dot
 * product of in_c values, taps outside the image over a run of the input zero point (adding
 * w * zero_point, which with bias_eff's in_offset * w gives 0: the reference's skipped tap).
 * Out of line, so its zero-point buffer stays off the common path's stack. */
static __attribute__((noinline)) void tc_conv_m0_border(const tc_conv_m0_geo_t *g,
                                                        const int8_t *img, int32_t oy,
                                                        int32_t ox, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t W = p->in_w, H = p->in_h, C = p->in_c, KW = p->k_w, OC = p->out_c;
    const int32_t ws = g->wstride;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int8_t zp[TC_CONV_M0_ZP];
    int32_t oc, ky, kx, i, k;
    for (i = 0; i < TC_CONV_M0_ZP; i++) {
        zp[i] = (int8_t)(-p->in_offset);
    }
    for (oc = 0; oc < OC; oc += 4) {
        const int8_t *w = p->weights + oc * ws;
        const int32_t cn = OC - oc < 4 ? OC - oc : 4;
        int32_t a[4];
        for (k = 0; k < cn; k++) {
            a[k] = p->bias_eff[oc + k];
        }
        for (ky = 0; ky < p->k_h; ky++) {
            const int32_t iy = iy0 + ky * p->dil_h;
            for (kx = 0; kx < KW; kx++) {
                const int32_t ix = ix0 + kx * p->dil_w;
                const int8_t *wt = w + (ky * KW + kx) * C;
                if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
                    const int8_t *x = img + (iy * W + ix) * C;
                    if (cn == 4) {
                        tc_m0_dot14(x, wt, ws, C, a);
                    } else {
                        for (k = 0; k < cn; k++) {
                            for (i = 0; i < C; i++) {
                                a[k] += x[i] * wt[k * ws + i];
                            }
                        }
                    }
                } else {
                    for (i = 0; i < C; i += TC_CONV_M0_ZP) {
                        const int32_t len = C - i < TC_CONV_M0_ZP ? C - i : TC_CONV_M0_ZP;
                        if (cn == 4) {
                            tc_m0_dot14(zp, wt + i, ws, len, a);
                        } else {
                            int32_t j;
                            for (k = 0; k < cn; k++) {
                                for (j = 0; j < len; j++) {
                                    a[k] += zp[j] * wt[k * ws + i + j];
                                }
                            }
                        }
                    }
                }
            }
        }
        for (k = 0; k < cn; k++) {
            out[oc + k] = tc_m0_out1(a[k], p->mult[oc + k], p->shift[oc + k], oo, lo, hi);
        }
    }
}

/* col[0 .. n): the input zero point zp over [0, a) and [e, n), src's bytes over [a, e).
 * Explicit byte loops, not memcpy / memset calls: runs are a few bytes (a one-channel
 * spectrogram's window rows), where a call costs more. */
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static void
tc_conv_m0_run(int8_t *col, const int8_t *src, int32_t a, int32_t e, int32_t n, int8_t zp)
{
    int32_t i;
    for (i = 0; i < a && i < e; i++) {
        col[i] = zp;
    }
    for (; i < e; i++) {
        col[i] = src[i];
    }
    for (; i < n; i++) {
        col[i] = zp;
    }
}

/* Window of output (iy0, ix0) copied to col as [k_h][k_w][in_c] (columns one apart), the input
 * zero point at taps outside the image (they then add w * (zero_point + in_offset) = 0, like a
 * skipped tap): one run per row, its columns inside the image found once per window. */
static void tc_conv_m0_im2col(const tc_conv_params_t *p, const int8_t *img, int32_t iy0,
                              int32_t ix0, int8_t *col)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, KW = p->k_w, R = KW * C;
    const int32_t ka = ix0 < 0 ? (-ix0 < KW ? -ix0 : KW) : 0;
    const int32_t kb = W - ix0 < KW ? (W - ix0 > ka ? W - ix0 : ka) : KW;
    int32_t ky;
    for (ky = 0; ky < p->k_h; ky++, col += R) {
        const int32_t iy = iy0 + ky * p->dil_h;
        tc_conv_m0_run(col, img + (iy * W + ix0) * C, ka * C, iy >= 0 && iy < H ? kb * C : 0, R,
                       (int8_t)(-p->in_offset));
    }
}

/* Output pixel (oy, ox) of image img, interior or border; gcol: the geometry of a window
 * copy. */
static void tc_conv_m0_any(const tc_conv_m0_geo_t *g, const tc_conv_m0_geo_t *gcol,
                           const int8_t *img, int32_t oy, int32_t ox, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
    if (g->wstride <= TC_CONV_M0_WIN && g->kh * g->nseg > 1 && p->dil_w == 1) {
        int8_t win[TC_CONV_M0_WIN];
        tc_conv_m0_im2col(p, img, iy0, ix0, win);
        tc_conv_m0_pixel(gcol, win, out);
    } else if (iy0 >= 0 && ix0 >= 0 && iy0 + (p->k_h - 1) * p->dil_h < p->in_h &&
               ix0 + (p->k_w - 1) * p->dil_w < p->in_w) {
        tc_conv_m0_pixel(g, img + (iy0 * p->in_w + ix0) * p->in_c, out);
    } else {
        tc_conv_m0_border(g, img, oy, ox, out);
    }
}

int tc_conv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t OH = p->out_h, OW = p->out_w;
    tc_conv_m0_geo_t g, gcol;
    int32_t n, oy, ox, i;
    if (p->groups != 1) {
        return 0;
    }
    g.p = p;
    g.wstride = p->k_h * p->k_w * C;
    g.kh = p->k_h;
    g.rstep = p->dil_h * W * C;
    g.xstep = p->dil_w * C;
    if (p->dil_w == 1) {
        g.seg = p->k_w * C;
        g.nseg = 1;
    } else {
        g.seg = C;
        g.nseg = p->k_w;
    }
    gcol = g; /* an im2col copy: one contiguous run of wstride values */
    gcol.kh = 1;
    gcol.seg = g.wstride;
    gcol.nseg = 1;
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * H * W, C, OC)) {
        /* tc_conv2d.h: forwards or backwards (tc_pw_forward, the input d = in - out bytes from
         * the output); a pixel whose outputs overlap its own input goes via tmp */
        const int32_t N = p->batches * H * W, d = (int32_t)(in - out);
        const int fwd = tc_pw_forward(d, N, C, OC);
        int8_t *tmp = p->tmp;
        for (i = fwd ? 0 : N - 1; fwd ? i < N : i >= 0; i += fwd ? 1 : -1) {
            if (tc_pw_apart(d, i, i + 1, C, OC)) {
                tc_conv_m0_pixel(&g, in + i * C, out + i * OC);
            } else {
                tc_conv_m0_pixel(&g, in + i * C, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
        }
        return 1;
    }
    if (p->inplace && in == out) {
        int8_t *tmp = p->tmp;
        {
            /* the ring of tc_conv2d.h: output i waits in slot i % R until output i + D */
            const int32_t HW = H * W, D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
            int8_t *const ring_end = tmp + R * OC;
            int32_t k;
            for (n = 0; n < p->batches; n++) {
                const int8_t *img = in + n * HW * C;
                int8_t *dst = out + n * HW * OC;
                int8_t *slot = tmp;
                i = 0;
                for (oy = 0; oy < H; oy++) {
                    for (ox = 0; ox < W; ox++, i++) {
                        if (i >= D) {
                            memcpy(dst + (i - D) * OC, slot, (size_t)OC);
                        }
                        tc_conv_m0_any(&g, &gcol, img, oy, ox, slot);
                        slot += OC;
                        if (slot == ring_end) {
                            slot = tmp;
                        }
                    }
                }
                for (k = HW - R; k < HW; k++) {
                    memcpy(dst + k * OC, slot, (size_t)OC);
                    slot += OC;
                    if (slot == ring_end) {
                        slot = tmp;
                    }
                }
            }
        }
        return 1;
    }
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        int8_t *o = out + n * OH * OW * OC;
        for (oy = 0; oy < OH; oy++) {
            for (ox = 0; ox < OW; ox++, o += OC) {
                if (p->col != 0 && g.wstride > C && p->dil_w == 1) { /* 1x1: read in place */
                    tc_conv_m0_im2col(p, img, oy * p->stride_h - p->pad_h,
                                      ox * p->stride_w - p->pad_w, p->col);
                    tc_conv_m0_pixel(&gcol, p->col, o);
                } else {
                    tc_conv_m0_any(&g, &gcol, img, oy, ox, o);
                }
            }
        }
    }
    return 1;
}

#if defined(__ARM_ARCH_6M__)
/* ARMv6-M's CONV_2D entry: every layer without groups, all the compiler sends here
 * (tc_conv2d.h); tc_conv2d.c's portable loops are tc_conv_s8_grouped, linked only by grouped
 * layers. */
void tc_conv_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    (void)tc_conv_s8_m0(p, in, out);
}
#endif
