/* tinycompile runtime: CONV_2D's int16 column GEMM with the column in chunks on the stack, on
 * the Cortex-M4/M7 (DSP extension), for tc_conv_s8_col (tc_conv2d_dsp.c): k x k layers over
 * in_c % 4 == 0 channels into at most TC_CHUNK_OC channels that got no column buffer from the
 * planner (the layer sets the SRAM peak, or runs in place through its ring) and whose whole
 * column (tc_col16_bytes) is too large for the stack; only models with such a layer link it.
 *
 * The window of a pixel pair is cut into balanced chunks of whole groups of four values; each
 * chunk is laid out as tc_conv2d_dsp.c's column (tc_col16_part) in a stack buffer and
 * multiplied against every output channel's weights for those values (tc_gemm2n_col16: two
 * pixels x two channels per step, all channel pairs in one call), the int32 sums of every
 * channel kept in the same buffer between chunks. The sums are those of the other paths (the
 * input offset folded into bias_eff, padded taps holding the zero point). They are requantized
 * with SMMLAR (tc_dsp.h's tc_rq2_s8), exact where every shift is right by 1..22 and the sums
 * stay below 2^30 for any input (tc_chunk_smmlar; ops/conv2d.py checks the same before it
 * sends a layer here): results identical to TFLM's.
 *
 * Stack: TC_CHUNK_STACK bytes (sums first, then the column chunk) while a pair runs, out of
 * line. Instructions: 1.5 per MAC on a 3x3 layer over 16 channels in place, against 1.8 for
 * the ring's direct loops.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_gemm22_dsp.h"
#include "tc_kernel_util.h"

#if TC_DSP

#define TC_CHUNK_STACK 512 /* bytes of a pair's sums and column chunk */
#define TC_CHUNK_OC 32     /* most output channels: sums 256 B, chunks of 64 values */

/* tc_gemm22_col16 over np consecutive channel pairs (weights 2 kd apart), their sums a[0..3],
 * a[4..7], ...: one call for a column chunk (tc_conv2d_chunk_dsp.c), the pairs' loop inside
 * with its state on the stack. AAPCS: r0 col, r1 w, r2 kd, r3 ng, a and np on the stack. */
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
/* A pixel of the pair: its image and the input (row, column) of its window's top-left tap. */
typedef struct {
    const int8_t *img;
    int32_t iy, ix;
} tc_chunk_px_t;

/* Every output channel of pixels a and b (b == 0: a alone), stored to o0 / o1. */
__attribute__((noinline)) static void tc_chunk_pair(const tc_conv_params_t *p,
                                                    const tc_chunk_px_t *a,
                                                    const tc_chunk_px_t *b, int8_t *o0,
                                                    int8_t *o1)
{
    uint64_t buf[TC_CHUNK_STACK / 8]; /* 8-byte aligned: the column is read by LDM */
    const int32_t OC = p->out_c, K = p->k_h * p->k_w * p->in_c, np = OC / 2;
    int32_t *const acc = (int32_t *)(void *)buf; /* channel pair j: acc[4 j .. 4 j + 3] */
    int16_t *const col = (int16_t *)(void *)((uint8_t *)buf + 8 * ((OC + 1) & ~1));
    const int32_t vmax = (TC_CHUNK_STACK - 8 * ((OC + 1) & ~1)) / 16 * 4; /* values a chunk */
    const int32_t nch = (K + vmax - 1) / vmax;
    const int32_t cv = (K + 4 * nch - 1) / (4 * nch) * 4; /* values per chunk, balanced */
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    const int full = lo <= -128 && hi >= 127;
    const int32_t *aa;
    int32_t oc, k0, j;
    if (!o1) {
        o1 = o0; /* a lone pixel: slot 1's results land first and are overwritten */
    }
    for (oc = 0, j = 0; oc < OC; oc += 2, j += 4) {
        acc[j] = acc[j + 2] = be[oc];
        acc[j + 1] = acc[j + 3] = oc + 1 < OC ? be[oc + 1] : be[oc];
    }
    for (k0 = 0; k0 < K; k0 += cv) {
        const int32_t n = K - k0 < cv ? K - k0 : cv;
        const int8_t *const w = p->weights + k0;
        tc_col16_part(p, a->img, a->iy, a->ix, k0, n, col, 0);
        if (b) {
            tc_col16_part(p, b->img, b->iy, b->ix, k0, n, col, 1);
        }
        if (np > 0) {
            tc_gemm2n_col16(col, w, K, n / 4, acc, np);
        }
        if (OC & 1) { /* a lone last channel: kd = 0 reads it twice */
            tc_gemm2n_col16(col, w + 2 * np * K, 0, n / 4, acc + 4 * np, 1);
        }
    }
    /* channel oc's sums: aa[0] and aa[2], aa stepping 1, 3, 1, 3, ... words */
    aa = acc;
    for (oc = 0; oc < OC; aa += 1 + 2 * (oc & 1), oc++) {
        const int32_t r = -sh[oc], q = (1 << (r - 1)) + oo * (1 << r);
        int32_t y0 = tc_rq2_s8(2 * aa[0], mu[oc], q, r, 0);
        int32_t y1 = tc_rq2_s8(2 * aa[2], mu[oc], q, r, 0);
        if (!full) {
            y0 = tc_clamp(y0, lo, hi);
            y1 = tc_clamp(y1, lo, hi);
        }
        o1[oc] = (int8_t)y1; /* o1 first: a lone pixel has o1 == o0 */
        o0[oc] = (int8_t)y0;
    }
}

