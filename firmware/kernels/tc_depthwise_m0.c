/* tinycompile runtime: DEPTHWISE_CONV_2D, int8, the ARMv6-M (Cortex-M0/M0+) path
 * (tc_dwconv_s8_m0; entered from tc_dwconv_s8 in tc_depthwise.c on __ARM_ARCH_6M__).
 *
 * Same arithmetic as tc_depthwise.c (TFLM's reference DepthwiseConvPerChannel): interior
 * windows are pure int8 dot products from bias_eff, border windows bias + sum((x + in_offset)
 * * w) over their valid taps, then tc_requant (on ARMv6-M tc_qmath.h's tc_requant16), output
 * zero point, clamp. What differs is only what ARMv6-M pays for:
 *   - no division anywhere (ARMv6-M has no divide instruction; the portable border path's tap
 *     ranges call __aeabi_idiv per pixel): tap ranges by comparison, input channels of a depth
 *     multiplier by counting;
 *   - one loop for both the ordinary and the in-place layout: blocks of (up to) four output
 *     channels, output pixels in raster order, each pixel's outputs stored either straight to
 *     the output or (in place) to the ring slot of tc_depthwise.h, copied out byte by byte
 *     when the ring is full (no memcpy call for four bytes);
 *   - 3x3 windows at stride 1: two horizontally adjacent pixels per pass, each row's four
 *     inputs and three weights loaded once for both (tc_m0_dw3x3_pair, Thumb-1); border
 *     pixels of such layers through a copy of their taps with the input zero point outside
 *     the image (tc_dw_m0_window); other interior 3x3 windows unrolled;
 *   - depth multipliers in fours (tc_dwconv_dm4_m0 in tc_depthwise_dm4_m0.c, through
 *     tc_dwconv_s8_kxk): a block's four output channels share one input channel; its input
 *     rows are copied once into a zero-point-padded stack ring, and each input byte meets four
 *     weights (tc_m0_dw1x4, Thumb-1): no border case, 3.5 instructions per MAC in the loop;
 *   - tc_requant is tc_requant16 here (tc_qmath.h): no 64x64-bit multiply; an ONNX layer's
 *     (tc_qmath.h's ONNX variant) is chosen once per call of the pixel routines.
 * Weights: the compiler's blocks of four channels, [ceil(out_c / 4)][k_h][k_w][4]
 * (tc_depthwise.h), unchanged.
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

/* Taps t in [*lo, *hi) with 0 <= o + dil * t < size, by comparison (no division). */
static void tc_dw_m0_taps(int32_t o, int32_t dil, int32_t k, int32_t size, int32_t *lo,
                          int32_t *hi)
{
    int32_t a = 0, b = k;
    while (a < k && o + a * dil < 0) {
        a++;
    }
    while (b > a && o + (b - 1) * dil >= size) {
        b--;
    }
    *lo = a;
    *hi = b;
}

/* Interior 3x3 window of one channel: x at the first tap, w at the first tap's weight (taps 4
 * bytes apart), columns xs apart, rows rs apart. */
TC_INLINE int32_t tc_dw_m0_3x3(const int8_t *x, const int8_t *w, int32_t xs, int32_t rs,
                               int32_t acc)
{
    const int8_t *x1 = x + xs, *x2 = x1 + xs;
    acc += x[0] * w[0];
    acc += x1[0] * w[4];
    acc += x2[0] * w[8];
    acc += x[rs] * w[12];
    acc += x1[rs] * w[16];
    acc += x2[rs] * w[20];
    x += 2 * rs;
    x1 += 2 * rs;
    x2 += 2 * rs;
    acc += x[0] * w[24];
    acc += x1[0] * w[28];
    acc += x2[0] * w[32];
    return acc;
}

/* acc[0] += the 3x3 window sum of one channel at x, acc[1] += the same at x + xs: two
 * horizontally adjacent output pixels at stride 1, dilation 1 along the row (columns xs
 * apart, rows rs apart), weights w[4 * tap]. Each row loads its four inputs and three weights
 * once for both pixels: 24 instructions per 6 MACs on ARMv6-M. */
