/* tinycompile runtime: CONV_2D on the Cortex-M55 with Helium (TC_MVE): an int8 column GEMM whose
 * inner step is VMLADAVA (sixteen int8 products summed into a scalar accumulator, one
 * instruction).
 *
 * Three output pixels share one column buffer (two where no room holds three). Each pixel's
 * window (k_h * k_w * in_c = K values, the input zero point at padded taps, so they add
 * w * (zero_point + in_offset) = 0 with the input offset folded into bias_eff) takes a slot of
 * kp = 16 * ceil(K / 16) bytes, slot s at col + s * kp. The weights are TFLite's own [out_c][K]
 * rows, unchanged (the generated C is the same for every core). The step for a pair of output
 * channels over the three slots is 3 + 2 loads and 6 VMLADAVA for 96 multiply-accumulates: six
 * accumulators fill the even registers VMLADAVA needs beside the loop counter in lr (eight
 * would not fit). K need not be a multiple of 16: a slot's bytes past K are zeros (written once
 * per layer, never by a window), so whatever the weights hold there (the next row's first
 * values, or for the last row up to 15 bytes past the weights, in flash and readable) adds
 * nothing. Windows of one or two chunks keep the pixels' chunks in registers across the
 * channels instead.
 *
 * The sums of up to TC_MVE_OCB channels wait on the stack, then four channels a vector: +
 * bias_eff, tc_mve.h's exact TFLM requantization with each lane's multiplier and shift, +
 * output offset, clamp, one narrowing store per pixel. An ONNX layer (every shift above 31:
 * tc_qmath.h's variant) is requantized four lanes at a time in float32 (tc_mve_outs_onnx, the
 * arithmetic of tc_requant_onnx on this core); a layer mixing both, channel by channel.
 *
 * Which layers: groups 1, every geometry (strides, dilations, padding): out of place; in place
 * the 1x1 walk (a block's pixels copied to the column first, so their outputs go straight to
 * their place, forwards or backwards as tc_pw_forward says) and the k x k ring (tc_mve_ring:
 * tc_conv_ring_walk's rule for blocks of three). The column is the planner's (its
 * tc_col16_bytes, sized for the DSP paths' int16 pairs, holds three int8 slots from K = 16 on
 * over channels in fours) or up to TC_MVE_STACK_COL bytes on the stack; a layer without room
 * for two slots returns 0 and takes the DSP paths. The arithmetic is TFLM's, so results equal
 * the portable path's (tests/test_kernels_mve_conv.py runs both sides in QEMU).
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_mve.h"

#if TC_MVE

/* Column bytes a layer may keep on the stack where the planner's column is too small (three
 * slots of windows up to 336 values, a 3x3 window over 37 channels; two up to 512), within the
 * M55 boards' stack reserve (the firmware's stack bound counts it). */
#define TC_MVE_STACK_COL 1024

/* The geometry of the column: slots and the chunks of a window. */
typedef struct {
    int8_t *col;
    int32_t slots; /* 3, or 2 where the buffer holds no more */
    int32_t nch;   /* chunks of sixteen values a window */
    int lsh;       /* some channel's shift is positive (a left shift before the multiply) */
    int onnx;      /* every channel's shift marks the ONNX variant (tc_qmath.h) */
} tc_mcol_t;

/* n bytes from src to dst: whole chunks of sixteen unpredicated, then one predicated step (a
 * predicate in every step costs GCC 12 four more instructions each). */
TC_INLINE void tc_mve_copy(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 16; n -= 16, src += 16, dst += 16) {
        vst1q_s8(dst, vld1q_s8(src));
    }
    if (n > 0) {
        const mve_pred16_t pr = vctp8q((uint32_t)n);
        vstrbq_p_s8(dst, vldrbq_z_s8(src, pr), pr);
    }
}

/* n copies of v to dst. */
TC_INLINE void tc_mve_set(int8_t *dst, int8x16_t v, int32_t n)
{
    for (; n > 0; n -= 16, dst += 16) {
        vstrbq_p_s8(dst, v, vctp8q((uint32_t)n));
    }
}

