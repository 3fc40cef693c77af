/* tinycompile runtime: ABS on int16 (16x8), matching TensorFlow Lite Micro's elementwise.cc
 * (AbsEvalQuantized with zero points 0): |x|, requantized by MultiplyByQuantizedMultiplier when
 * the scales differ (32-bit arithmetic, a left shift wrapping as TFLM's x86 build), clamped.
 * Written from those semantics. The int8 unary operators are tables (tc_lut_s8). No fast path.
 */
#include "tc_unary.h"

#include "tc_qmath.h"

void tc_abs_s16(const tc_abs_s16_params_t *p, const int16_t *in, int16_t *out)
{
    int32_t i;

    for (i = 0; i < p->size; ++i) {
        int32_t v = in[i] < 0 ? -(int32_t)in[i] : in[i];
        if (p->rescale) {
            v = tc_requant(v, p->multiplier, p->shift);
        }
        out[i] = (int16_t)tc_clamp(v, -32768, 32767);
    }
}
