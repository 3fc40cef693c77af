/* tinycompile runtime: CONV_2D's int16 im2col GEMM, the Cortex-M4/M7 (DSP extension) fast path
 * of tc_conv_s8 (tc_conv2d.c) wherever the planner granted a column buffer (tc_conv2d.h).
 *
 * Two output pixels share one column buffer `col`, laid out for SMLAD: the window of each pixel
 * (k_h * k_w * in_c values, K in all, the input zero point at padded taps) is cut into groups of
 * four values x0..x3, and group g takes 16 bytes at col + 16 g:
 *     int16 [x0 x2 | x1 x3] of pixel 0,  int16 [x0 x2 | x1 x3] of pixel 1
 * which is exactly what SXTB16 / SXTB16 ROR #8 make of a word of four int8, for the input when
 * the column is written and for the weights (TFLite's [out_c][K] layout, unchanged) when it is
 * read: one SMLAD then adds x0 w0 + x2 w2, the next x1 w1 + x3 w3. The GEMM inner step, two
 * pixels x two output channels over one group, is 2 LDRD + 2 LDR + 4 SXTB16 + 8 SMLAD for 16
 * MACs (the int8 paths need 20: every input value is sign-extended once per column instead of
 * once per channel pair). When K % 4 != 0 the last group's missing values are zeros in the
 * column, so the weights read there (the next channel's first bytes, or for the last channel
 * up to 3 bytes past the weights, in flash and always readable) add nothing.
 *
 * With in_c % 4 != 0 (first layers over one or three channels) a window's groups straddle taps,
 * so it is first copied as int8 into a staging area after the groups (ceil(K / 4) * 4 bytes) and
 * converted from there. Buffer size: tc_col16_bytes (the compiler computes the same figure).
 *
 * The arithmetic is TFLM's (the int32 sum of int8 products, the input offset folded into
 * bias_eff, padded taps holding the zero point so they add w * (zero_point + in_offset) = 0),
 * requantized by tc_out_s8_dsp: identical results to the portable path.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

#if TC_DSP

/* Four int8 at src (unaligned) -> one column group slot: [x0 x2] [x1 x3]. */
TC_INLINE void tc_col16_word(const int8_t *src, int16_t *slot)
{
    const uint32_t v = tc_ld32(src);
    const uint32_t lo = tc_sxtb16_lo(v), hi = tc_sxtb16_hi(v);
    uint32_t *d = (uint32_t *)(void *)slot;
    d[0] = lo;
    d[1] = hi;
}

/* n groups of int8 (4 n values from src) into consecutive group slots from slot. */
static int16_t *tc_col16_run(const int8_t *src, int32_t n, int16_t *slot)
{
    for (; n > 0; n--) {
        tc_col16_word(src, slot);
        src += 4;
        slot += 8;
    }
    return slot;
}

/* n groups of the zero point. */
static int16_t *tc_col16_fill(int32_t zp, int32_t n, int16_t *slot)
{
    const uint32_t z = ((uint32_t)zp & 0xFFFFu) * 0x10001u;
    for (; n > 0; n--) {
        uint32_t *d = (uint32_t *)(void *)slot;
        d[0] = z;
        d[1] = z;
        slot += 8;
    }
    return slot;
}

int32_t tc_col16_bytes(int32_t k, int32_t in_c)
{
    const int32_t k4 = (k + 3) / 4;
    return k4 * 16 + (in_c % 4 ? k4 * 4 : 0);
}

void tc_col16_window(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                     int16_t *col, int32_t slot)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, KW = p->k_w, dw = p->dil_w;
    const int32_t zp = -p->in_offset;
    int16_t *s = col + 4 * slot;
    int32_t ky, kx;
    if (C % 4 == 0) {
        const int32_t cg = C / 4;
        for (ky = 0; ky < p->k_h; ky++) {
            const int32_t iy = iy0 + ky * p->dil_h;
            const int8_t *row = img + iy * W * C;
            if (iy < 0 || iy >= H) {
                s = tc_col16_fill(zp, KW * cg, s);
            } else if (dw == 1 && ix0 >= 0 && ix0 + KW <= W) {
                s = tc_col16_run(row + ix0 * C, KW * cg, s);
            } else {
                for (kx = 0; kx < KW; kx++) {
                    const int32_t ix = ix0 + kx * dw;
                    s = ix < 0 || ix >= W ? tc_col16_fill(zp, cg, s)
                                          : tc_col16_run(row + ix * C, cg, s);
                }
            }
        }
    } else {
        /* staging: the int8 window (zeros after it up to the last whole group), then its
         * groups; taps of in_c < 4 bytes copied byte by byte (no library calls) */
        const int32_t K = p->k_h * KW * C, k4 = (K + 3) / 4;
        int8_t *st = (int8_t *)(col + 8 * k4), *d = st;
        int32_t i;
        for (ky = 0; ky < p->k_h; ky++) {
            const int32_t iy = iy0 + ky * p->dil_h;
            const int8_t *row = img + iy * W * C;
            const int row_in = iy >= 0 && iy < H;
            for (kx = 0; kx < KW; kx++) {
                const int32_t ix = ix0 + kx * dw;
                if (row_in && ix >= 0 && ix < W) {
                    const int8_t *src = row + ix * C;
                    for (i = 0; i < C; i++) {
                        *d++ = src[i];
                    }
                } else {
                    for (i = 0; i < C; i++) {
                        *d++ = (int8_t)zp;
                    }
                }
            }
        }
        for (i = K; i < 4 * k4; i++) {
            *d++ = 0;
        }
        tc_col16_run(st, k4, s);
    }
}