/* Slot s of the column: its window's first value. */
TC_INLINE int8_t *tc_mcol_slot(const tc_mcol_t *m, int32_t s)
{
    return m->col + s * (m->nch << 4);
}

/* Zeros past K in every slot's last chunk (see the file's comment). */
static void tc_mcol_clear_tail(const tc_mcol_t *m, int32_t K)
{
    int32_t s;
    if (K & 15) {
        for (s = 0; s < m->slots; s++) {
            tc_mve_set(tc_mcol_slot(m, s) + K, vdupq_n_s8(0), 16 - (K & 15));
        }
    }
}

/* The window of the output pixel whose window starts at row iy0, column ix0 of img (one
 * batch's image) into slot s, the input zero point where it leaves the image (tc_mcol_pixel
 * takes the interior ones). */
static void tc_mcol_window(const tc_conv_params_t *p, const tc_mcol_t *m, const int8_t *img,
                           int32_t iy0, int32_t ix0, int32_t s)
{
    const int32_t W = p->in_w, C = p->in_c, KW = p->k_w, row = KW * C;
    const int8x16_t zp = vdupq_n_s8((int8_t)(-p->in_offset));
    int8_t *d = tc_mcol_slot(m, s);
    int32_t kx_lo, kx_hi, ky, kx;
    tc_tap_range(ix0, p->dil_w, KW, W, &kx_lo, &kx_hi);
    for (ky = 0; ky < p->k_h; ky++, d += row) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= p->in_h || kx_lo >= kx_hi) {
            tc_mve_set(d, zp, row);
            continue;
        }
        if (kx_lo > 0) {
            tc_mve_set(d, zp, kx_lo * C);
        }
        if (p->dil_w == 1) {
            tc_mve_copy(d + kx_lo * C, img + (iy * W + ix0 + kx_lo) * C, (kx_hi - kx_lo) * C);
        } else {
            for (kx = kx_lo; kx < kx_hi; kx++) {
                tc_mve_copy(d + kx * C, img + (iy * W + ix0 + kx * p->dil_w) * C, C);
            }
        }
        if (kx_hi < KW) {
            tc_mve_set(d + kx_hi * C, zp, (KW - kx_hi) * C);
        }
    }
}

/* A layer's window geometry for its interior pixels (the whole window inside the image, rows
 * of consecutive taps), read once per layer: their windows are kp-byte slots of k_h rows of
 * row bytes, step bytes apart in the image. */
typedef struct {
    int32_t kh, row, step, ylim, xlim, fast;
} tc_mwin_t;

static void tc_mwin_init(const tc_conv_params_t *p, tc_mwin_t *g)
{
    g->kh = p->k_h;
    g->row = p->k_w * p->in_c;
    g->step = p->dil_h * p->in_w * p->in_c;
    g->ylim = p->in_h - (p->k_h - 1) * p->dil_h; /* iy0 < ylim */
    g->xlim = p->in_w - p->k_w;                  /* ix0 <= xlim */
    g->fast = p->dil_w == 1;
}

/* The window of the pixel at (iy0, ix0) into slot s: interior ones row by row here, the others
 * through tc_mcol_window. */
TC_INLINE void tc_mcol_pixel(const tc_conv_params_t *p, const tc_mwin_t *g, const tc_mcol_t *m,
                             const int8_t *img, int32_t iy0, int32_t ix0, int32_t s)
{
    if (g->fast && iy0 >= 0 && ix0 >= 0 && iy0 < g->ylim && ix0 <= g->xlim) {
        const int8_t *src = img + (iy0 * p->in_w + ix0) * p->in_c;
        int8_t *d = tc_mcol_slot(m, s);
        int32_t ky;
        for (ky = 0; ky < g->kh; ky++, d += g->row, src += g->step) {
            tc_mve_copy(d, src, g->row);
        }
    } else {
        tc_mcol_window(p, m, img, iy0, ix0, s);
    }
}

