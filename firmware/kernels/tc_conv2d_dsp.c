/* tinycompile runtime: CONV_2D's int16 column GEMM on the Cortex-M4/M7 (DSP extension): the
 * column's layout (windows, parts of windows, pixels), the GEMM in assembly and a pixel pair's
 * outputs (tc_conv_col16_pair). The layer walks over it are tc_conv2d_col_dsp.c's.
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
         * groups; taps of in_c < 4 bytes copied byte by byte */
        const int32_t K = p->k_h * KW * C, k4 = (K + 3) / 4;
        int8_t *st = (int8_t *)(col + 8 * k4), *d = st;
        const int inx = dw == 1 && ix0 >= 0 && ix0 + KW <= W; /* whole rows inside across */
        int32_t i;
        for (ky = 0; ky < p->k_h; ky++) {
            const int32_t iy = iy0 + ky * p->dil_h;
            const int8_t *row = img + iy * W * C;
            const int row_in = iy >= 0 && iy < H;
            if (row_in && inx) {
                tc_copy_s8(d, row + ix0 * C, KW * C); /* the whole window row at once */
                d += KW * C;
                continue;
            }
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
        if (K % 4) { /* the last group's values past K: zeros (a word, not a memset call) */
            uint32_t v;
            memcpy(&v, st + 4 * (k4 - 1), 4);
            v &= 0xFFFFFFFFu >> (8 * (4 * k4 - K));
            memcpy(st + 4 * (k4 - 1), &v, 4);
        }
        tc_col16_run(st, k4, s);
    }
}

/* Values [k0, k0 + n) of the window whose top-left tap is input (iy0, ix0) into pixel slot 0
 * or 1 from col's first group (in_c % 4 == 0; k0, n multiples of 4): a part of what
 * tc_col16_window writes, for tc_conv2d_chunk_dsp.c's column chunks. */
void tc_col16_part(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                   int32_t k0, int32_t n, int16_t *col, int32_t slot)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, KW = p->k_w;
    const int32_t zp = -p->in_offset;
    int16_t *s = col + 4 * slot;
    int32_t t, c;
    if (p->dil_w == 1 && iy0 >= 0 && iy0 + (p->k_h - 1) * p->dil_h < H && ix0 >= 0 &&
        ix0 + KW <= W) {
        /* the whole window inside: a run per window row */
        const int32_t R = KW * C;
        int32_t ky = k0 / R, off = k0 - ky * R;
        while (n > 0) {
            const int32_t m = R - off < n ? R - off : n;
            s = tc_col16_run(img + ((iy0 + ky * p->dil_h) * W + ix0) * C + off, m / 4, s);
            n -= m;
            off = 0;
            ky++;
        }
        return;
    }
    t = k0 / C;
    c = k0 - t * C; /* the tap and the channel within it */
    while (n > 0) {
        const int32_t ky = t / KW, kx = t - ky * KW;
        const int32_t iy = iy0 + ky * p->dil_h, ix = ix0 + kx * p->dil_w;
        int32_t m = C - c; /* values of this tap, or of the rest of its row when inside */
        if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
            m = m < n ? m : n;
            s = tc_col16_fill(zp, m / 4, s);
            t++;
        } else {
            int32_t taps = 1;
            if (p->dil_w == 1) { /* the row's next taps inside the image follow in memory */
                taps = KW - kx;
                taps = ix + taps <= W ? taps : W - ix;
                m += (taps - 1) * C;
            }
            m = m < n ? m : n;
            s = tc_col16_run(img + (iy * W + ix) * C + c, m / 4, s);
            t += (c + m) / C;
        }
        n -= m;
        c = 0;
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

/* TC_G22_STEP: a[0..3] in r4-r7 (pixel 0 x channels 0, 1; pixel 1 x channels 0, 1) += one
 * group of the column at r0 (advanced by 16 bytes) against the weights at r1 (channel 0,
 * advanced by 4) and r1 + r2 (channel 1). The step needs all fourteen registers, with the
 * column group in r8-r11 so that one LDM loads it (a register list must ascend, which inline
 * assembly cannot promise, hence naked functions): LDM + 2 LDR + 4 SXTB16 + 8 SMLAD = 15
 * instructions for 16 MACs. r12 and lr are its scratch. */
