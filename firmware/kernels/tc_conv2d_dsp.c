/* tinycompile runtime: CONV_2D's int16 im2col GEMM, the Cortex-M4/M7 (DSP extension) fast path
 * of tc_conv_s8 (tc_conv2d.c), and tc_conv_s8_dsp, which tc_conv_s8 tries first on those cores:
 * the GEMM with the planner's column buffer (tc_conv2d.h; in place beside the temp or the ring),
 * or out of place without one a column of up to TC_PW_STACK_COL bytes on the stack, a larger one
 * in the unwritten tail of the output; else the int8 pointwise loops of tc_conv2d_pw_dsp.c;
 * what it does not cover goes back to the portable paths.
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
#include "tc_gemm22_dsp.h"
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

/* The column buffer's bytes for windows of k values over in_c channels. */
TC_INLINE int32_t tc_col16_bytes(int32_t k, int32_t in_c)
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
            const int8_t *src = img + ((iy0 + ky * p->dil_h) * W + ix0) * C + off;
            uint32_t *d = (uint32_t *)(void *)s;
            int32_t g;
            for (g = m / 4; g >= 2; g -= 2) { /* two groups a pass */
                const uint32_t v0 = tc_ld32(src), v1 = tc_ld32(src + 4);
                d[0] = tc_sxtb16_lo(v0);
                d[1] = tc_sxtb16_hi(v0);
                d[4] = tc_sxtb16_lo(v1);
                d[5] = tc_sxtb16_hi(v1);
                src += 8;
                d += 8;
            }
            s = g ? tc_col16_run(src, 1, (int16_t *)(void *)d) : (int16_t *)(void *)d;
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

/* a[0..3] (pixel 0 x channels 0, 1; pixel 1 x channels 0, 1) += ng >= 1 groups of col against
 * the weights w (channel 0) and w + kd (channel 1; kd = 0 repeats channel 0 for a lone last
 * channel), two steps TC_G22_STEP (tc_gemm22_dsp.h) per loop pass, an odd count entering at the
 * second. AAPCS: r0 col, r1 w, r2 kd, r3 ng, a on the stack. */