/* Output channels a GEMM pass sums before requantizing them: their sums wait in a[slot][...]
 * on the stack (3 * 4 * TC_MVE_OCB bytes). */
#define TC_MVE_OCB 32

/* One channel pair's sums over three slots (x at c0, c0 + kp, c0 + 2 kp; weights w0, w1), to
 * a[0], a[1] (slot 0), a[TC_MVE_OCB], ... (slot 1), a[2 TC_MVE_OCB], ... (slot 2). The step is
 * 3 + 2 loads and 6 VMLADAVA for 96 multiply-accumulates, which keeps the six accumulators in
 * the even registers VMLADAVA needs besides the loop counter (lr) and the five pointers. */
TC_INLINE void tc_mve_pair3(const int8_t *c0, int32_t kp, int32_t nch, const int8_t *w0,
                            const int8_t *w1, int32_t *a)
{
    const int8_t *c1 = c0 + kp, *c2 = c1 + kp;
    int8x16_t x0 = vldrbq_s8(c0), x1 = vldrbq_s8(c1), x2 = vldrbq_s8(c2);
    int8x16_t v0 = vldrbq_s8(w0), v1 = vldrbq_s8(w1);
    int32_t a0 = vmladavq_s8(x0, v0), a1 = vmladavq_s8(x1, v0), a2 = vmladavq_s8(x2, v0);
    int32_t b0 = vmladavq_s8(x0, v1), b1 = vmladavq_s8(x1, v1), b2 = vmladavq_s8(x2, v1);
    for (nch--; nch > 0; nch--) {
        c0 += 16;
        c1 += 16;
        c2 += 16;
        w0 += 16;
        w1 += 16;
        x0 = vldrbq_s8(c0);
        x1 = vldrbq_s8(c1);
        x2 = vldrbq_s8(c2);
        v0 = vldrbq_s8(w0);
        v1 = vldrbq_s8(w1);
        a0 = vmladavaq_s8(a0, x0, v0);
        a1 = vmladavaq_s8(a1, x1, v0);
        a2 = vmladavaq_s8(a2, x2, v0);
        b0 = vmladavaq_s8(b0, x0, v1);
        b1 = vmladavaq_s8(b1, x1, v1);
        b2 = vmladavaq_s8(b2, x2, v1);
    }
    a[0] = a0;
    a[1] = b0;
    a[TC_MVE_OCB] = a1;
    a[TC_MVE_OCB + 1] = b1;
    a[2 * TC_MVE_OCB] = a2;
    a[2 * TC_MVE_OCB + 1] = b2;
}

/* The same over two slots (2 + 2 loads, 4 VMLADAVA for 64). */
TC_INLINE void tc_mve_pair2(const int8_t *c0, int32_t kp, int32_t nch, const int8_t *w0,
                            const int8_t *w1, int32_t *a)
{
    const int8_t *c1 = c0 + kp;
    int8x16_t x0 = vldrbq_s8(c0), x1 = vldrbq_s8(c1);
    int8x16_t v0 = vldrbq_s8(w0), v1 = vldrbq_s8(w1);
    int32_t a0 = vmladavq_s8(x0, v0), a1 = vmladavq_s8(x1, v0);
    int32_t b0 = vmladavq_s8(x0, v1), b1 = vmladavq_s8(x1, v1);
    for (nch--; nch > 0; nch--) {
        c0 += 16;
        c1 += 16;
        w0 += 16;
        w1 += 16;
        x0 = vldrbq_s8(c0);
        x1 = vldrbq_s8(c1);
        v0 = vldrbq_s8(w0);
        v1 = vldrbq_s8(w1);
        a0 = vmladavaq_s8(a0, x0, v0);
        a1 = vmladavaq_s8(a1, x1, v0);
        b0 = vmladavaq_s8(b0, x0, v1);
        b1 = vmladavaq_s8(b1, x1, v1);
    }
    a[0] = a0;
    a[1] = b0;
    a[TC_MVE_OCB] = a1;
    a[TC_MVE_OCB + 1] = b1;
}