#define TC_G_LOAD "ldm     r0!, {r8, r9, r10, r11}\n\t" /* pixel 0 [x0 x2] [x1 x3], pixel 1 */
#define TC_G_CH1                                                                                \
    "ldr     r12, [r1, r2]\n\t" /* channel 1: four weights */                                   \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r5, r8, lr, r5\n\t"                                                                \
    "smlad   r7, r10, lr, r7\n\t"                                                               \
    "smlad   r5, r9, r12, r5\n\t"                                                               \
    "smlad   r7, r11, r12, r7\n\t"
#define TC_G_CH0                                                                                \
    "ldr     r12, [r1], #4\n\t" /* channel 0 */                                                 \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r4, r8, lr, r4\n\t"                                                                \
    "smlad   r6, r10, lr, r6\n\t"                                                               \
    "smlad   r4, r9, r12, r4\n\t"                                                               \
    "smlad   r6, r11, r12, r6\n\t"
#define TC_G22_STEP TC_G_LOAD TC_G_CH1 TC_G_CH0

#define TC_ARG __attribute__((unused)) /* read by the assembly, not by name */

/* For np channel pairs j (weights w + 2 j kd and w + (2 j + 1) kd), a[4 j .. 4 j + 3] += ng >= 1
 * groups of col, two steps TC_G22_STEP per loop pass, an odd count entering at the second; the
 * pairs' loop inside, its state on the stack. One call for a column (tc_conv_col16_pair) or a
 * chunk of one (tc_conv2d_chunk_dsp.c). AAPCS: r0 col, r1 w, r2 kd, r3 ng, a and np on the
 * stack. */
