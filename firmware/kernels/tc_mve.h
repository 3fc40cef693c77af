/* tinycompile runtime, internal: Helium (MVE) building blocks shared by the Cortex-M55 kernels
 * (TC_MVE, tc_kernel_util.h). Everything is static inline over <arm_mve.h>'s ACLE intrinsics;
 * on other cores this header declares nothing.
 *
 * The requantization is TFLM's MultiplyByQuantizedMultiplier, step by step and exactly
 * (tc_qmath.h's tc_requant gives the same numbers in one rounding):
 *   - x * 2^max(shift, 0): VSHL, which wraps as the int32 multiplication does;
 *   - SaturatingRoundingDoublingHighMul(x, m): VQRDMULH, sat((2 x m + 2^31) >> 32), which is
 *     floor((x m + 2^30) / 2^31); gemmlowp's (x m + (x m >= 0 ? 2^30 : 1 - 2^30)) / 2^31,
 *     truncating, is the same number for every product (for x m = -n < 0 both are
 *     -floor((n + 2^30 - 1) / 2^31)), and both saturate only at x = m = INT32_MIN;
 *   - RoundingDivideByPOT(h, r), r = max(-shift, 0), which rounds half away from zero: VRSHL
 *     by -r rounds half up, so a negative h is first lowered by one (VQADD of h & -r shifted
 *     down 31 places: -1 exactly where h < 0 and r > 0; INT32_MIN stays, and so does its
 *     result). For h < 0 the two differ only at the ties, where the decrement makes VRSHL's
 *     result the one further from zero.
 * Shifts above 31 (the ONNX variant of tc_requant_conv) are not handled here: callers take the
 * scalar tc_out_s8 for such a channel. */
#ifndef TC_MVE_H
#define TC_MVE_H

#include "tc_kernel_util.h"

#if TC_MVE

/* Four lanes, each with its own multiplier and shift (TFLite sign: > 0 shifts left). */
TC_INLINE int32x4_t tc_mve_requant(int32x4_t x, int32x4_t mult, int32x4_t shift)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t right = vminq_s32(shift, zero); /* -r */
    x = vshlq_s32(x, vmaxq_s32(shift, zero));
    x = vqrdmulhq_s32(x, mult);
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
    return vrshlq_s32(x, right);
}

/* Four lanes sharing one multiplier and shift (four pixels of one output channel). */
TC_INLINE int32x4_t tc_mve_requant_n(int32x4_t x, int32_t mult, int32_t shift)
{
    if (shift > 0) {
        x = vshlq_r_s32(x, shift);
    }
    x = vqrdmulhq_n_s32(x, mult);
    if (shift < 0) {
        x = vqaddq_s32(x, vshrq_n_s32(x, 31));
        x = vrshlq_n_s32(x, shift);
    }
    return x;
}

/* + output offset, clamp to [lo, hi]: the int8 results in the four int32 lanes. */
TC_INLINE int32x4_t tc_mve_out(int32x4_t x, int32_t off, int32_t lo, int32_t hi)
{
    x = vaddq_n_s32(x, off);
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

#endif /* TC_MVE */

#endif /* TC_MVE_H */
