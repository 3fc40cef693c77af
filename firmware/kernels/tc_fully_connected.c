/* tinycompile runtime: FULLY_CONNECTED, int8 (tc_fc_s8; see tc_fully_connected.h).
 *
 * Matches TensorFlow Lite Micro's reference FullyConnected / FullyConnectedPerChannel
 * (reference/integer_ops/fully_connected.h): per output, int32 accumulation of
 * weights * (input - input_zero_point) plus bias, then MultiplyByQuantizedMultiplier
 * (tc_requant, per channel or per tensor), output zero point and the activation clamp. The input
 * offset is folded into bias_eff, so each output is a pure int8 dot product; two rows x two
 * output channels per pass (four accumulators sharing every load).
 *
 * Fast path: the dot products (tc_kernel_util.h) have a DSP variant (SXTB16 + SMLAD, Cortex-M4
 * and M7; same int32 sums, identical results), shared with CONV_2D.
 *
 * tc_fc_s16 (16x8): TFLM's int16 FullyConnected, int64 accumulator (tc_dot_s16_s8) plus the
 * int64 bias, tc_requant64, clamp.
 */
#include <stdint.h>

#include "tc_fully_connected.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if TC_DSP
#define TC_OUT tc_out_s8_dsp
#else
#define TC_OUT tc_out_s8
#endif

void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, qs = p->per_channel ? 1 : 0;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int32_t b = 0, oc;
#if defined(__ARM_ARCH_6M__)
    tc_fc_s8_m0(p, in, out); /* tc_fully_connected_m0.c */
    return;
#endif
    for (; b + 1 < p->batches; b += 2) {
        const int8_t *x0 = in + b * D;
        int8_t *o0 = out + b * OC;
        for (oc = 0; oc + 1 < OC; oc += 2) {
            const int8_t *w0 = p->weights + oc * D;
            int32_t a[4];
            a[0] = a[2] = p->bias_eff[oc];
            a[1] = a[3] = p->bias_eff[oc + 1];
            tc_dot22_s8(x0, x0 + D, w0, w0 + D, D, a);
            o0[oc] = TC_OUT(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[oc + 1] =
                TC_OUT(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
            o0[OC + oc] = TC_OUT(a[2], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc + 1] =
                TC_OUT(a[3], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            const int8_t *w = p->weights + oc * D;
            o0[oc] = TC_OUT(tc_dot_s8(x0, w, D, p->bias_eff[oc]), p->mult[oc * qs],
                               p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc] = TC_OUT(tc_dot_s8(x0 + D, w, D, p->bias_eff[oc]),
                                    p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
    for (; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
        for (oc = 0; TC_DSP && oc + 3 < OC; oc += 4) {
            int32_t a[4], k;
            for (k = 0; k < 4; k++) {
                a[k] = p->bias_eff[oc + k];
            }
            tc_dot14_s8(x, p->weights + oc * D, D, D, a);
            for (k = 0; k < 4; k++) {
                o[oc + k] = TC_OUT(a[k], p->mult[(oc + k) * qs], p->shift[(oc + k) * qs], oo,
                                      lo, hi);
            }
        }
        for (; oc + 1 < OC; oc += 2) {
            const int8_t *w0 = p->weights + oc * D;
            int32_t a[2];
            a[0] = p->bias_eff[oc];
            a[1] = p->bias_eff[oc + 1];
            tc_dot12_s8(x, w0, w0 + D, D, a);
            o[oc] = TC_OUT(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o[oc + 1] =
                TC_OUT(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            o[oc] = TC_OUT(tc_dot_s8(x, p->weights + oc * D, D, p->bias_eff[oc]),
                              p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
}

void tc_fc_s16(const tc_fc_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, qs = p->per_channel ? 1 : 0;
    int32_t b, oc;
    for (b = 0; b < p->batches; b++) {
        const int16_t *x = in + b * D;
        for (oc = 0; oc < OC; oc++) {
            const int64_t acc = tc_dot_s16_s8(x, p->weights + oc * D, D, 1) + p->bias[oc];
            out[b * OC + oc] =
                tc_out_s16(acc, p->rm[oc * qs], p->ts[oc * qs], p->act_min, p->act_max);
        }
    }
}