__attribute__((naked, noinline)) void tc_gemm2n_col16(TC_ARG const int16_t *col,
                                                      TC_ARG const int8_t *w, TC_ARG int32_t kd,
                                                      TC_ARG int32_t ng, TC_ARG int32_t *a,
                                                      TC_ARG int32_t np)
{
    __asm__ volatile("push    {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "lsl     r12, r2, #1\n\t"
                     "sub     r12, r12, r3, lsl #2\n\t" /* from one pair's last weights on */
                     "add     r3, r0, r3, lsl #4\n\t"   /* end of the column */
                     "push    {r0, r12}\n\t"           /* a at [sp, #44], np at [sp, #48] */
                     "ldr     r12, [sp, #44]\n\t"
                     "ldm     r12, {r4, r5, r6, r7}\n\t"
                     "sub     r12, r3, r0\n\t"
                     "tst     r12, #16\n\t" /* Z clear: ng odd */
                     "bne     2f\n\t"
                     "1:\n\t" TC_G22_STEP "2:\n\t" TC_G22_STEP "cmp     r0, r3\n\t"
                     "bne     1b\n\t"
                     "ldr     r12, [sp, #44]\n\t"
                     "stm     r12!, {r4, r5, r6, r7}\n\t"
                     "ldr     r0, [sp, #48]\n\t"
                     "subs    r0, r0, #1\n\t"
                     "beq     3f\n\t"
                     "str     r12, [sp, #44]\n\t"
                     "str     r0, [sp, #48]\n\t"
                     "ldm     r12, {r4, r5, r6, r7}\n\t"
                     "ldm     sp, {r0, r12}\n\t"
                     "add     r1, r1, r12\n\t"
                     "sub     r12, r3, r0\n\t"
                     "tst     r12, #16\n\t"
                     "bne     2b\n\t"
                     "b       1b\n\t"
                     "3:\n\t"
                     "add     sp, sp, #8\n\t"
                     "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}

/* One channel's step (a lone last channel): a[0] in r4, a[2] in r6 (pixels 0 and 1) += one group
 * of the column at r0 against the weights at r1: LDM + LDR + 2 SXTB16 + 4 SMLAD = 8
 * instructions for 8 MACs, as the pair's step (a pair with itself would take 15). */
#define TC_G12_STEP TC_G_LOAD TC_G_CH0

/* a[0] and a[2] (one channel, pixels 0 and 1) += ng >= 1 groups of col against the weights w,
 * two steps per loop pass, an odd count entering at the second. AAPCS: r0 col, r1 w, r2 ng,
 * r3 a. */
__attribute__((naked, noinline)) void tc_gemm1_col16(TC_ARG const int16_t *col,
                                                     TC_ARG const int8_t *w, TC_ARG int32_t ng,
                                                     TC_ARG int32_t *a)
{
    __asm__ volatile("push    {r3, r4, r6, r8, r9, r10, r11, lr}\n\t"
                     "ldr     r4, [r3]\n\t"
                     "ldr     r6, [r3, #8]\n\t"
                     "lsls    r12, r2, #31\n\t"       /* Z clear: ng odd */
                     "add     r2, r0, r2, lsl #4\n\t" /* end of the column (flags kept) */
                     "bne     2f\n\t"
                     "1:\n\t" TC_G12_STEP "2:\n\t" TC_G12_STEP "cmp     r0, r2\n\t"
                     "bne     1b\n\t"
                     "pop     {r3}\n\t"
                     "str     r4, [r3]\n\t"
                     "str     r6, [r3, #8]\n\t"
                     "pop     {r4, r6, r8, r9, r10, r11, pc}\n\t");
}
#undef TC_G12_STEP
#undef TC_G22_STEP
#undef TC_G_CH0
#undef TC_G_CH1
#undef TC_G_LOAD
#undef TC_ARG

/* Channel oc's outputs of both pixels from its sums x0, x1 by tc_rq_smmlar_s8 (o1 stored
 * first: a lone pixel has o1 == o0). */
TC_INLINE void tc_col16_rq2(const tc_conv_params_t *p, int32_t oc, int32_t x0, int32_t x1,
                            int32_t k2, int full, int8_t *o0, int8_t *o1)
{
    const int32_t m = p->mult[oc], sh = p->shift[oc];
    int32_t y0 = tc_rq_smmlar_s8(x0, m, sh, k2), y1 = tc_rq_smmlar_s8(x1, m, sh, k2);
    if (!full) {
        y0 = tc_clamp(y0, p->act_min, p->act_max);
        y1 = tc_clamp(y1, p->act_min, p->act_max);
    }
    o1[oc] = (int8_t)y1;
    o0[oc] = (int8_t)y0;
}

void tc_col16_out(const tc_conv_params_t *p, const int32_t *a, int32_t ob, int32_t oe, int8_t *o0,
                  int8_t *o1)
{
    const int32_t *const mu = p->mult, *const sh = p->shift;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    const int full = lo <= -128 && hi >= 127;
    int32_t oc;
    /* channels oc, oc + 1: sums a[0], a[2] and a[1], a[3] */
    if (TC_CONV_RQ_SMMLAR(p)) {
        const int32_t k2 = 2 * oo + 1;
        for (oc = ob; oc + 1 < oe; oc += 2, a += 4) {
            tc_col16_rq2(p, oc, a[0], a[2], k2, full, o0, o1);
            tc_col16_rq2(p, oc + 1, a[1], a[3], k2, full, o0, o1);
        }
        if (oc < oe) {
            tc_col16_rq2(p, oc, a[0], a[2], k2, full, o0, o1);
        }
    } else {
        for (oc = ob; oc + 1 < oe; oc += 2, a += 4) {
            tc_out2_s8_dsp(a[0], a[2], mu[oc], sh[oc], oo, lo, hi, full, o0 + oc, o1 + oc);
            tc_out2_s8_dsp(a[1], a[3], mu[oc + 1], sh[oc + 1], oo, lo, hi, full, o0 + oc + 1,
                           o1 + oc + 1);
        }
        if (oc < oe) {
            tc_out2_s8_dsp(a[0], a[2], mu[oc], sh[oc], oo, lo, hi, full, o0 + oc, o1 + oc);
        }
    }
}

/* Output channels per GEMM call of tc_conv_col16_pair: their sums, 8 bytes each, on the
 * stack. */
#define TC_COL16_BLOCK 16

void tc_conv_col16_pair(const tc_conv_params_t *p, const int16_t *col, int32_t k, int8_t *o0,
                        int8_t *o1)
{
    const int32_t OC = p->out_c, ng = (int32_t)((uint32_t)(k + 3) >> 2);
    int32_t a[2 * TC_COL16_BLOCK];
    int32_t ob;
    if (!o1) {
        o1 = o0; /* lone pixel: its slot-1 results land first and are overwritten */
    }
    for (ob = 0; ob < OC; ob += TC_COL16_BLOCK) {
        const int32_t oe = OC - ob < TC_COL16_BLOCK ? OC : ob + TC_COL16_BLOCK;
        tc_col16_sums(p, ob, oe, a);
        tc_col16_gemm(col, p->weights + ob * k, k, ng, oe - ob, a);
        tc_col16_out(p, a, ob, oe, o0, o1);
    }
}

#endif /* TC_DSP */
