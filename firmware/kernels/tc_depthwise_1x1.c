/* tinycompile runtime: DEPTHWISE_CONV_2D with a 1x1 window (tc_dwconv1x1_s8, tc_depthwise.h),
 * portable C for every core.
 *
 * A 1x1 depthwise convolution is a per-channel function of one input value: TFLM's reference
 * DepthwiseConvPerChannel computes acc = bias[oc] + w[oc] * (x + in_offset), requantizes it
 * (MultiplyByQuantizedMultiplier), adds the output zero point and clamps. Its window never
 * reaches the padding (a 1x1 window with SAME padding has none). Two forms, the compiler
 * chooses:
 *   - lut: the compiler tabulates that function per output channel over the 256 input values
 *     (ops/depthwise.py, TFLM's arithmetic in Python), so an output is one table load;
 *   - otherwise bias_eff[oc] + w[oc] * x, requantized by tc_out_s8 (the same arithmetic as the
 *     general kernel's interior windows, tc_depthwise.c).
 * Channel by channel (the channel's table or constants held in registers), its outputs in
 * runs: every pixel of the batch at stride 1, one output row otherwise. In place (out == in,
 * stride 1, depth multiplier 1) every output takes its own input's byte after that byte has
 * been read; no other input is read later, so no temporary is needed.
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"

/* n outputs of one channel: o[k * os] = tab[x[k * xs]] (tab at the table's middle). */
TC_INLINE void tc_dw1_lut_run(const int8_t *x, int32_t xs, int8_t *o, int32_t os, int32_t n,
                           const int8_t *tab)
{
    int32_t i = 0, j = 0;
    for (; n >= 4; n -= 4) {
        const int32_t a = x[i], b = x[i + xs], c = x[i + 2 * xs], d = x[i + 3 * xs];
        o[j] = tab[a];
        o[j + os] = tab[b];
        o[j + 2 * os] = tab[c];
        o[j + 3 * os] = tab[d];
        i += 4 * xs;
        j += 4 * os;
    }
    for (; n > 0; n--) {
        o[j] = tab[x[i]];
        i += xs;
        j += os;
    }
}

/* The same with xs == os == s (input and output pixels alike: depth multiplier 1). */
TC_INLINE void tc_dw1_lut_same(const int8_t *x, int8_t *o, int32_t s, int32_t n,
                               const int8_t *tab)
{
    const int32_t s2 = 2 * s, s3 = 3 * s, s4 = 4 * s;
    for (; n >= 4; n -= 4, x += s4, o += s4) {
        const int32_t a = x[0], b = x[s], c = x[s2], d = x[s3];
        o[0] = tab[a];
        o[s] = tab[b];
        o[s2] = tab[c];
        o[s3] = tab[d];
    }
    for (; n > 0; n--, x += s, o += s) {
        *o = tab[*x];
    }
}

/* The same, computed: requantize be + w * x. */
static void tc_dw1_calc_run(const int8_t *x, int32_t xs, int8_t *o, int32_t os, int32_t n,
                            const tc_dw1x1_params_t *p, int32_t oc)
{
    const int32_t w = p->weights[oc], be = p->bias_eff[oc], m = p->mult[oc], s = p->shift[oc];
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    for (; n > 0; n--) {
        const int32_t acc = be + w * *x;
#if TC_DSP
        *o = tc_out_s8_dsp(acc, m, s, oo, lo, hi);
#else
        *o = tc_out_s8(acc, m, s, oo, lo, hi);
#endif
        x += xs;
        o += os;
    }
}

/* One output pixel's OC outputs from its input pixel x, tabulated: lut[oc][x[oc / dm] + 128]. */
TC_INLINE void tc_dw1_lut_pixel(const int8_t *x, int8_t *o, int32_t OC, int32_t DM,
                                const int8_t *lut)
{
    int32_t oc;
    if (DM == 1) {
        for (oc = 0; oc < OC; oc++, lut += 256) {
            o[oc] = lut[x[oc]];
        }
    } else {
        for (oc = 0; oc < OC; x++) {
            int32_t m;
            const int32_t v = *x;
            for (m = 0; m < DM; m++, oc++, lut += 256) {
                o[oc] = lut[v];
            }
        }
    }
}

void tc_dwconv1x1_s8(const tc_dw1x1_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t HWC = p->in_h * p->in_w * C, OW = p->out_w;
    const int32_t xs = p->stride_w * C, rs = p->stride_h * p->in_w * C;
    /* at stride 1 every pixel of every batch is one run, else one run per output row */
    const int flat = p->stride_h == 1 && p->stride_w == 1;
    const int32_t nb = flat ? 1 : p->batches, nr = flat ? 1 : p->out_h;
    const int32_t len = flat ? p->batches * p->in_h * p->in_w : OW;
    int32_t oc, ic = 0, m = 0;
    if (!flat && p->lut) { /* short strided runs: pixel by pixel, channels inside */
        int32_t n, oy, ox;
        for (n = 0; n < p->batches; n++) {
            for (oy = 0; oy < p->out_h; oy++) {
                const int8_t *x = in + n * HWC + oy * rs;
                for (ox = 0; ox < OW; ox++, x += xs, out += OC) {
                    tc_dw1_lut_pixel(x, out, OC, DM, p->lut + 128);
                }
            }
        }
        return;
    }
    for (oc = 0; oc < OC; oc++) {
        const int8_t *tab = p->lut ? p->lut + oc * 256 + 128 : 0;
        int8_t *o = out + oc;
        int32_t n, r;
        for (n = 0; n < nb; n++) {
            const int8_t *x = in + n * HWC + ic;
            for (r = 0; r < nr; r++, x += rs, o += OW * OC) {
                if (tab && xs == OC) {
                    tc_dw1_lut_same(x, o, OC, len, tab);
                } else if (tab) {
                    tc_dw1_lut_run(x, xs, o, OC, len, tab);
                } else {
                    tc_dw1_calc_run(x, xs, o, OC, len, p, oc);
                }
            }
        }
        if (++m == DM) {
            m = 0;
            ic++;
        }
    }
}