#if defined(__ARM_ARCH_6M__)
/* r0 x, r1 w, r2 xs, r3 rs, acc on the stack; r8 / r9 the sums, r10 rs */
#define TC_DW_M0_ROW(w0, w1, w2)                                                                \
    "ldrb r5, [r1, #" #w0 "]\n\t"                                                              \
    "sxtb r5, r5\n\t"                                                                           \
    "ldrb r6, [r0, #0]\n\t"                                                                    \
    "sxtb r6, r6\n\t"                                                                           \
    "muls r6, r5\n\t"                                                                           \
    "add r8, r6\n\t"                                                                            \
    "ldrsb r6, [r0, r2]\n\t"                                                                   \
    "muls r5, r6\n\t"                                                                           \
    "add r9, r5\n\t"                                                                            \
    "ldrb r5, [r1, #" #w1 "]\n\t"                                                              \
    "sxtb r5, r5\n\t"                                                                           \
    "muls r6, r5\n\t"                                                                           \
    "add r8, r6\n\t"                                                                            \
    "ldrsb r6, [r0, r3]\n\t"                                                                   \
    "muls r5, r6\n\t"                                                                           \
    "add r9, r5\n\t"                                                                            \
    "ldrb r5, [r1, #" #w2 "]\n\t"                                                              \
    "sxtb r5, r5\n\t"                                                                           \
    "muls r6, r5\n\t"                                                                           \
    "add r8, r6\n\t"                                                                            \
    "ldrsb r6, [r0, r4]\n\t"                                                                   \
    "muls r6, r5\n\t"                                                                           \
    "add r9, r6\n\t"                                                                            \
    "add r0, r10\n\t"
__attribute__((naked)) static void tc_m0_dw3x3_pair(const int8_t *x TC_M0_ARG,
                                                    const int8_t *w TC_M0_ARG,
                                                    int32_t xs TC_M0_ARG, int32_t rs TC_M0_ARG,
                                                    int32_t *acc TC_M0_ARG)
{
    __asm__(".syntax unified\n\t"
            "push {r4, r5, r6, r7, lr}\n\t"
            "mov r4, r8\n\t"
            "mov r5, r9\n\t"
            "mov r6, r10\n\t"
            "push {r4, r5, r6}\n\t"
            "mov r10, r3\n\t"
            "movs r3, #0\n\t"
            "mov r8, r3\n\t"
            "mov r9, r3\n\t"
            "adds r3, r2, r2\n\t" /* 2 xs */
            "adds r4, r3, r2\n\t" /* 3 xs */
            TC_DW_M0_ROW(0, 4, 8)
            TC_DW_M0_ROW(12, 16, 20)
            "adds r1, #24\n\t"
            TC_DW_M0_ROW(0, 4, 8)
            "ldr r5, [sp, #32]\n\t"
            "ldr r6, [r5, #0]\n\t"
            "add r6, r8\n\t"
            "str r6, [r5, #0]\n\t"
            "ldr r6, [r5, #4]\n\t"
            "add r6, r9\n\t"
            "str r6, [r5, #4]\n\t"
            "pop {r4, r5, r6}\n\t"
            "mov r8, r4\n\t"
            "mov r9, r5\n\t"
            "mov r10, r6\n\t"
            "pop {r4, r5, r6, r7, pc}\n\t"
            ".syntax divided");
}
#else
static void tc_m0_dw3x3_pair(const int8_t *x, const int8_t *w, int32_t xs, int32_t rs,
                             int32_t *acc)
{
    int32_t ky, kx, a = 0, b = 0;
    for (ky = 0; ky < 3; ky++) {
        for (kx = 0; kx < 3; kx++) {
            a += x[ky * rs + kx * xs] * w[(ky * 3 + kx) * 4];
            b += x[ky * rs + (kx + 1) * xs] * w[(ky * 3 + kx) * 4];
        }
    }
    acc[0] += a;
    acc[1] += b;
}
#endif

/* Per-call constants the pixel routines need. */
typedef struct {
    const tc_conv_params_t *p;
    int32_t xs, rs, wrs; /* input steps between taps, rows; weight step between rows */
    int32_t off;         /* in_offset */
} tc_dw_m0_q_t;

/* The routines below that requantize, and the layer's loop, are written once with the
 * requantization variant RQ (0 TFLite, 1 ONNX: tc_out_s8_m0v's compile-time argument) and
 * instantiated twice (fn, and fn_o for ONNX); tc_dwconv_s8_m0 picks the instance once per
 * layer. */
#define TC_DW_M0_CALL(fn, args)                                                                 \
    do {                                                                                        \
        if (RQ) {                                                                               \
            fn##_o args;                                                                        \
        } else {                                                                                \
            fn args;                                                                            \
        }                                                                                       \
    } while (0)

