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
 */
#include <stdint.h>

#include "tc_fully_connected.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

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
            o0[oc] = tc_out_s8(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[oc + 1] =
                tc_out_s8(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
            o0[OC + oc] = tc_out_s8(a[2], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc + 1] =
                tc_out_s8(a[3], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            const int8_t *w = p->weights + oc * D;
            o0[oc] = tc_out_s8(tc_dot_s8(x0, w, D, p->bias_eff[oc]), p->mult[oc * qs],
                               p->shift[oc * qs], oo, lo, hi);
            o0[OC + oc] = tc_out_s8(tc_dot_s8(x0 + D, w, D, p->bias_eff[oc]),
                                    p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
    for (; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
        for (oc = 0; oc + 1 < OC; oc += 2) {
            const int8_t *w0 = p->weights + oc * D;
            int32_t a[2];
            a[0] = p->bias_eff[oc];
            a[1] = p->bias_eff[oc + 1];
            tc_dot12_s8(x, w0, w0 + D, D, a);
            o[oc] = tc_out_s8(a[0], p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
            o[oc + 1] =
                tc_out_s8(a[1], p->mult[(oc + 1) * qs], p->shift[(oc + 1) * qs], oo, lo, hi);
        }
        if (oc < OC) {
            o[oc] = tc_out_s8(tc_dot_s8(x, p->weights + oc * D, D, p->bias_eff[oc]),
                              p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
}