__attribute__((naked, noinline)) static void tc_gemm22_col16(TC_ARG const int16_t *col,
                                                             TC_ARG const int8_t *w,
                                                             TC_ARG int32_t kd, TC_ARG int32_t ng,
                                                             TC_ARG int32_t *a)
{
    __asm__ volatile("push    {r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "ldr     r12, [sp, #36]\n\t"
                     "ldm     r12, {r4, r5, r6, r7}\n\t"
                     "lsls    r12, r3, #31\n\t"       /* Z clear: ng odd */
                     "add     r3, r0, r3, lsl #4\n\t" /* end of the column (flags kept) */
                     "bne     2f\n\t"                 /* odd: enter at the second step */
                     "1:\n\t" TC_G22_STEP "2:\n\t" TC_G22_STEP "cmp     r0, r3\n\t"
                     "bne     1b\n\t"
                     "ldr     r12, [sp, #36]\n\t"
                     "stm     r12, {r4, r5, r6, r7}\n\t"
                     "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
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
    for (oc = 0; oc + 1 < OC; oc += 2, w += 2 * k) {
        int32_t a[4];
        a[0] = a[2] = be[oc];
        a[1] = a[3] = be[oc + 1];
        tc_gemm22_col16(col, w, k, ng, a);
        tc_out2_s8_dsp(a[0], a[2], mu[oc], sh[oc], oo, lo, hi, full, o0 + oc, o1 + oc);
        tc_out2_s8_dsp(a[1], a[3], mu[oc + 1], sh[oc + 1], oo, lo, hi, full, o0 + oc + 1,
                      o1 + oc + 1);
    }
    if (oc < OC) { /* a lone last channel: kd = 0 reads it twice */
        int32_t a[4];
        a[0] = a[1] = a[2] = a[3] = be[oc];
        tc_gemm22_col16(col, w, 0, ng, a);
        tc_out2_s8_dsp(a[0], a[2], mu[oc], sh[oc], oo, lo, hi, full, o0 + oc, o1 + oc);
    }
}

/* --------------------------------------------------------- CONV_2D through the GEMM */

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

/* CONV_2D through the int16 column GEMM, groups == 1, any window (1x1 included): output pixels
 * [0, lim) (counted over batches, rows and columns) two at a time, each pair's windows copied
 * to col, then every output channel of both. Pixels from lim on are left to the caller: col may
 * be over their output bytes (see tc_conv_s8_dsp). */
static void tc_conv_col16(const tc_conv_params_t *p, const int8_t *in, int8_t *out, int16_t *col,
                          int32_t lim)
{
    const int32_t HWC = p->in_h * p->in_w * p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * p->in_c;
    const int32_t sh = p->stride_h, sw = p->stride_w, ph = p->pad_h, pw = p->pad_w;
    int32_t idx = 0, n = 0, oy = 0, ox = 0;
    for (; idx < lim; idx += 2) {
        int8_t *const o0 = out + idx * OC;
        tc_col16_window(p, in + n * HWC, oy * sh - ph, ox * sw - pw, col, 0);
        tc_conv_next(p, &n, &oy, &ox);
        if (idx + 1 < lim) {
            tc_col16_window(p, in + n * HWC, oy * sh - ph, ox * sw - pw, col, 1);
            tc_conv_next(p, &n, &oy, &ox);
            tc_conv_col16_pair(p, col, K, o0, o0 + OC);
        } else {
            tc_conv_col16_pair(p, col, K, o0, 0);
        }
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

void tc_conv_ring_pairs(const tc_conv_params_t *p, int8_t *buf, tc_ring_load_t load,
                       tc_ring_emit_t emit, void *ctx)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, HW = H * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    int8_t *const ring = p->tmp;
    int32_t n, i, k;
    for (n = 0; n < p->batches; n++) {
        const int8_t *const img = buf + n * HW * C;
        int8_t *const dst = buf + n * HW * OC;
        int32_t s0 = 0;
        for (i = 0; i < HW; i += 2) {
            const int two = i + 1 < HW;
            const int32_t s1 = s0 + 1 == R ? 0 : s0 + 1;
            load(p, img, i, two, ctx);
            if (i >= D) {
                memcpy(dst + (i - D) * OC, ring + s0 * OC, (size_t)OC);
            }
            if (two && s1 == s0) {
                /* one slot (D = 1: no padding above or left, a 1x2 or 2x1 window): output i
                 * straight to its place (its bytes cover input pixels <= i, which no later
                 * window reads), i + 1 to the slot */
                emit(p, ctx, dst + i * OC, ring + s0 * OC);
            } else {
                if (two && i + 1 >= D) {
                    memcpy(dst + (i + 1 - D) * OC, ring + s1 * OC, (size_t)OC);
                }
                emit(p, ctx, ring + s0 * OC, two ? ring + s1 * OC : 0);
            }
            s0 = !two ? s1 : (s1 + 1 == R ? 0 : s1 + 1);
        }
        for (k = HW - R; k < HW; k++) {
            memcpy(dst + k * OC, ring + (k % R) * OC, (size_t)OC);
        }
    }
}

/* The ring with a column buffer (ctx): the pair's windows into it, then its GEMM. */
static void tc_ring_col16_load(const tc_conv_params_t *p, const int8_t *img, int32_t i, int two,
                               void *ctx)
{
    const int32_t W = p->in_w;
    tc_col16_window(p, img, i / W - p->pad_h, i % W - p->pad_w, (int16_t *)ctx, 0);
    if (two) {
        tc_col16_window(p, img, (i + 1) / W - p->pad_h, (i + 1) % W - p->pad_w, (int16_t *)ctx,
                        1);
    }
}

static void tc_ring_col16_emit(const tc_conv_params_t *p, void *ctx, int8_t *o0, int8_t *o1)
{
    tc_conv_col16_pair(p, (const int16_t *)ctx, p->k_h * p->k_w * p->in_c, o0, o1);
}

/* Smallest window (k_h * k_w * in_c) worth the int16 column GEMM out of place: below it the
 * per-channel-pair overhead outweighs the saved sign extensions and the int8 paths are faster
 * (measured in QEMU on the layers of MobileNet, DS-CNN and ResNet-8). Windows over in_c % 4 != 0
 * channels are staged (whole window rows copied at once) and are worth it too: first layers
 * over 1-3 channels 0.57-0.97x the instructions of the int8 im2col they replaced, which DSP
 * builds no longer carry (2.7 KB of code). In place a granted column buffer is always used (it
 * also spares the one-pixel temp). */
#define TC_COL16_MIN_K 16

/* Largest column buffer (tc_col16_bytes) a layer without a granted one keeps on the stack (an
 * in-place pointwise layer: in_c up to 64 over multiples of 4, 52 otherwise; out of place, 3x3
 * windows over up to 7 channels), within every board's stack reserve like tc_conv2d.c's border
 * windows. */
#define TC_PW_STACK_COL 320

/* tc_conv_col16 over npix pixels with the column on the stack (only while it runs: out of
 * line). */
__attribute__((noinline)) static void tc_conv_col16_stack(const tc_conv_params_t *p,
                                                          const int8_t *in, int8_t *out,
                                                          int32_t npix)
{
    uint64_t col[TC_PW_STACK_COL / 8]; /* 8-byte aligned for LDRD */
    tc_conv_col16(p, in, out, (int16_t *)(void *)col, npix);
}

/* An in-place pointwise layer without a granted column (tc_conv2d.c's tc_conv_pw_inplace_dsp
 * asks): where the column GEMM pays (as out of place: TC_COL16_MIN_K) and the column fits
 * TC_PW_STACK_COL, tc_conv_pw_inplace_col16 with the column on the stack (only while it runs:
 * out of line); returns 0 when it does not apply. */
__attribute__((noinline)) int tc_conv_pw_inplace_stack(const tc_conv_params_t *p,
                                                       const int8_t *in, int8_t *out)
{
    uint64_t col[TC_PW_STACK_COL / 8]; /* 8-byte aligned for LDRD */
    const int32_t C = p->in_c;
    if (C < TC_COL16_MIN_K || (C % 4 != 0 && p->out_c < 16) ||
        tc_col16_bytes(C, C) > TC_PW_STACK_COL) {
        return 0;
    }
    tc_conv_pw_inplace_col16(p, in, out, (int16_t *)(void *)col);
    return 1;
}

/* The DSP paths of tc_conv_s8, tried first by it (tc_conv2d.c): in place, the column GEMM when
 * a column buffer was granted (else 0: tc_conv_s8's walks through the temp or the ring); out of
 * place, the column GEMM where it pays (TC_COL16_MIN_K), with the planner's column buffer or
 * in the output's tail, else the pointwise loops (tc_conv2d_pw_dsp.c). Returns the number of
 * output pixels computed, from the first (counted over batches, rows and columns): 0 when no
 * path applies; fewer than all when the column sat over the last pixels' output, which the
 * caller then computes by the direct loops. */
int32_t tc_conv_s8_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * C, npix = p->batches * p->out_h * p->out_w;
    int16_t *const col = (int16_t *)(void *)p->col;
    int32_t n, oy;
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * H * W, C, OC)) {
        if (col == 0) {
            return 0;
        }
        tc_conv_pw_inplace_col16(p, in, out, col); /* a column buffer beside the temp */
        return npix;
    }
    if (p->inplace && in == out) {
        if (col == 0) {
            return 0;
        }
        tc_conv_ring_pairs(p, out, tc_ring_col16_load, tc_ring_col16_emit, col); /* beside the ring */
        return npix;
    }
    if (p->groups == 1 && K >= TC_COL16_MIN_K) {
        const int32_t cb = tc_col16_bytes(K, C), t = (cb + 7 + OC - 1) / OC;
        if (col != 0) {
            tc_conv_col16(p, in, out, col, npix);
            return npix;
        }
        if (cb <= TC_PW_STACK_COL) {
            /* No column buffer granted, but a small one: on the stack, every pixel through
             * the GEMM (in the output's tail it would leave the last t pixels to the direct
             * loops: a 3x3 layer over 5 channels at the SRAM peak, 36 of its 196 pixels) */
            tc_conv_col16_stack(p, in, out, npix);
            return npix;
        }
        if (t + 2 <= npix) {
            /* No column buffer (refused by the planner): the output of the last t pixels is
             * not written before those pixels are computed, and the output does not overlap
             * the input outside in place, so the column buffer goes there (8-byte aligned for
             * LDRD) and the last t pixels take the direct loops; worth it from one pair of
             * pixels on (a stride-2 layer at the SRAM peak, 3x3 over 12 channels: 0.79x the
             * instructions of the direct loops alone). */
            const uintptr_t at = (uintptr_t)(out + (npix - t) * OC);
            tc_conv_col16(p, in, out, (int16_t *)((at + 7u) & ~(uintptr_t)7u), npix - t);
            return npix - t;
        }
    }
    if (p->k_h == 1 && p->k_w == 1 && p->stride_h == 1 && p->stride_w == 1 && p->groups == 1) {
        tc_conv_pw_run(p, in, p->batches * H * W, out);
        return npix;
    }
    if (p->k_h == 1 && p->k_w == 1 && p->groups == 1 && p->stride_w > 1) {
        for (n = 0; n < p->batches; n++) {
            for (oy = 0; oy < p->out_h; oy++) {
                tc_conv_pw_strided_row(p, in + ((n * H + oy * p->stride_h) * W) * C, p->out_w,
                                       out + ((n * p->out_h + oy) * p->out_w) * OC);
            }
        }
        return npix;
    }
    return 0;
}