/* Channels c0 .. c0 + cn - 1 of an interior pixel: x at the window's first tap (channel 0),
 * wb at the block's weights, icc the channels' input channel numbers; outputs to o[0 .. cn). */
TC_INLINE void tc_dw_m0_pixel_r(const tc_dw_m0_q_t *q, const int8_t *x, const int8_t *wb,
                                int32_t c0, int32_t cn, int32_t KH, int32_t KW,
                                const int32_t *icc, int32_t xs, int32_t rs, int8_t *o,
                                const int RQ)
{
    const tc_conv_params_t *p = q->p;
    const int32_t *be = p->bias_eff + c0, *mult = p->mult + c0, *shift = p->shift + c0;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t c;
    if (KH == 3 && KW == 3) {
        for (c = 0; c < cn; c++) {
            const int32_t acc = tc_dw_m0_3x3(x + icc[c], wb + c, xs, rs, be[c]);
            o[c] = tc_out_s8_m0v(acc, mult[c], shift[c], oo, lo, hi, RQ);
        }
    } else {
        for (c = 0; c < cn; c++) {
            const int32_t acc =
                tc_dw_taps_sum(x + icc[c], wb + c, KH, KW, xs, rs, KW * 4, 0, be[c]);
            o[c] = tc_out_s8_m0v(acc, mult[c], shift[c], oo, lo, hi, RQ);
        }
    }
}

static void tc_dw_m0_pixel(const tc_dw_m0_q_t *q, const int8_t *x, const int8_t *wb, int32_t c0,
                           int32_t cn, int32_t KH, int32_t KW, const int32_t *icc, int32_t xs,
                           int32_t rs, int8_t *o)
{
    tc_dw_m0_pixel_r(q, x, wb, c0, cn, KH, KW, icc, xs, rs, o, 0);
}

__attribute__((noinline)) static void tc_dw_m0_pixel_o(const tc_dw_m0_q_t *q, const int8_t *x,
                                                       const int8_t *wb, int32_t c0, int32_t cn,
                                                       int32_t KH, int32_t KW, const int32_t *icc,
                                                       int32_t xs, int32_t rs, int8_t *o)
{
    tc_dw_m0_pixel_r(q, x, wb, c0, cn, KH, KW, icc, xs, rs, o, 1);
}

/* The same for a border pixel: taps nky x nkx from x (channel 0 of the first valid tap) and w
 * (that tap's weights in the block), bias + sum((x + in_offset) * w). */
static void tc_dw_m0_pixel_border(const tc_dw_m0_q_t *q, const int8_t *x, const int8_t *w,
                                  int32_t c0, int32_t cn, int32_t nky, int32_t nkx,
                                  const int32_t *icc, int8_t *o)
{
    const tc_conv_params_t *p = q->p;
    int32_t c;
    for (c = 0; c < cn; c++) {
        const int32_t oc = c0 + c;
        const int32_t acc = tc_dw_taps_sum(x + icc[c], w + c, nky, nkx, q->xs, q->rs, q->wrs,
                                              q->off, p->bias ? p->bias[oc] : 0);
        o[c] = tc_m0_out1(acc, p->mult[oc], p->shift[oc], p->out_offset, p->act_min, p->act_max);
    }
}

/* Channels c0 .. c0 + cn - 1 of two adjacent interior pixels (3x3, stride 1, dilation 1 along
 * the row): x at the first pixel's first tap, outputs to oa and ob. */
TC_INLINE void tc_dw_m0_pair_r(const tc_dw_m0_q_t *q, const int8_t *x, const int8_t *wb,
                               int32_t c0, int32_t cn, const int32_t *icc, int32_t xs, int32_t rs,
                               int8_t *oa, int8_t *ob, const int RQ)
{
    const tc_conv_params_t *p = q->p;
    const int32_t *be = p->bias_eff + c0, *mult = p->mult + c0, *shift = p->shift + c0;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t c;
    for (c = 0; c < cn; c++) {
        int32_t acc[2];
        acc[0] = acc[1] = be[c];
        tc_m0_dw3x3_pair(x + icc[c], wb + c, xs, rs, acc);
        oa[c] = tc_out_s8_m0v(acc[0], mult[c], shift[c], oo, lo, hi, RQ);
        ob[c] = tc_out_s8_m0v(acc[1], mult[c], shift[c], oo, lo, hi, RQ);
    }
}

