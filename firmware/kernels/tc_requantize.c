/* tinycompile runtime: QUANTIZE int16 -> int8, int16 -> int16, int8 -> int16 and the int32 pairs
 * (int8/int16 -> int32, int32 -> int8/int16) (tc_requantize_*, tc_lut_s8_s16; see
 * tc_requantize.h).
 *
 * Matches TensorFlow Lite Micro's reference_ops::Requantize as quantize_common.cc calls it:
 * MultiplyByQuantizedMultiplier (tc_requant) of the offset input, the output zero point, the
 * output type's clamp. int8 inputs go through a table the compiler computed the same way.
 * No fast path.
 */
#include <stdint.h>

#include "tc_qmath.h"
#include "tc_requantize.h"

/* The zero points' subtraction and addition wrap as TFLM's int32 arithmetic does on an int32
 * input or output (no overflow for int8/int16 ones). */
static inline int32_t tc_requantize_one(const tc_requantize_params_t *p, int32_t x)
{
    const int32_t d = (int32_t)((uint32_t)x - (uint32_t)p->in_zp);
    const int32_t v = (int32_t)((uint32_t)tc_requant(d, p->mult, p->shift) + (uint32_t)p->out_zp);
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

void tc_requantize_s8_s32(const tc_requantize_params_t *p, const int8_t *in, int32_t *out)
{
    for (int32_t i = p->size - 1; i >= 0; i--) { /* backwards: may grow over its input */
        out[i] = tc_requantize_one(p, in[i]);
    }
}

void tc_requantize_s16_s32(const tc_requantize_params_t *p, const int16_t *in, int32_t *out)
{
    for (int32_t i = p->size - 1; i >= 0; i--) {
        out[i] = tc_requantize_one(p, in[i]);
    }
}

void tc_requantize_s32_s8(const tc_requantize_params_t *p, const int32_t *in, int8_t *out)
{
    for (int32_t i = 0; i < p->size; i++) { /* forwards: may shrink over its input */
        out[i] = (int8_t)tc_requantize_one(p, in[i]);
    }
}

void tc_requantize_s32_s16(const tc_requantize_params_t *p, const int32_t *in, int16_t *out)
{
    for (int32_t i = 0; i < p->size; i++) {
        out[i] = (int16_t)tc_requantize_one(p, in[i]);
    }
}
