/* tinycompile runtime: CONV_2D, int8: the loops of the Cortex-M4/M7 (DSP extension) path that
 * read int8 windows in place, for pointwise layers (1x1, no groups) and single pixels:
 *   - tc_conv_window_dsp: every output channel of one pixel whose window is contiguous, four
 *     channels per pass (tc_dot14_s8);
 *   - tc_conv_pw_run: stride 1, channel pairs outermost, two pixels x two channels per pass;
 *   - tc_conv_pw_strided_row: stride s >= 2, channel pairs (oc, oc + s);
 *   - tc_conv_pw_inplace_dsp: tc_conv_s8's in-place pointwise walk without a column buffer;
 *   - tc_conv_pair_dsp: two interior pixels of a k x k layer without a column buffer.
 * Called by tc_conv_s8_dsp (tc_conv2d_dsp.c) where the int16 column GEMM does not apply, by
 * tc_conv_s8's in-place pointwise walk and by its border pixels (tc_conv2d.c). The arithmetic
 * is the portable loops' (int32 sums of int8 products from bias_eff, then tc_out_s8_dsp, which
 * is tc_out_s8's): identical results. Compiles to nothing on cores without the DSP extension.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

#if TC_DSP

/* Every output channel of one pixel whose window is k contiguous values at x (a 1x1 pixel, or
 * a window copied to the stack by tc_conv2d.c's tc_conv_edge): four channels per pass, then one
 * by one. */
void tc_conv_window_dsp(const tc_conv_params_t *p, const int8_t *x, int32_t k, int8_t *out)
{
    const int32_t OC = p->out_c;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    int32_t oc = 0, j;
    for (; oc + 3 < OC; oc += 4) {
        int32_t a[4];
        for (j = 0; j < 4; j++) {
            a[j] = be[oc + j];
        }
        tc_dot14_s8(x, p->weights + oc * k, k, k, a);
        for (j = 0; j < 4; j++) {
            out[oc + j] = tc_out_s8_dsp(a[j], mu[oc + j], sh[oc + j], oo, lo, hi);
        }
    }
    for (; oc < OC; oc++) {
        out[oc] = tc_out_s8_dsp(tc_dot_s8(x, p->weights + oc * k, k, be[oc]), mu[oc], sh[oc], oo,
                                lo, hi);
    }
}

/* Two interior pixels of a k x k layer without a column buffer (tc_conv2d.c's direct loops
 * and in-place ring): windows of k_h rows of seg contiguous int8 values, rows rstep apart, the
 * second window xd bytes after the first; every output channel, two pixels x two channels per
 * pass over the whole window (tc_dot22r_s8; a lone last channel is read twice). */
void tc_conv_pair_dsp(const tc_conv_params_t *p, const int8_t *x, int32_t xd, int32_t rstep,
                      int32_t seg, int8_t *o0, int8_t *o1)
{
    const int32_t OC = p->out_c, K = p->k_h * seg;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int full = lo <= -128 && hi >= 127;
    const int8_t *w = p->weights;
    int32_t oc;
    for (oc = 0; oc < OC; oc += 2, w += 2 * K) {
        const int32_t wd = oc + 1 < OC ? K : 0, nc = wd ? 2 : 1;
        int32_t a[4], j;
        a[0] = a[2] = be[oc];
        a[1] = a[3] = be[oc + nc - 1];
        tc_dot22r_s8(x, xd, rstep, w, wd, seg, p->k_h, a);
        for (j = 0; j < nc; j++) {
            tc_out2_s8_dsp(a[j], a[j + 2], mu[oc + j], sh[oc + j], oo, lo, hi, full, o0 + oc + j,
                           o1 + oc + j);
        }
    }
}

/* Pointwise (1x1, stride 1, no groups) over npix consecutive pixels: in holds npix pixels of
 * in_c bytes, out receives npix pixels of out_c bytes (disjoint, or the in-place callers' own
 * guarantees). Two pixels x two channels per pass share every load (tc_dot22_s8: the second
 * pixel and the second channel are both in_c bytes on); a lone pixel takes four channels per
 * pass. No window bookkeeping: this is the loop the 1x1 layers of DS-CNN / MobileNet live in. */