static void tc_dw_m0_pair(const tc_dw_m0_q_t *q, const int8_t *x, const int8_t *wb, int32_t c0,
                          int32_t cn, const int32_t *icc, int32_t xs, int32_t rs, int8_t *oa,
                          int8_t *ob)
{
    tc_dw_m0_pair_r(q, x, wb, c0, cn, icc, xs, rs, oa, ob, 0);
}

__attribute__((noinline)) static void tc_dw_m0_pair_o(const tc_dw_m0_q_t *q, const int8_t *x,
                                                      const int8_t *wb, int32_t c0, int32_t cn,
                                                      const int32_t *icc, int32_t xs, int32_t rs,
                                                      int8_t *oa, int8_t *ob)
{
    tc_dw_m0_pair_r(q, x, wb, c0, cn, icc, xs, rs, oa, ob, 1);
}

/* Copy of the 3 x ncols taps whose top-left is input (iy0, ix0) (rows dil_h apart, columns
 * adjacent), four bytes per tap: output channel c0 + c's input (icc[c]) or, outside the image,
 * the input zero point, which adds w * (zero_point + in_offset) = 0 with bias_eff, like the
 * reference's skipped tap. */
static void tc_dw_m0_window(const tc_conv_params_t *p, const int8_t *img, int32_t iy0,
                            int32_t ix0, int32_t ncols, int32_t c0, int32_t cn, const int32_t *icc,
                            int8_t *win)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c;
    const int8_t zp = (int8_t)(-p->in_offset);
    const int four = cn == 4 && p->depth_mult == 1; /* four adjacent input channels, */
    /* word-aligned in every pixel (win is): one LDR / STR per tap */
    const int words = four && ((((uintptr_t)(img + c0)) | (uintptr_t)C) & 3) == 0;
    const uint32_t zp4 = ((uint32_t)(uint8_t)zp) * 0x01010101u;
    int32_t ky, kx, c;
    for (ky = 0; ky < 3; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        const int row_in = (uint32_t)iy < (uint32_t)H;
        const int8_t *x = img + (iy * W + ix0) * C;
        for (kx = 0; kx < ncols; kx++, win += 4, x += C) {
            const int32_t ix = ix0 + kx;
            if (!row_in || (uint32_t)ix >= (uint32_t)W) {
                *(uint32_t *)(void *)win = zp4;
            } else if (words) {
                *(uint32_t *)(void *)win = *(const uint32_t *)(const void *)(x + c0);
            } else if (four) {
                win[0] = x[c0];
                win[1] = x[c0 + 1];
                win[2] = x[c0 + 2];
                win[3] = x[c0 + 3];
            } else {
                for (c = 0; c < cn; c++) {
                    win[c] = x[icc[c]];
                }
            }
        }
    }
}

