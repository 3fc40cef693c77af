/* tinycompile runtime: TFLite integer requantization primitives (portable C99).
 *
 * Same semantics as TFLite Micro's reference kernels built without TFLITE_SINGLE_ROUNDING:
 * gemmlowp's SaturatingRoundingDoublingHighMul followed by RoundingDivideByPOT.
 * Written from the documented semantics; the Python twin is tinycompile/passes/qmath.py.
 */
#ifndef TC_QMATH_H
#define TC_QMATH_H

#include <stdint.h>

#define TC_INLINE static inline __attribute__((always_inline))

TC_INLINE int32_t tc_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    /* gemmlowp: (ab + (ab >= 0 ? 2^30 : 1 - 2^30)) / 2^31, truncating toward zero. For every
     * product of two int32 (but the case above) this equals floor((ab + 2^30) / 2^31): an
     * arithmetic shift, no branch and no 64-bit division (GCC shifts signed values
     * arithmetically on every target we build for). */
    int64_t ab = (int64_t)a * (int64_t)b;
    return (int32_t)((ab + (1LL << 30)) >> 31);
}

TC_INLINE int32_t tc_rdivpot(int32_t x, int exponent)
{
    int32_t mask = (int32_t)((1LL << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* MultiplyByQuantizedMultiplier(x, multiplier, shift): x * multiplier * 2^(shift - 31) rounded
 * exactly like TFLM, i.e. tc_rdivpot(tc_srdhm(x << max(shift, 0), multiplier), max(-shift, 0)),
 * for the multipliers the compiler emits (0 <= multiplier < 2^31: QuantizeMultiplier's
 * [2^30, 2^31) or 0, MEAN's folded ones) and shifts in [-31, 31]. This is the runtime's one
 * requantization; every kernel calls it. Computed without the two separate roundings:
 *
 * shift >= 0: tc_srdhm(x << shift, m) is floor((xs * m + 2^30) / 2^31) (m is never INT32_MIN).
 * shift = -r < 0: with h = floor((x * m + 2^30) / 2^31), RoundingDivideByPOT(h, r) rounds half
 *   away from zero: floor((h + c) / 2^r), c = 2^(r-1) - [h < 0]. Nested floors of power-of-two
 *   divisions merge, so this is floor((x * m + 2^30 + c * 2^31) / 2^(31 + r)), one 64-bit
 *   multiply-accumulate (|x * m| < 2^62, c * 2^31 <= 2^61: no overflow). For m >= 0,
 *   [h < 0] = [x < 0] except when x < 0 and x * m >= -2^30, where h = 0 and both choices of c
 *   give floor((2^(r-1) - [x < 0]) / 2^r) = 0. */
TC_INLINE int32_t tc_requant(int32_t x, int32_t multiplier, int32_t shift)
{
    if (shift >= 0) {
        const int32_t xs = (int32_t)((uint32_t)x << shift);
        return (int32_t)(((int64_t)xs * multiplier + (1LL << 30)) >> 31);
    } else {
        const int32_t r = -shift; /* 1..31 */
        const int32_t c = (int32_t)((1u << r) >> 1) + (x >> 31);
        const uint32_t lo = ((uint32_t)c << 31) | (1u << 30);
        const int64_t base = (int64_t)(((uint64_t)(uint32_t)(c >> 1) << 32) | lo);
        const int64_t q = base + (int64_t)x * multiplier;
        return (int32_t)(q >> 32) >> (r - 1);
    }
}

/* TFLM's MultiplyByQuantizedMultiplier(int64_t x, m, shift), the 16x8 operators'
 * requantization: the compiler reduces the Q31 multiplier to Q15,
 * rm = m < 0x7FFF0000 ? (m + 2^15) >> 16 : 0x7FFF, and passes ts = 15 - shift (8..46); then
 * (x * rm + 2^(ts - 1)) >> ts, truncated to int32 as TFLM does. One 64-bit multiply. */
TC_INLINE int32_t tc_requant64(int64_t x, int32_t rm, int32_t ts)
{
    return (int32_t)((x * rm + ((int64_t)1 << (ts - 1))) >> ts);
}

TC_INLINE int32_t tc_clamp(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

#endif /* TC_QMATH_H */