void tc_conv_pw_run(const tc_conv_params_t *p, const int8_t *in, int32_t npix, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int8_t *const wts = p->weights;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t npair = npix & ~1;
    int32_t i = npair, oc;
    /* channel pairs outermost: their weights, bias and requantization stay put while the
     * pixel pairs stream by (out does not overlap in, or npix <= 2) */
    for (oc = 0; npair > 0 && oc + 1 < OC; oc += 2) {
        const int8_t *const w = wts + oc * C;
        const int32_t b0 = be[oc], b1 = be[oc + 1];
        const int32_t m0 = mu[oc], m1 = mu[oc + 1], s0 = sh[oc], s1 = sh[oc + 1];
        const int8_t *x = in;
        int8_t *o = out + oc;
        for (i = 0; i < npair; i += 2) {
            int32_t a[4];
            a[0] = a[2] = b0;
            a[1] = a[3] = b1;
            if ((C & 7) == 0) {
                tc_dot22_x8_s8(x, w, C, C, a);
            } else {
                tc_dot22_s8(x, x + C, w, w + C, C, a);
            }
            o[0] = tc_out_s8_dsp(a[0], m0, s0, oo, lo, hi);
            o[1] = tc_out_s8_dsp(a[1], m1, s1, oo, lo, hi);
            o[OC] = tc_out_s8_dsp(a[2], m0, s0, oo, lo, hi);
            o[OC + 1] = tc_out_s8_dsp(a[3], m1, s1, oo, lo, hi);
            x += 2 * C;
            o += 2 * OC;
        }
    }
    if (npair > 0 && oc < OC) {
        const int8_t *const w = wts + oc * C;
        for (i = 0; i < npair; i++) {
            out[i * OC + oc] =
                tc_out_s8_dsp(tc_dot_s8(in + i * C, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
        }
    }
    if (i < npix) {
        tc_conv_window_dsp(p, in + i * C, C, out + i * OC);
    }
}

/* Pointwise with stride s >= 2 (1x1, no groups), one output row of nx pixels from x (input
 * pixels s * in_c apart): pixel pairs x channel pairs (oc, oc + s), whose weights are s * in_c
 * apart too, so tc_dot22_s8 runs its assembly loop with one offset for both. Channels beyond
 * the last whole block of 2s and a lone last pixel take plain dot products. */
void tc_conv_pw_strided_row(const tc_conv_params_t *p, const int8_t *x, int32_t nx,
                            int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, S = p->stride_w, d = S * C;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    const int32_t *const be = p->bias_eff, *const mu = p->mult, *const sh = p->shift;
    const int32_t oc_blk = OC - OC % (2 * S);
    int32_t i, oc, j;
    for (i = 0; i + 1 < nx; i += 2) {
        const int8_t *xi = x + i * d;
        int8_t *o = out + i * OC;
        for (oc = 0; oc < oc_blk; oc += 2 * S) {
            for (j = oc; j < oc + S; j++) {
                const int8_t *w = p->weights + j * C;
                int32_t a[4];
                a[0] = a[2] = be[j];
                a[1] = a[3] = be[j + S];
                tc_dot22_s8(xi, xi + d, w, w + d, C, a);
                o[j] = tc_out_s8_dsp(a[0], mu[j], sh[j], oo, lo, hi);
                o[j + S] = tc_out_s8_dsp(a[1], mu[j + S], sh[j + S], oo, lo, hi);
                o[OC + j] = tc_out_s8_dsp(a[2], mu[j], sh[j], oo, lo, hi);
                o[OC + j + S] = tc_out_s8_dsp(a[3], mu[j + S], sh[j + S], oo, lo, hi);
            }
        }
        for (; oc < OC; oc++) {
            const int8_t *w = p->weights + oc * C;
            o[oc] = tc_out_s8_dsp(tc_dot_s8(xi, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
            o[OC + oc] =
                tc_out_s8_dsp(tc_dot_s8(xi + d, w, C, be[oc]), mu[oc], sh[oc], oo, lo, hi);
        }
    }
    if (i < nx) {
        tc_conv_pw_run(p, x + i * d, 1, out + i * OC);
    }
}

/* The last pixel + 1 (forwards: the largest i1 <= n) such that pixels [i0, i1) are apart
 * (tc_pw_apart: their outputs miss their own input), or the first pixel (backwards: the
 * smallest i0 >= 0 such that [i0, i1) are apart); the caller knows the single pixel at the
 * start is. Outputs below the input need i1 * oc <= d + i0 * c, above it
 * d + i1 * c <= i0 * oc. */
static int32_t tc_pw_block_end(int32_t d, int32_t i0, int32_t n, int32_t c, int32_t oc)
{
    int32_t e = i0 + 1, t;
    if (d + i0 * c >= 0) {
        t = (d + i0 * c) / oc;
        e = t > e ? t : e;
    }
    if (i0 * oc - d >= 0) {
        t = (i0 * oc - d) / c;
        e = t > e ? t : e;
    }
    return e < n ? e : n;
}

static int32_t tc_pw_block_start(int32_t d, int32_t i1, int32_t c, int32_t oc)
{
    int32_t s = i1 - 1, t;
    if (d + i1 * c >= 0) { /* above: i0 >= ceil((d + i1 * c) / oc) */
        t = (d + i1 * c + oc - 1) / oc;
        s = t < s ? t : s;
    }
    if (i1 * oc - d <= 0) { /* below: i0 * c >= i1 * oc - d: any i0 >= 0 */
        s = 0;
    } else {
        t = (i1 * oc - d + c - 1) / c;
        s = t < s ? t : s;
    }
    return s > 0 ? s : 0;
}

/* tc_conv2d.c's in-place pointwise walk (tc_conv_pw_inplace) on DSP cores: wide layers
 * through the column GEMM with a column on the stack (tc_conv_pw_inplace_stack), others in
 * maximal blocks of pixels whose outputs miss their own input, each one tc_conv_pw_run
 * (channel pairs outermost over the block: the whole block's input must stay unwritten, which
 * apartness gives; the walk's direction keeps every other unread pixel safe), which for an
 * expanding layer's forwards walk means a few long runs instead of a call per pixel pair;
 * pixels whose outputs overlap their own input go through tmp. */
void tc_conv_pw_inplace_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c;
    const int32_t N = p->batches * p->in_h * p->in_w, d = (int32_t)(in - out);
    int8_t *tmp = p->tmp;
    int32_t i, e;
    if (tc_conv_pw_inplace_stack(p, in, out)) { /* tc_conv2d_dsp.c: a column on the stack */
        return;
    }
    if (tc_pw_forward(d, N, C, OC)) {
        for (i = 0; i < N; i = e) {
            if (tc_pw_apart(d, i, i + 1, C, OC)) {
                e = tc_pw_block_end(d, i, N, C, OC);
                tc_conv_pw_run(p, in + i * C, e - i, out + i * OC);
            } else {
                e = i + 1;
                tc_conv_pw_run(p, in + i * C, 1, tmp);
                memcpy(out + i * OC, tmp, (size_t)OC);
            }
        }
    } else {
        for (i = N; i > 0; i = e) {
            if (tc_pw_apart(d, i - 1, i, C, OC)) {
                e = tc_pw_block_start(d, i, C, OC);
                tc_conv_pw_run(p, in + e * C, i - e, out + e * OC);
            } else {
                e = i - 1;
                tc_conv_pw_run(p, in + e * C, 1, tmp);
                memcpy(out + e * OC, tmp, (size_t)OC);
            }
        }
    }
}

#endif /* TC_DSP */