TC_INLINE void tc_dwconv_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out,
                            const int RQ)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t KH = p->k_h, KW = p->k_w, OH = p->out_h, OW = p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w;
    const int32_t xs = dw * C, rs = dh * W * C, wrs = KW * 4, bstride = KH * KW * 4;
    /* in place: outputs wait in the ring (tc_depthwise.h), D pixels behind their input */
    const int inplace = p->inplace && in == out;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < H * W ? D : H * W;
    /* two pixels per pass: 3x3, stride 1 and dilation 1 along the row (tc_m0_dw3x3_pair) */
    const int pairs = KH == 3 && KW == 3 && sw == 1 && dw == 1;
    int8_t *const ring_end = inplace ? p->tmp + 4 * R : p->tmp;
    static const int32_t ident[4] = {0, 1, 2, 3};
    tc_dw_m0_q_t q;
    int32_t n, c0, ic0 = 0, m0 = 0;
    q.p = p;
    q.xs = xs;
    q.rs = rs;
    q.wrs = wrs;
    q.off = p->in_offset;

    for (c0 = 0; c0 < OC; c0 += 4) {
        const int32_t cn = OC - c0 < 4 ? OC - c0 : 4;
        const int8_t *const wb = p->weights + (c0 >> 2) * bstride;
        int32_t icc[4], c, ic = ic0, m = m0;
        for (c = 0; c < cn; c++) { /* input channel of output channel c0 + c */
            icc[c] = ic;
            if (++m == DM) {
                m = 0;
                ic++;
            }
        }
        ic0 = ic;
        m0 = m;
        for (n = 0; n < p->batches; n++) {
            const int8_t *const img = in + n * H * W * C;
            int8_t *const dst = out + n * OH * OW * OC;
            int8_t *slot = p->tmp;
            int32_t i = 0, oy, ox, k;
            for (oy = 0; oy < OH; oy++) {
                const int32_t iy0 = oy * sh - p->pad_h;
                int32_t ky0, ky1;
                tc_dw_m0_taps(iy0, dh, KH, H, &ky0, &ky1);
                for (ox = 0; ox < OW; ox++, i++) {
                    const int32_t ix0 = ox * sw - p->pad_w;
                    int8_t *o;
                    int32_t kx0, kx1;
                    tc_dw_m0_taps(ix0, dw, KW, W, &kx0, &kx1);
                    if (inplace) {
                        if (i >= D) {
                            int8_t *d = dst + (i - D) * C + c0;
                            for (c = 0; c < cn; c++) {
                                d[c] = slot[c];
                            }
                        }
                        o = slot;
                    } else {
                        o = dst + i * OC + c0;
                    }
                    if (pairs && ox + 1 < OW) {
                        /* this pixel and the next; the next one's ring slot is emptied only
                         * after this one has read its whole window */
                        int8_t ob[4];
                        if (ky1 - ky0 == 3 && ix0 >= 0 && ix0 + 3 < W) {
                            TC_DW_M0_CALL(tc_dw_m0_pair, (&q, img + (iy0 * W + ix0) * C, wb, c0,
                                                          cn, icc, xs, rs, o, ob));
                        } else { /* a border: through a copy of the 3 x 4 taps */
                            int8_t win[3 * 4 * 4] __attribute__((aligned(4)));
                            tc_dw_m0_window(p, img, iy0, ix0, 4, c0, cn, icc, win);
                            TC_DW_M0_CALL(tc_dw_m0_pair,
                                          (&q, win, wb, c0, cn, ident, 4, 16, o, ob));
                        }
                        ox++;
                        i++;
                        if (inplace) {
                            slot += 4;
                            if (slot == ring_end) {
                                slot = p->tmp;
                            }
                            if (i >= D) {
                                int8_t *d = dst + (i - D) * C + c0;
                                for (c = 0; c < cn; c++) {
                                    d[c] = slot[c];
                                }
                            }
                            o = slot;
                        } else {
                            o = dst + i * OC + c0;
                        }
                        for (c = 0; c < cn; c++) {
                            o[c] = ob[c];
                        }
                    } else if (ky1 - ky0 == KH && kx1 - kx0 == KW) {
                        TC_DW_M0_CALL(tc_dw_m0_pixel, (&q, img + (iy0 * W + ix0) * C, wb, c0,
                                                       cn, KH, KW, icc, xs, rs, o));
                    } else if (pairs) { /* a border: through a copy of the 3 x 3 taps */
                        int8_t win[3 * 3 * 4] __attribute__((aligned(4)));
                        tc_dw_m0_window(p, img, iy0, ix0, 3, c0, cn, icc, win);
                        TC_DW_M0_CALL(tc_dw_m0_pixel,
                                      (&q, win, wb, c0, cn, 3, 3, ident, 4, 12, o));
                    } else {
                        tc_dw_m0_pixel_border(
                            &q, img + ((iy0 + ky0 * dh) * W + ix0 + kx0 * dw) * C,
                            wb + (ky0 * KW + kx0) * 4, c0, cn, ky1 - ky0, kx1 - kx0, icc, o);
                    }
                    if (inplace) {
                        slot += 4;
                        if (slot == ring_end) {
                            slot = p->tmp;
                        }
                    }
                }
            }
            if (inplace) {
                for (k = H * W - R; k < H * W; k++) { /* the oldest pending output is at slot */
                    int8_t *d = dst + k * C + c0;
                    for (c = 0; c < cn; c++) {
                        d[c] = slot[c];
                    }
                    slot += 4;
                    if (slot == ring_end) {
                        slot = p->tmp;
                    }
                }
            }
        }
    }
}

__attribute__((noinline)) static void tc_dwconv_m0_onnx(const tc_conv_params_t *p,
                                                        const int8_t *in, int8_t *out)
{
    tc_dwconv_m0(p, in, out, 1);
}

