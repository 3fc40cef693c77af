/* tinycompile runtime: QUANTIZE int16 -> int8, int16 -> int16 and int8 -> int16
 * (tc_requantize_s16_s8, tc_requantize_s16_s16, tc_lut_s8_s16; see tc_requantize.h).
 *
 * Matches TensorFlow Lite Micro's reference_ops::Requantize as quantize_common.cc calls it:
 * MultiplyByQuantizedMultiplier (tc_requant) of the offset input, the output zero point, the
 * output type's clamp. int8 inputs go through a table the compiler computed the same way.
 * No fast path.
 */
#include <stdint.h>

#include "tc_qmath.h"
#include "tc_requantize.h"

static inline int32_t tc_requantize_one(const tc_requantize_params_t *p, int32_t x)
{
    const int32_t v = tc_requant(x - p->in_zp, p->mult, p->shift) + p->out_zp;
    return tc_clamp(v, p->out_min, p->out_max);
}

void tc_requantize_s16_s8(const tc_requantize_params_t *p, const int16_t *in, int8_t *out)
{
    for (int32_t i = 0; i < p->size; i++) {
        out[i] = (int8_t)tc_requantize_one(p, in[i]);
    }
}

void tc_requantize_s16_s16(const tc_requantize_params_t *p, const int16_t *in, int16_t *out)
{
    for (int32_t i = 0; i < p->size; i++) {
        out[i] = (int16_t)tc_requantize_one(p, in[i]);
    }
}

void tc_lut_s8_s16(const tc_lut16_params_t *p, const int8_t *in, int16_t *out)
{
    for (int32_t i = 0; i < p->size; i++) {
        out[i] = p->lut[(uint8_t)in[i]];
    }
}