/* Windows of one or two chunks over three slots: the pixels' chunks stay in registers and
 * each output channel costs its weight loads, 3 or 6 VMLADAV and three stores (the pairs'
 * set-up would cost more than the products). */
__attribute__((noinline)) static void tc_mve_sums3_short(const int8_t *col, int32_t kp,
                                                         int32_t nch, const int8_t *w,
                                                         int32_t K, int32_t n, int32_t *a)
{
    const int8x16_t x0 = vldrbq_s8(col), x1 = vldrbq_s8(col + kp), x2 = vldrbq_s8(col + 2 * kp);
    const int32_t *const end = a + n;
    if (nch == 1) {
        for (; a != end; a++, w += K) {
            const int8x16_t v = vldrbq_s8(w);
            a[0] = vmladavq_s8(x0, v);
            a[TC_MVE_OCB] = vmladavq_s8(x1, v);
            a[2 * TC_MVE_OCB] = vmladavq_s8(x2, v);
        }
    } else {
        const int8x16_t y0 = vldrbq_s8(col + 16), y1 = vldrbq_s8(col + kp + 16);
        const int8x16_t y2 = vldrbq_s8(col + 2 * kp + 16);
        for (; a != end; a++, w += K) {
            const int8x16_t v = vldrbq_s8(w), u = vldrbq_s8(w + 16);
            a[0] = vmladavaq_s8(vmladavq_s8(x0, v), y0, u);
            a[TC_MVE_OCB] = vmladavaq_s8(vmladavq_s8(x1, v), y1, u);
            a[2 * TC_MVE_OCB] = vmladavaq_s8(vmladavq_s8(x2, v), y2, u);
        }
    }
}

/* Sums of n <= TC_MVE_OCB output channels (weights w on, K apart) of the pixels in the column's
 * slots into a (tc_mve_pair3's layout), channels in pairs; an odd last one is paired with
 * itself. One loop per slot count, so that nothing but pointers lives across the pairs. */
__attribute__((noinline)) static void tc_mve_sums3(const int8_t *col, int32_t kp, int32_t nch,
                                                   const int8_t *w, int32_t K, int32_t n,
                                                   int32_t *a)
{
    const int8_t *const end = w + (n & ~1) * K;
    for (; w != end; w += 2 * K, a += 2) {
        tc_mve_pair3(col, kp, nch, w, w + K, a);
    }
    if (n & 1) {
        tc_mve_pair3(col, kp, nch, w, w, a);
    }
}

__attribute__((noinline)) static void tc_mve_sums2(const int8_t *col, int32_t kp, int32_t nch,
                                                   const int8_t *w, int32_t K, int32_t n,
                                                   int32_t *a)
{
    const int8_t *const end = w + (n & ~1) * K;
    for (; w != end; w += 2 * K, a += 2) {
        tc_mve_pair2(col, kp, nch, w, w + K, a);
    }
    if (n & 1) {
        tc_mve_pair2(col, kp, nch, w, w, a);
    }
}

TC_INLINE int32x4_t tc_mve_rq(int32x4_t x, int32x4_t b, int32x4_t m, int32x4_t left,
                              int32x4_t right, int lsh, int32_t off, int32x4_t lo, int32x4_t hi)
{
    x = vaddq_s32(x, b);
    if (lsh) {
        x = vshlq_s32(x, left);
    }
    x = vqrdmulhq_s32(x, m);
    x = vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)), right);
    return vminq_s32(vmaxq_s32(vaddq_n_s32(x, off), lo), hi);
}

