/* tinycompile runtime: FULLY_CONNECTED, int8, the ARMv6-M (Cortex-M0/M0+) path (tc_fc_s8_m0,
 * entered from tc_fc_s8 in tc_fully_connected.c on __ARM_ARCH_6M__).
 *
 * Same arithmetic as tc_fully_connected.c (TFLM's reference FullyConnected): per output the
 * int8 dot product from bias_eff, then tc_requant (on ARMv6-M tc_qmath.h's tc_requant16),
 * output zero point, clamp. Four output channels per pass share each input load
 * (tc_m0_dot14, tc_conv2d_m0.c); the last out_c % 4 channels one at a time.
 */
#include <stdint.h>

#include "tc_fully_connected.h"
#include "tc_m0.h"

void tc_fc_s8_m0(const tc_fc_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, OC = p->out_c, qs = p->per_channel ? 1 : 0;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int32_t b, oc, k, i;
    for (b = 0; b < p->batches; b++) {
        const int8_t *x = in + b * D;
        int8_t *o = out + b * OC;
        for (oc = 0; oc + 3 < OC; oc += 4) {
            const int32_t *be = p->bias_eff + oc;
            int32_t a[4];
            a[0] = be[0];
            a[1] = be[1];
            a[2] = be[2];
            a[3] = be[3];
            tc_m0_dot14(x, p->weights + oc * D, D, D, a);
            if (qs) {
                tc_m0_out4(a, p->mult + oc, p->shift + oc, oo, lo, hi, o + oc);
            } else {
                for (k = 0; k < 4; k++) {
                    o[oc + k] = tc_out_s8_m0(a[k], p->mult[0], p->shift[0], oo, lo, hi);
                }
            }
        }
        for (; oc < OC; oc++) {
            const int8_t *w = p->weights + oc * D;
            int32_t acc = p->bias_eff[oc];
            for (i = 0; i < D; i++) {
                acc += x[i] * w[i];
            }
            o[oc] = tc_out_s8_m0(acc, p->mult[oc * qs], p->shift[oc * qs], oo, lo, hi);
        }
    }
}
