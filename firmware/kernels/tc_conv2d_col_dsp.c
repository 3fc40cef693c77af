/* tinycompile runtime: CONV_2D's layer walks over the int16 column GEMM (tc_conv2d_dsp.c) on the
 * Cortex-M4/M7 (DSP extension): tc_conv_s8_dsp, which tc_conv_s8 (tc_conv2d.c) tries first on
 * those cores: the GEMM with the planner's column buffer (tc_conv2d.h; in place beside the temp
 * or the ring), or out of place without one a column of up to TC_PW_STACK_COL bytes on the
 * stack, a larger one in the unwritten tail of the output; else the int8 pointwise loops of
 * tc_conv2d_pw_dsp.c; what it does not cover goes back to the portable paths. And the
 * compiler's entries tc_conv_s8_col / tc_conv_s8_chunk for layers entirely on the GEMM.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

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

static void tc_conv_ring_col16(const tc_conv_params_t *p, int8_t *buf, int16_t *col)
{
    tc_conv_ring_walk(p, buf, tc_ring_col16_load, tc_ring_col16_emit, col);
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

/* Output pixels whose bytes take a whole column out of place when no column was granted: the
 * last t pixels' output is not written before those pixels are computed (t * out_c bytes hold
 * the column, 8-byte aligned for LDRD / LDM), so the pixels before them go through the GEMM
 * with it there; returns t. */
TC_INLINE int32_t tc_col16_tail(const tc_conv_params_t *p, int8_t *out, int32_t npix,
                                int16_t **col)
{
    const int32_t OC = p->out_c, cb = tc_col16_bytes(p->k_h * p->k_w * p->in_c, p->in_c);
    const int32_t t = (cb + 7 + OC - 1) / OC;
    const uintptr_t at = (uintptr_t)(out + (npix - t) * OC);
    *col = (int16_t *)((at + 7u) & ~(uintptr_t)7u);
    return t;
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
        tc_conv_ring_col16(p, out, col); /* a column buffer beside the ring */
        return npix;
    }
    if (p->groups == 1 && K >= TC_COL16_MIN_K) {
        int16_t *tcol;
        const int32_t t = tc_col16_tail(p, out, npix, &tcol);
        if (col != 0) {
            tc_conv_col16(p, in, out, col, npix);
            return npix;
        }
        if (tc_col16_bytes(K, C) <= TC_PW_STACK_COL) {
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
            tc_conv_col16(p, in, out, tcol, npix - t);
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
#if TC_MVE
    if (tc_conv_s8_mve(p, in, out)) { /* tc_conv2d_mve.c */
        return;
    }
#endif
    if (p->inplace && p->k_h == 1 && p->k_w == 1 &&
        tc_pw_overlap(in, out, p->batches * p->in_h * p->in_w, C, OC)) {
        if (col != 0) {
            tc_conv_pw_inplace_col16(p, in, out, col);
            return;
        }
    } else if (p->inplace && in == out) {
        if (col != 0) {
            tc_conv_ring_col16(p, out, col);
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
    const int32_t npix = p->batches * p->out_h * p->out_w;
#if TC_MVE
    if (tc_conv_s8_mve(p, in, out)) { /* tc_conv2d_mve.c */
        return;
    }
#endif
    if (p->col == 0 && tc_conv_chunk_ok(p)) {
        if (p->inplace && in == out) {
            tc_conv_ring_chunk(p, out);
            return;
        }
        if (!p->inplace) {
            int16_t *tcol;
            const int32_t t = tc_col16_tail(p, out, npix, &tcol);
            int32_t n = 0;
            if (t + 2 <= npix && 4 * t <= npix) { /* as tc_conv_s8_dsp: the column in the tail */
                n = npix - t;
                tc_conv_col16(p, in, out, tcol, n);
            }
            tc_conv_chunk_range(p, in, out, n, npix); /* the rest: chunks */
            return;
        }
    }
    __builtin_trap();
}

#endif /* TC_DSP */