/* tc_conv2d.h: the compiler's entries for layers whose every pixel goes through the column GEMM
 * (ops/conv2d.py, col_entry), leaving out tc_conv_s8's direct loops, rings and pointwise loops,
 * so that a model whose convolutions all come here links none of them. tc_conv_s8_col: with
 * the planner's column buffer (in place beside the ring or the pointwise temp, or out of
 * place), or a whole column on the stack. tc_conv_s8_chunk: k x k layers without one whose
 * column is too large for the stack, through the column in chunks on the stack
 * (tc_conv2d_chunk_dsp.c): in place through the ring; out of place for every pixel, or for
 * those past a column in the output's tail. A layer outside its entry's cases is a compiler
 * error: it traps (a HardFault on a board, a failed run in QEMU). */
void tc_conv_s8_col(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * C, npix = p->batches * p->out_h * p->out_w;
    int16_t *const col = (int16_t *)(void *)p->col;
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * p->in_h * p->in_w, C, OC)) {
        if (col != 0) {
            tc_conv_pw_inplace_col16(p, in, out, col);
            return;
        }
    } else if (p->inplace && in == out) {
        if (col != 0) {
            tc_conv_ring_pairs(p, out, tc_ring_col16_load, tc_ring_col16_emit, col);
            return;
        }
    } else if (p->groups == 1 && col != 0) {
        /* (a window under TC_COL16_MIN_K values only for a pointwise layer the planner meant
         * to run in place whose output misses its input) */
        tc_conv_col16(p, in, out, col, npix);
        return;
    } else if (p->groups == 1 && K >= TC_COL16_MIN_K && tc_col16_bytes(K, C) <= TC_PW_STACK_COL) {
        tc_conv_col16_stack(p, in, out, npix);
        return;
    }
    __builtin_trap();
}

void tc_conv_s8_chunk(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t OC = p->out_c, npix = p->batches * p->out_h * p->out_w;
    if (p->col == 0 && tc_conv_chunk_ok(p)) {
        if (p->inplace && in == out) {
            tc_conv_ring_chunk(p, out);
            return;
        }
        if (!p->inplace) {
            const int32_t cb = tc_col16_bytes(p->k_h * p->k_w * p->in_c, p->in_c);
            const int32_t t = (cb + 7 + OC - 1) / OC;
            int32_t n = 0;
            if (t + 2 <= npix && 4 * t <= npix) { /* as tc_conv_s8_dsp: the column in the tail */
                const uintptr_t at = (uintptr_t)(out + (npix - t) * OC);
                n = npix - t;
                tc_conv_col16(p, in, out, (int16_t *)((at + 7u) & ~(uintptr_t)7u), n);
            }
            tc_conv_chunk_range(p, in, out, n, npix); /* the rest: chunks */
            return;
        }
    }
    __builtin_trap();
}

#endif /* TC_DSP */
