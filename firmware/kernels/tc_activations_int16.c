/* tinycompile runtime: the int16 (16x8) paths of SOFTMAX, LOGISTIC and TANH (portable C99; see
 * tc_activations.h).
 *
 * SOFTMAX matches TensorFlow Lite Micro's reference_ops::SoftmaxInt16 (softmax.cc,
 * softmax_common.cc): per row, the difference to the max rescaled by TFLM's multiplier so that
 * -65535 is -10.0, recentred and looked up with interpolation (LUTLookup) in the 513-entry exp
 * table; the Q16.15 sum's reciprocal through the 513-entry 1/(1+x) table; each output the exp
 * times the reciprocal, rounded and clamped to [0, 32767]. Both tables are TFLM's LUTPopulate,
 * computed at compile time (ops/tables.py: softmax_s16_luts). LOGISTIC and TANH match
 * reference_integer_ops::Logistic / ::Tanh int16 (logistic.cc, tanh.cc) through tc_sigmoid16.h,
 * shared with the LSTM. No fast paths.
 */
#include <stddef.h>
#include <stdint.h>

#include "tc_activations.h"
#include "tc_kernel_util.h"
#include "tc_qmath.h"
#include "tc_sigmoid16.h"

/* LUTLookup(int16_t, lut): the high 9 bits index, the low 7 interpolate. */
static int32_t tc_lut16_lookup(const int16_t *lut, int32_t v)
{
    const int32_t index = 256 + tc_asr(v, 7);
    const int32_t base = lut[index];
    const int32_t slope = lut[index + 1] - base;
    return (int16_t)(base + tc_asr(slope * (v & 0x7F) + 64, 7));
}

void tc_softmax_s16(const tc_softmax_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const uint32_t depth = p->depth;
    uint32_t r, c;
    for (r = 0; r < p->rows; r++) {
        const int16_t *x = in + (size_t)r * depth;
        int16_t *y = out + (size_t)r * depth;
        int32_t mx = -32768, sum = 0, shifted, recip, right, round;
        int hp1;
        for (c = 0; c < depth; c++) {
            if (x[c] > mx) {
                mx = x[c];
            }
        }
        /* exp of each difference, kept in the output as TFLM does (each output overwrites only
         * its own input, read once: safe in place) */
        for (c = 0; c < depth; c++) {
            const int32_t d = tc_requant((int32_t)x[c] - mx, p->mult, p->shift) + 32767;
            const int32_t e = tc_lut16_lookup(p->exp_lut, tc_clamp(d, -32768, 32767));
            y[c] = (int16_t)e;
            sum = (int32_t)((uint32_t)sum + (uint32_t)e);
        }
        hp1 = tc_clz32((uint32_t)sum);
        shifted = (int32_t)((((int64_t)sum << (hp1 - 1)) + (1 << 13)) >> 14);
        recip = tc_lut16_lookup(p->recip_lut,
                                tc_clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767));
        right = 31 - hp1;
        round = (int32_t)1 << (right - 1);
        for (c = 0; c < depth; c++) {
            /* exp in [0, 32767] and the reciprocal in [16384, 32767]: the sum fits int32 */
            const int32_t v = (y[c] * recip + round) >> right;
            y[c] = (int16_t)tc_clamp(v, 0, 32767);
        }
    }
}

void tc_logistic_s16(const tc_sigmoid16_params_t *p, const int16_t *in, int16_t *out)
{
    uint32_t i;
    for (i = 0; i < p->size; i++) {
        out[i] = tc_logistic16(p->lut, in[i], p->mult, p->shift);
    }
}

void tc_tanh_s16(const tc_sigmoid16_params_t *p, const int16_t *in, int16_t *out)
{
    uint32_t i;
    for (i = 0; i < p->size; i++) {
        out[i] = tc_tanh16(p->lut, in[i], p->mult, p->shift);
    }
}