void tc_dwconv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    if (TC_M0_ONNX(p->shift[0])) {
        tc_dwconv_m0_onnx(p, in, out);
        return;
    }
    tc_dwconv_m0(p, in, out, 0);
}

/* tc_dwconv_s8_small: a small image (a MobileNet's last layers, 3x3 to 7x7) is mostly border,
 * so tc_dwconv_m0 sends most windows through tc_dw_m0_window one by one and, in place, every
 * output through the ring. Here each block of (up to) four channels is copied once to col,
 * with the input zero point around it, over every tap any window reads (BH x BW taps of four
 * bytes: the compiler's arena buffer, ops/depthwise.py); every pixel is then an interior one
 * of the copy (two at a time where tc_m0_dw3x3_pair applies) and its outputs go straight to
 * the output: in place too (col is then the layer's temporary, tmp), since a block's own
 * input channels are all in the copy before its first output replaces them (in place means
 * depth multiplier 1), as TinyEngine's in-place depthwise copies a channel at a time. Without
 * col, or with rows not one apart (the copy takes them three at a time), tc_dwconv_s8_m0. */
#if defined(__ARM_ARCH_6M__) /* elsewhere tc_dwconv_s8_small is tc_dwconv_s8 (tc_depthwise.h) */
__attribute__((noinline)) static void tc_dw_m0_small(const tc_conv_params_t *p,
                                                     const int8_t *in, int8_t *out)
{
    static const int32_t ident[4] = {0, 1, 2, 3};
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t KH = p->k_h, KW = p->k_w, OH = p->out_h, OW = p->out_w;
    const int32_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w;
    const int32_t BH = (OH - 1) * sh + (KH - 1) * dh + 1, BW = (OW - 1) * sw + (KW - 1) * dw + 1;
    const int32_t bxs = dw * 4, brs = dh * BW * 4, sx = sw * 4, sy = sh * BW * 4;
    const int pairs = KH == 3 && KW == 3 && sw == 1 && dw == 1;
    const int RQ = TC_M0_ONNX(p->shift[0]);
    int8_t *const buf = p->col;
    tc_dw_m0_q_t q;
    int32_t n, c0, ic = 0, m = 0;
    q.p = p;
    q.xs = dw * C;
    q.rs = dh * W * C;
    q.wrs = KW * 4;
    q.off = p->in_offset;
    for (c0 = 0; c0 < OC; c0 += 4) {
        const int32_t cn = OC - c0 < 4 ? OC - c0 : 4;
        const int8_t *const wb = p->weights + (c0 >> 2) * KH * KW * 4;
        int32_t icc[4], c;
        for (c = 0; c < cn; c++) { /* input channel of output channel c0 + c */
            icc[c] = ic;
            if (++m == DM) {
                m = 0;
                ic++;
            }
        }
        for (n = 0; n < p->batches; n++) {
            const int8_t *x = buf;
            int8_t *o = out + n * OH * OW * OC + c0;
            int32_t oy, ox;
            /* three rows at a time (rows dil_h = 1 apart), the last three rows at the end */
            for (oy = 0; oy < BH; oy += 3) {
                const int32_t y = oy < BH - 3 ? oy : BH - 3;
                tc_dw_m0_window(p, in + n * H * W * C, y - p->pad_h, -p->pad_w, BW, c0, cn, icc,
                                buf + y * BW * 4);
            }
            for (oy = 0; oy < OH; oy++, x = buf + oy * sy) {
                for (ox = 0; ox < OW; ox++, x += sx, o += OC) {
                    if (pairs && ox + 1 < OW) {
                        TC_DW_M0_CALL(tc_dw_m0_pair, (&q, x, wb, c0, cn, ident, 4, brs, o, o + OC));
                        ox++;
                        x += sx;
                        o += OC;
                    } else {
                        TC_DW_M0_CALL(tc_dw_m0_pixel,
                                      (&q, x, wb, c0, cn, KH, KW, ident, bxs, brs, o));
                    }
                }
            }
        }
    }
}

/* The layer's own call: without col (or rows not one apart), tc_dwconv_s8_m0, from a frame
 * of its own, so that neither path's stack holds the other's. */
void tc_dwconv_s8_small(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    if (p->col == 0 || p->dil_h != 1 || (p->out_h - 1) * p->stride_h + p->k_h < 3) {
        tc_dwconv_s8_m0(p, in, out);
        return;
    }
    tc_dw_m0_small(p, in, out);
}
#endif
