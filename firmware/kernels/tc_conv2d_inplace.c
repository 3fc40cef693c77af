/* tinycompile runtime: CONV_2D, int8: tc_conv_s8's in-place walk of stride-1 same-size k x k
 * layers (tc_conv2d.h's params inplace) through a ring of pending outputs, over tc_conv2d.c's
 * per-pixel routines (tc_conv2d_int.h).
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_conv2d_int.h"
#include "tc_kernel_util.h"

/* k x k CONV_2D with out == in (stride 1, output size == input size, out_c <= in_c, no groups):
 * pixels in raster order, per image. The window of output (y, x) starts at input row y - pad_h,
 * column x - pad_w, so input pixel j is last read by output pixel j + D - 1,
 * D = pad_h * W + pad_w + 1. Output i is computed into slot i % R of the ring tmp (R =
 * min(D, H * W) slots of out_c bytes) and stored just before output i + D takes its slot: its
 * bytes [i * OC, (i + 1) * OC) then only cover input pixels <= i, all read. The last R outputs
 * are stored after the image. Pixels use the ordinary interior / border routines; DSP cores take
 * interior pixels in pairs (tc_conv_ring_pair: two pixels x two channels per pass). */
#if TC_DSP
/* Largest out_c whose ring takes interior pixels in pairs (two outputs on the stack). */
#define TC_RING_PAIR_OC 128

/* Outputs i and i + 1 of the ring, both interior (windows of contiguous rows from x): computed
 * together to the stack, then the pending outputs of their slots s0 and s1 (i - D and
 * i + 1 - D; input pixel i + 1 - D is read by output i's window, so not before) are stored to
 * d0 / d1 (0: nothing pending) and the pair takes the slots. Out of line: its stack is beside
 * tc_conv_edge's window, not on top of it. */
__attribute__((noinline)) static void tc_conv_ring_pair(const tc_conv_geo_t *g, const int8_t *x,
                                                        int8_t *s0, int8_t *s1, int8_t *d0,
                                                        int8_t *d1)
{
    const size_t OC = (size_t)g->p->out_c;
    uint32_t t[2 * TC_RING_PAIR_OC / 4];
    tc_conv_pair_dsp(g->p, x, g->pstep, g->rstep, g->seg, (int8_t *)t, (int8_t *)t + OC);
    if (d0 != 0) {
        memcpy(d0, s0, OC);
    }
    if (d1 != 0) {
        memcpy(d1, s1, OC);
    }
    memcpy(s0, t, OC);
    memcpy(s1, (const int8_t *)t + OC, OC);
}
#endif

void tc_conv_ring_inplace(const tc_conv_geo_t *g, const int8_t *in, int8_t *out)
{
    const tc_conv_params_t *p = g->p;
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, HW = H * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    int8_t *const ring = p->tmp, *const ring_end = p->tmp + R * OC;
    int32_t oy_lo, oy_hi, ox_lo, ox_hi, n, k;
    tc_interior(p->out_h, 1, p->pad_h, p->k_h, p->dil_h, H, &oy_lo, &oy_hi);
    tc_interior(p->out_w, 1, p->pad_w, p->k_w, p->dil_w, W, &ox_lo, &ox_hi);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * HW * C;
        int8_t *dst = out + n * HW * OC;
        int8_t *slot = ring;
        int32_t i = 0, oy, ox;
        for (oy = 0; oy < H; oy++) {
            const int inner = oy >= oy_lo && oy < oy_hi;
            for (ox = 0; ox < W; ox++, i++) {
#if TC_DSP
                if (inner && ox >= ox_lo && ox + 1 < ox_hi && g->nseg == 1 && R >= 2 &&
                    OC <= TC_RING_PAIR_OC) {
                    int8_t *next = slot + OC == ring_end ? ring : slot + OC;
                    tc_conv_ring_pair(g, img + ((oy - p->pad_h) * W + ox - p->pad_w) * C, slot,
                                      next, i >= D ? dst + (i - D) * OC : 0,
                                      i + 1 >= D ? dst + (i + 1 - D) * OC : 0);
                    slot = next + OC == ring_end ? ring : next + OC;
                    ox++;
                    i++;
                    continue;
                }
#endif
                if (i >= D) {
                    memcpy(dst + (i - D) * OC, slot, (size_t)OC);
                }
                if (inner && ox >= ox_lo && ox < ox_hi) {
                    tc_conv_interior(g, img + ((oy - p->pad_h) * W + ox - p->pad_w) * C, 1, slot);
                } else {
                    tc_conv_edge(g, img, oy, ox, slot);
                }
                slot += OC;
                if (slot == ring_end) {
                    slot = ring;
                }
            }
        }
        for (k = HW - R; k < HW; k++) { /* the oldest pending output is at slot */
            memcpy(dst + k * OC, slot, (size_t)OC);
            slot += OC;
            if (slot == ring_end) {
                slot = ring;
            }
        }
    }
}
