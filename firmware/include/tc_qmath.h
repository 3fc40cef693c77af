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

/* MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31), rounded like TFLM. */
TC_INLINE int32_t tc_requant(int32_t x, int32_t multiplier, int32_t shift)
{
    int left = shift > 0 ? shift : 0;
    int right = shift > 0 ? 0 : -shift;
    return tc_rdivpot(tc_srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}

TC_INLINE int32_t tc_clamp(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

#endif /* TC_QMATH_H */
