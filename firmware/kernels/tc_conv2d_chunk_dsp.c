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
 * with SMMLAR (tc_dsp.h's tc_rq_smmlar_s8), which the compiler proved exact for the layer
 * (TC_CONV_RQ_SMMLAR; ops/conv2d.py sends no other layer here): results identical to TFLM's.
 *
 * Stack: TC_CHUNK_STACK bytes (sums first, then the column chunk) while a pair runs, out of
 * line. Instructions: 1.48 per MAC on a 3x3 layer over 16 channels in place, against 1.78 for
 * the ring's direct loops.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

#if TC_DSP

#define TC_CHUNK_STACK 512 /* bytes of a pair's sums and column chunk */
#define TC_CHUNK_OC 32     /* most output channels: sums 256 B, chunks of 64 values */

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
    const int32_t OC = p->out_c, K = p->k_h * p->k_w * p->in_c;
    int32_t *const acc = (int32_t *)(void *)buf; /* channel pair j: acc[4 j .. 4 j + 3] */
    int16_t *const col = (int16_t *)(void *)((uint8_t *)buf + 8 * ((OC + 1) & ~1));
    const int32_t vmax = (TC_CHUNK_STACK - 8 * ((OC + 1) & ~1)) / 16 * 4; /* values a chunk */
    const int32_t nch = (K + vmax - 1) / vmax;
    const int32_t cv = (K + 4 * nch - 1) / (4 * nch) * 4; /* values per chunk, balanced */
    int32_t k0;
    if (!o1) {
        o1 = o0; /* a lone pixel: slot 1's results land first and are overwritten */
    }
    tc_col16_sums(p, 0, OC, acc);
    for (k0 = 0; k0 < K; k0 += cv) {
        const int32_t n = K - k0 < cv ? K - k0 : cv;
        tc_col16_part(p, a->img, a->iy, a->ix, k0, n, col, 0);
        if (b) {
            tc_col16_part(p, b->img, b->iy, b->ix, k0, n, col, 1);
        }
        tc_col16_gemm(col, p->weights + k0, K, n / 4, OC, acc);
    }
    tc_col16_out(p, acc, 0, OC, o0, o1);
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
           (p->k_h > 1 || p->k_w > 1) && TC_CONV_RQ_SMMLAR(p);
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

/* In place (tc_conv_ring_walk): the pair computed into ctx (2 * out_c bytes on the stack)
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
    tc_conv_ring_walk(p, buf, tc_ring_chunk_load, tc_ring_chunk_emit, t);
}

#endif /* TC_DSP */