/* Whether tc_chunk_pair's SMMLAR requantization is exact (tc_dsp.h's tc_rq2_s8: 2 acc and
 * q + h must fit int32): every channel shifts right by r in [1, 22] and its sums stay below
 * 2^30 in magnitude for any input (|bias_eff| + 128 * 128 * K, the weights bounded by 128
 * without reading them), so |q + h| < 255 * 2^21 + 2^30 + 1 < 2^31. ops/conv2d.py's
 * chunk_ok checks the same. */
static int tc_chunk_smmlar(const tc_conv_params_t *p)
{
    const int32_t K = p->k_h * p->k_w * p->in_c;
    int32_t oc, lim;
    if (K >= (1 << 16)) {
        return 0;
    }
    lim = (1 << 30) - 16384 * K;
    for (oc = 0; oc < p->out_c; oc++) {
        const int32_t b = p->bias_eff[oc], sh = p->shift[oc];
        if (sh > -1 || sh < -22 || b >= lim || b <= -lim) {
            return 0;
        }
    }
    return 1;
}

/* The pixel at raster index idx (over batches, rows and columns) of an out-of-place layer. */
TC_INLINE void tc_chunk_at(const tc_conv_params_t *p, const int8_t *in, int32_t idx,
                           tc_chunk_px_t *x)
{
    const int32_t per = p->out_h * p->out_w, n = idx / per, r = idx - n * per;
    const int32_t oy = r / p->out_w, ox = r - oy * p->out_w;
    x->img = in + n * p->in_h * p->in_w * p->in_c;
    x->iy = oy * p->stride_h - p->pad_h;
    x->ix = ox * p->stride_w - p->pad_w;
}

int tc_conv_chunk_ok(const tc_conv_params_t *p)
{
    return p->groups == 1 && p->in_c % 4 == 0 && p->out_c <= TC_CHUNK_OC &&
           (p->k_h > 1 || p->k_w > 1) && tc_chunk_smmlar(p);
}

void tc_conv_chunk_range(const tc_conv_params_t *p, const int8_t *in, int8_t *out, int32_t i0,
                         int32_t i1)
{
    const int32_t OC = p->out_c;
    int32_t i;
    for (i = i0; i < i1; i += 2) {
        tc_chunk_px_t a, b;
        tc_chunk_at(p, in, i, &a);
        if (i + 1 < i1) {
            tc_chunk_at(p, in, i + 1, &b);
            tc_chunk_pair(p, &a, &b, out + i * OC, out + (i + 1) * OC);
        } else {
            tc_chunk_pair(p, &a, 0, out + i * OC, 0);
        }
    }
}

/* In place (tc_conv_ring_pairs): the pair computed into ctx (2 * out_c bytes on the stack)
 * while its windows are read, then put in its slots. */
static void tc_ring_chunk_load(const tc_conv_params_t *p, const int8_t *img, int32_t i, int two,
                               void *ctx)
{
    const int32_t W = p->in_w;
    const tc_chunk_px_t a = {img, i / W - p->pad_h, i % W - p->pad_w};
    const tc_chunk_px_t b = {img, (i + 1) / W - p->pad_h, (i + 1) % W - p->pad_w};
    int8_t *const t = (int8_t *)ctx;
    tc_chunk_pair(p, &a, two ? &b : 0, t, two ? t + p->out_c : 0);
}

static void tc_ring_chunk_emit(const tc_conv_params_t *p, void *ctx, int8_t *o0, int8_t *o1)
{
    const int8_t *const t = (const int8_t *)ctx;
    memcpy(o0, t, (size_t)p->out_c);
    if (o1) {
        memcpy(o1, t + p->out_c, (size_t)p->out_c);
    }
}

void tc_conv_ring_chunk(const tc_conv_params_t *p, int8_t *buf)
{
    int8_t t[2 * TC_CHUNK_OC];
    tc_conv_ring_pairs(p, buf, tc_ring_chunk_load, tc_ring_chunk_emit, t);
}

#endif /* TC_DSP */