void tc_col16_pixels(const int8_t *x, int32_t c, int16_t *col, int32_t slot)
{
    const int32_t n = c / 4, r = c % 4;
    int16_t *s = tc_col16_run(x, n, col + 4 * slot);
    if (r) { /* the last partial group, zero-padded (see tc_conv_col16_pair) */
        int8_t v[4] = {0, 0, 0, 0};
        memcpy(v, x + 4 * n, (size_t)r);
        tc_col16_word(v, s);
    }
}

/* a[0..3] (pixel 0 x channels 0, 1; pixel 1 x channels 0, 1) += ng >= 1 groups of col against
 * the weights w (channel 0) and w + kd (channel 1; kd = 0 repeats channel 0 for a lone last
 * channel). A naked function in assembly: the step needs all fourteen registers, with the
 * column group in r8-r11 so that one LDM loads it (a register list must ascend, which inline
 * assembly cannot promise): LDM + 2 LDR + 4 SXTB16 + 8 SMLAD = 15 instructions for 16 MACs,
 * two steps per loop pass. AAPCS: r0 col, r1 w, r2 kd, r3 ng, a on the stack. */
#define TC_G22_STEP                                                                             \
    "ldm     r0!, {r8, r9, r10, r11}\n\t" /* pixel 0 [x0 x2] [x1 x3], pixel 1 the same */      \
    "ldr     r12, [r1, r2]\n\t"           /* channel 1: four weights */                        \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r5, r8, lr, r5\n\t"                                                                \
    "smlad   r7, r10, lr, r7\n\t"                                                               \
    "smlad   r5, r9, r12, r5\n\t"                                                               \
    "smlad   r7, r11, r12, r7\n\t"                                                              \
    "ldr     r12, [r1], #4\n\t" /* channel 0 */                                                 \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r4, r8, lr, r4\n\t"                                                                \
    "smlad   r6, r10, lr, r6\n\t"                                                               \
    "smlad   r4, r9, r12, r4\n\t"                                                               \
    "smlad   r6, r11, r12, r6\n\t"

#define TC_ARG __attribute__((unused)) /* read by the assembly, not by name */
__attribute__((naked, noinline)) static void tc_gemm22_col16(TC_ARG const int16_t *col,
                                                             TC_ARG const int8_t *w,
                                                             TC_ARG int32_t kd, TC_ARG int32_t ng,
                                                             TC_ARG int32_t *a)
{
    __asm__ volatile("push    {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "ldr     r12, [sp, #36]\n\t"
                     "ldm     r12, {r4, r5, r6, r7}\n\t"
                     "tst     r3, #1\n\t"
                     "beq     2f\n\t" TC_G22_STEP "subs    r3, r3, #1\n\t"
                     "beq     3f\n\t"
                     "2:\n\t"
                     "add     r3, r0, r3, lsl #4\n\t" /* end of the column */
                     "1:\n\t" TC_G22_STEP TC_G22_STEP "cmp     r0, r3\n\t"
                     "bne     1b\n\t"
                     "3:\n\t"
                     "ldr     r12, [sp, #36]\n\t"
                     "stm     r12, {r4, r5, r6, r7}\n\t"
                     "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}
#undef TC_G22_STEP
#undef TC_ARG

/* One channel's two outputs (pixels 0 and 1): tc_out_s8_dsp's arithmetic (tc_requant_conv,
 * output offset, clamp) with the channel's rounding constant formed once, SSAT to int8 and the
 * clamp compares only where the activation narrows the range (full: [-128, 127]). d1 is
 * stored before d0, so a lone pixel passes d1 == d0. */
TC_INLINE void tc_col16_out2(int32_t x0, int32_t x1, int32_t m, int32_t sh, int32_t oo,
                             int32_t lo, int32_t hi, int full, int8_t *d0, int8_t *d1)
{
    int32_t y0, y1;
    if (sh < 0) {
        const uint32_t r1 = ~(uint32_t)sh, t = 1u << r1;
        y0 = tc_requant_rs_dsp(x0, m, r1, t);
        y1 = tc_requant_rs_dsp(x1, m, r1, t);
    } else {
        y0 = tc_requant_conv(x0, m, sh);
        y1 = tc_requant_conv(x1, m, sh);
    }
    y0 = __ssat(y0 + oo, 8);
    y1 = __ssat(y1 + oo, 8);
    if (!full) {
        y0 = tc_clamp(y0, lo, hi);
        y1 = tc_clamp(y1, lo, hi);
    }
    *d1 = (int8_t)y1;
    *d0 = (int8_t)y0;
}

void tc_conv_col16_pair(const tc_conv_params_t *p, const int16_t *col, int32_t k, int8_t *o0,
                        int8_t *o1)
{
    const int32_t OC = p->out_c, ng = (int32_t)((uint32_t)(k + 3) >> 2);
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    const int full = lo <= -128 && hi >= 127;
    const int8_t *w = p->weights;
    int32_t oc;
    if (!o1) {
        o1 = o0; /* lone pixel: its slot-1 results land first and are overwritten */
    }
    for (oc = 0; oc < OC; oc += 2, w += 2 * k) {
        const int32_t two = oc + 1 < OC, kd = two ? k : 0; /* kd = 0: channel 0 twice */
        int32_t a[4];
        a[0] = a[2] = be[oc];
        a[1] = a[3] = be[oc + two];
        tc_gemm22_col16(col, w, kd, ng, a);
        tc_col16_out2(a[0], a[2], mu[oc], sh[oc], oo, lo, hi, full, o0 + oc, o1 + oc);
        if (two) {
            tc_col16_out2(a[1], a[3], mu[oc + 1], sh[oc + 1], oo, lo, hi, full, o0 + oc + 1,
                          o1 + oc + 1);
        }
    }
}

#endif /* TC_DSP */