static void tc_mve_outs(const tc_conv_params_t *p, const int32_t *a, int32_t ob, int32_t oe,
                        int8_t *const *o, int32_t cnt, int lsh)
{
    const int32_t *const bias = p->bias_eff, *const mult = p->mult, *const shift = p->shift;
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    const int32x4_t zero = vdupq_n_s32(0);
    const int32_t off = p->out_offset;
    int8_t *const o0 = o[0], *const o1 = o[1], *const o2 = o[2];
    int32_t oc;
    for (oc = ob; oc < oe; oc += 4, a += 4) {
        const int32x4_t b = vld1q_s32(bias + oc), m = vld1q_s32(mult + oc);
        const int32x4_t sh = vld1q_s32(shift + oc);
        const int32x4_t left = vmaxq_s32(sh, zero), right = vminq_s32(sh, zero);
        const int32x4_t y0 = tc_mve_rq(vld1q_s32(a), b, m, left, right, lsh, off, lo, hi);
        if (oe - oc >= 4) {
            vstrbq_s32(o0 + oc, y0);
            if (cnt > 1) {
                vstrbq_s32(o1 + oc, tc_mve_rq(vld1q_s32(a + TC_MVE_OCB), b, m, left, right, lsh,
                                              off, lo, hi));
            }
            if (cnt > 2) {
                vstrbq_s32(o2 + oc, tc_mve_rq(vld1q_s32(a + 2 * TC_MVE_OCB), b, m, left, right,
                                              lsh, off, lo, hi));
            }
        } else {
            const mve_pred16_t pr = vctp32q((uint32_t)(oe - oc));
            vstrbq_p_s32(o0 + oc, y0, pr);
            if (cnt > 1) {
                vstrbq_p_s32(o1 + oc, tc_mve_rq(vld1q_s32(a + TC_MVE_OCB), b, m, left, right,
                                                lsh, off, lo, hi), pr);
            }
            if (cnt > 2) {
                vstrbq_p_s32(o2 + oc, tc_mve_rq(vld1q_s32(a + 2 * TC_MVE_OCB), b, m, left,
                                                right, lsh, off, lo, hi), pr);
            }
        }
#if TC_ONNX_VARIANT
        {
            int32_t i, s;
            for (i = oc; i < oe && i < oc + 4; i++) {
                if (shift[i] > 31) {
                    for (s = 0; s < cnt; s++) {
                        o[s][i] = tc_out_s8(a[s * TC_MVE_OCB + i - oc] + bias[i], mult[i],
                                            shift[i], off, p->act_min, p->act_max);
                    }
                }
            }
        }
#endif
    }
}

#if TC_ONNX_VARIANT && (__ARM_FEATURE_MVE & 2) && TC_FPU_SP
/* An ONNX layer's outputs (every channel's shift marks the variant: tc_qmath.h), four lanes at
 * a time as tc_requant_onnx computes each on this core: float(acc) (VCVT, to nearest even, as
 * the scalar VCVT), times the scale (the multiplier's IEEE bits), rounded to nearest even
 * (VCVTN); the zero point added with saturation, so an out-of-range value clamps as the scalar
 * path's SSAT #16 then clamp does. */
static void tc_mve_outs_onnx(const tc_conv_params_t *p, const int32_t *a, int32_t ob,
                             int32_t oe, int8_t *const *o, int32_t cnt)
{
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    const int32_t off = p->out_offset;
    int32_t oc, s;
    for (oc = ob; oc < oe; oc += 4, a += 4) {
        const mve_pred16_t pr = vctp32q((uint32_t)(oe - oc));
        const int32x4_t b = vld1q_s32(p->bias_eff + oc);
        const float32x4_t sc = vreinterpretq_f32_s32(vld1q_s32(p->mult + oc));
        for (s = 0; s < cnt; s++) {
            const float32x4_t v = vmulq_f32(vcvtq_f32_s32(vaddq_s32(vld1q_s32(a + s * TC_MVE_OCB),
                                                                     b)), sc);
            int32x4_t y = vqaddq_n_s32(vcvtnq_s32_f32(v), off);
            y = vminq_s32(vmaxq_s32(y, lo), hi);
            vstrbq_p_s32(o[s] + oc, y, pr);
        }
    }
}
#endif

