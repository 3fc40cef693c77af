/* tinycompile runtime, internal: TFLM's int16 sigmoid and tanh (reference_integer_ops::Logistic
 * and ::Tanh for int16), shared by the int16 LOGISTIC/TANH kernels (tc_activations_int16.c) and
 * the LSTM's gates (tc_lstm.c). Both interpolate linearly in one 256-entry table of
 * sigmoid(i / 24) in 0.16 fixed point, computed at compile time (ops/tables.py:
 * sigmoid_interp_table) and passed in the params; tanh(x) = 2 sigmoid(2x) - 1. The input is
 * first scaled as TFLM does: (x * mult + round) >> shift, mult <= 32767. Static inline, so every
 * kernel file stays self-contained.
 */
#ifndef TC_SIGMOID16_H
#define TC_SIGMOID16_H

#include <stdint.h>

/* x >> s rounding toward minus infinity (an arithmetic shift), portable for negative x. */
static inline int32_t tc_asr(int32_t x, int s)
{
    return x >= 0 ? x >> s : -(int32_t)(~(uint32_t)x >> s) - 1;
}

/* TFLM's int16 input scaling: (x * mult + 2^(shift - 1)) >> shift (no rounding at shift 0). */
static inline int32_t tc_sigmoid16_in(int32_t x, int32_t mult, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return tc_asr(x * mult + round, (int)shift);
}

/* Logistic, Q0.15 out (the input at 1/(3 * 4096) after scaling, i.e. Q3.12 times 3). */
static inline int16_t tc_logistic16(const uint16_t *lut, int32_t x, int32_t mult, int32_t shift)
{
    const int32_t v = tc_sigmoid16_in(x, mult, shift);
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 9;
    uint32_t r;
    if (uh >= 255u) {
        r = 0x7FFFu << 10;
    } else {
        const uint32_t ua = lut[uh], ub = lut[uh + 1u];
        r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int16_t)(r >> 10);
}

/* Tanh, signed Q0.15 out. */
static inline int16_t tc_tanh16(const uint16_t *lut, int32_t x, int32_t mult, int32_t shift)
{
    const int32_t v = tc_sigmoid16_in(x, mult, shift);
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t uh = a >> 8;
    int32_t r;
    if (uh >= 255u) {
        r = 0xFFFF << 8;
    } else {
        const uint32_t ua = lut[uh], ub = lut[uh + 1u];
        r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)tc_asr(r, 8);
}

#endif /* TC_SIGMOID16_H */