/* Every output channel of the pixels in the column's first cnt slots, slot s's to o[s]. */
static void tc_mve_gemm(const tc_conv_params_t *p, const tc_mcol_t *m, int8_t *const *o,
                        int32_t cnt)
{
    const int32_t OC = p->out_c, K = p->k_h * p->k_w * p->in_c;
    int32_t a[3 * TC_MVE_OCB] __attribute__((aligned(16)));
    int32_t ob;
    const int lsh = m->lsh;
    for (ob = 0; ob < OC; ob += TC_MVE_OCB) {
        const int32_t oe = OC - ob < TC_MVE_OCB ? OC : ob + TC_MVE_OCB;
        if (m->slots == 3 && m->nch <= 2) {
            tc_mve_sums3_short(m->col, m->nch << 4, m->nch, p->weights + ob * K, K, oe - ob, a);
        } else if (m->slots == 3) {
            tc_mve_sums3(m->col, m->nch << 4, m->nch, p->weights + ob * K, K, oe - ob, a);
        } else {
            tc_mve_sums2(m->col, m->nch << 4, m->nch, p->weights + ob * K, K, oe - ob, a);
        }
#if TC_ONNX_VARIANT && (__ARM_FEATURE_MVE & 2) && TC_FPU_SP
        if (m->onnx) {
            tc_mve_outs_onnx(p, a, ob, oe, o, cnt);
            continue;
        }
#endif
        tc_mve_outs(p, a, ob, oe, o, cnt, lsh);
    }
}

/* Output pixels [0, npix) out of place (counted over batches, rows and columns), a block of
 * slots at a time. */
static void tc_mve_conv_all(const tc_conv_params_t *p, const tc_mcol_t *m, const int8_t *in,
                            int8_t *out, int32_t npix)
{
    const int32_t HWC = p->in_h * p->in_w * p->in_c, OC = p->out_c;
    int8_t *o[3] = {0, 0, 0};
    int32_t idx, n = 0, oy = 0, ox = 0, s;
    tc_mwin_t g;
    tc_mwin_init(p, &g);
    for (idx = 0; idx < npix; idx += m->slots) {
        const int32_t cnt = npix - idx < m->slots ? npix - idx : m->slots;
        for (s = 0; s < cnt; s++) {
            tc_mcol_pixel(p, &g, m, in + n * HWC, oy * p->stride_h - p->pad_h,
                          ox * p->stride_w - p->pad_w, s);
            o[s] = out + (idx + s) * OC;
            if (++ox == p->out_w) {
                ox = 0;
                if (++oy == p->out_h) {
                    oy = 0;
                    n++;
                }
            }
        }
        tc_mve_gemm(p, m, o, cnt);
    }
}

/* 1x1, stride 1, in place (input d = in - out bytes from the output, tc_pw_forward): a block's
 * pixels are copied to the column first, so their own input is free and the outputs go
 * straight to their place; forwards no output reaches input of a later block, backwards none
 * reaches an earlier one's. */
static void tc_mve_pw_inplace(const tc_conv_params_t *p, const tc_mcol_t *m, const int8_t *in,
                              int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, N = p->batches * p->in_h * p->in_w;
    const int32_t S = m->slots, fwd = tc_pw_forward((int32_t)(in - out), N, C, OC);
    int8_t *o[3] = {0, 0, 0};
    int32_t i, s;
    for (i = 0; i < N; i += S) {
        const int32_t cnt = N - i < S ? N - i : S, i0 = fwd ? i : N - i - cnt;
        for (s = 0; s < cnt; s++) {
            tc_mve_copy(tc_mcol_slot(m, s), in + (i0 + s) * C, C);
            o[s] = out + (i0 + s) * OC;
        }
        tc_mve_gemm(p, m, o, cnt);
    }
}

/* The in-place k x k ring (a stride-1 same-size layer with out_c <= in_c, in == out): input
 * pixel j is last read by the window of output j + D - 1, D = pad_h * W + pad_w + 1, and output
 * j's bytes cover only input pixels <= j. Blocks of the column's slots: the block's windows are
 * copied to the column first; then outputs up to e - D + 1 (e the block's last) may take their
 * place, no later window reading their bytes: the pending ones leave the ring (p->tmp, R =
 * min(D, H * W) slots of out_c bytes) for it, the block's own go straight there, and the rest
 * of the block waits in the ring. At most D - 1 outputs wait at any time, consecutive ones, so
 * slot j mod R never holds two. (tc_conv_ring_walk's rule, for blocks of any size.) */
static void tc_mve_ring(const tc_conv_params_t *p, const tc_mcol_t *m, int8_t *buf)
{
    const int32_t W = p->in_w, C = p->in_c, OC = p->out_c, HW = p->in_h * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW, S = m->slots;
    int8_t *const ring = p->tmp;
    int8_t *o[3] = {0, 0, 0};
    int32_t n, i, s, next;
    tc_mwin_t g;
    tc_mwin_init(p, &g);
    for (n = 0; n < p->batches; n++) {
        const int8_t *const img = buf + n * HW * C;
        int8_t *const dst = buf + n * HW * OC;
        for (i = 0, next = 0; i < HW; i += S) {
            const int32_t cnt = HW - i < S ? HW - i : S, lim = i + cnt - D;
            for (s = 0; s < cnt; s++) {
                tc_mcol_pixel(p, &g, m, img, (i + s) / W - p->pad_h, (i + s) % W - p->pad_w, s);
            }
            for (; next <= lim && next < i; next++) {
                tc_mve_copy(dst + next * OC, ring + (next % R) * OC, OC);
            }
            for (s = 0; s < cnt; s++) {
                o[s] = i + s <= lim ? dst + (i + s) * OC : ring + ((i + s) % R) * OC;
            }
            tc_mve_gemm(p, m, o, cnt);
            if (lim >= next) {
                next = lim + 1;
            }
        }
        for (; next < HW; next++) {
            tc_mve_copy(dst + next * OC, ring + (next % R) * OC, OC);
        }
    }
}

/* The layer with the column at col (bytes cap): 1 when done, 0 when it holds no two slots. */
static int tc_conv_mve_run(const tc_conv_params_t *p, const int8_t *in, int8_t *out, int8_t *col,
                           int32_t cap)
{
    const int32_t C = p->in_c, K = p->k_h * p->k_w * C;
    tc_mcol_t m;
    int32_t oc;
    m.col = col;
    m.nch = (K + 15) >> 4;
    m.lsh = 0;
    m.onnx = 1;
    for (oc = 0; oc < p->out_c; oc++) {
        m.lsh |= p->shift[oc] > 0;
        m.onnx &= p->shift[oc] > 31;
    }
    m.slots = 48 * m.nch <= cap ? 3 : 2;
    if (32 * m.nch > cap) {
        return 0;
    }
    tc_mcol_clear_tail(&m, K);
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * p->in_h * p->in_w, C, p->out_c)) {
        tc_mve_pw_inplace(p, &m, in, out);
    } else if (p->inplace && in == out) {
        tc_mve_ring(p, &m, out);
    } else {
        tc_mve_conv_all(p, &m, in, out, p->batches * p->out_h * p->out_w);
    }
    return 1;
}

__attribute__((noinline)) static int tc_conv_mve_stack(const tc_conv_params_t *p,
                                                       const int8_t *in, int8_t *out)
{
    int8_t col[TC_MVE_STACK_COL] __attribute__((aligned(16)));
    return tc_conv_mve_run(p, in, out, col, TC_MVE_STACK_COL);
}

int tc_conv_s8_mve(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t K = p->k_h * p->k_w * p->in_c;
    const int32_t kp = ((K + 15) >> 4) << 4, cap = p->col ? tc_col16_bytes(K, p->in_c) : 0;
    if (p->groups != 1) {
        return 0;
    }
    /* three slots where the planner's column or the stack holds them, else two */
    if (3 * kp <= cap || (2 * kp <= cap && 3 * kp > TC_MVE_STACK_COL)) {
        return tc_conv_mve_run(p, in, out, p->col, cap);
    }
    return tc_conv_mve_stack(p, in, out);
}

#endif /* TC_MVE */
