/* tinycompile runtime: integer requantization primitives (portable C99).
 *
 * Same semantics as TFLite Micro's reference kernels built without TFLITE_SINGLE_ROUNDING:
 * gemmlowp's SaturatingRoundingDoublingHighMul followed by RoundingDivideByPOT.
 * Written from the documented semantics; the Python twin is tinycompile/quant/qmath.py.
 *
 * The convolutions' and FULLY_CONNECTED's requantization, tc_requant_conv, has a second
 * variant, onnxruntime's requantization, for ONNX models' convolutions and GEMMs running on the
 * same kernels: a (multiplier, shift) pair with shift > 31 holds an ONNX scale
 * (tc_requant_onnx below).
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
 * requantization; every kernel calls it (the convolutions and FULLY_CONNECTED through
 * tc_requant_conv, below, which adds the ONNX variant). Computed without the two separate
 * roundings:
 *
 * shift >= 0: tc_srdhm(x << shift, m) is floor((xs * m + 2^30) / 2^31) (m is never INT32_MIN).
 * shift = -r < 0: with h = floor((x * m + 2^30) / 2^31), RoundingDivideByPOT(h, r) rounds half
 *   away from zero: floor((h + c) / 2^r), c = 2^(r-1) - [h < 0]. Nested floors of power-of-two
 *   divisions merge, so this is floor((x * m + 2^30 + c * 2^31) / 2^(31 + r)), one 64-bit
 *   multiply-accumulate (|x * m| < 2^62, c * 2^31 <= 2^61: no overflow). For m >= 0,
 *   [h < 0] = [x < 0] except when x < 0 and x * m >= -2^30, where h = 0 and both choices of c
 *   give floor((2^(r-1) - [x < 0]) / 2^r) = 0.
 * This is tc_requant_mul64 below; tc_requant is tc_requant16 (same results, no 64x64-bit multiply)
 * on ARMv6-M, which has no 32x32->64 multiply instruction, and tc_requant_mul64 elsewhere. */
TC_INLINE int32_t tc_requant_mul64(int32_t x, int32_t multiplier, int32_t shift)
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

/* ------------------------------------------------ ARMv6-M: 16-bit products (tc_requant16) */

/* tc_requant(x, m, shift), exactly, for 0 <= m < 2^31 and shift in [-31, 31] (the range
 * tc_requant is defined for).
 *
 * Proof. tc_requant computes floor(P / 2^k) of the 64-bit P = x' * m + B, where
 *   shift >= 0: x' = (int32)(x << shift), B = 2^30, k = 31;
 *   shift = -r < 0: x' = x, B = c * 2^31 + 2^30 with c = 2^(r-1) - [x < 0] (so
 *   0 <= B < 2^61), k = 32 + (r - 1), i.e. floor(hi32(P) / 2^(r-1)) where hi32(P) is the
 *   high word of P as int32 (|P| < 2^62, so P fits int64 and floor(P / 2^32) fits int32).
 * Split x' = xh * 2^16 + xl (xh = x' >> 16 in [-2^15, 2^15), xl in [0, 2^16)) and
 * m = mh * 2^16 + ml (mh in [0, 2^15), ml in [0, 2^16)). Then
 *   x' * m = hh * 2^32 + (a + b) * 2^16 + ll,
 *   hh = xh * mh  (|hh| < 2^30),  a = xh * ml  (|a| < 2^31),  b = xl * mh  (0 <= b < 2^31),
 *   ll = xl * ml  (0 <= ll < 2^32, exact in uint32),
 * every product exact in 32 bits. P is then summed as a 64-bit (hi, lo) pair: each term
 * t * 2^16 with t an int32 is (hi, lo) = (t >> 16 arithmetic, t << 16), added with a carry out
 * of lo (lo' = lo + u wraps exactly when lo' < u). All sums are exact modulo 2^64 and P's
 * true value lies in int64, so (hi, lo) is P. For shift >= 0 the result is
 * floor(P / 2^31) = (hi << 1) | (lo >> 31) taken modulo 2^32, which is the int32 conversion
 * tc_requant does; for shift < 0 it is hi >> (r - 1). Checked against tc_requant on the host
 * (tests/test_kernels_fast_m0.py: tc_requant16 with the C form of tc_mulacc16 against
 * tc_requant_mul64, edge values and 4 million random inputs; the Thumb-1 form sums the same four
 * products and runs in every ARMv6-M model test). */
#if defined(__ARM_ARCH_6M__)
/* (hi, lo) = hh * 2^32 + (a + b) * 2^16 + ll as above, then + (bhi, blo); Thumb-1 has the
 * ADDS/ADCS pair the 64-bit sum needs, which C cannot express without 64-bit types (GCC then
 * spills). Four MULS, no call. */
TC_INLINE int32_t tc_mulacc16(int32_t x, int32_t m, uint32_t blo, int32_t bhi,
                                  uint32_t *plo)
{
    uint32_t xl, ml, lo, t;
    __asm__(".syntax unified\n\t"
            "uxth %[xl], %[x]\n\t"
            "asrs %[x], %[x], #16\n\t"
            "uxth %[ml], %[m]\n\t"
            "lsrs %[m], %[m], #16\n\t"
            "movs %[lo], %[xl]\n\t"
            "muls %[lo], %[ml]\n\t" /* ll = xl * ml */
            "muls %[ml], %[x]\n\t"  /* a = xh * ml */
            "muls %[xl], %[m]\n\t"  /* b = xl * mh */
            "muls %[m], %[x]\n\t"   /* hh = xh * mh */
            "lsls %[t], %[ml], #16\n\t"
            "asrs %[ml], %[ml], #16\n\t"
            "adds %[lo], %[t]\n\t"
            "adcs %[m], %[ml]\n\t"
            "lsls %[t], %[xl], #16\n\t"
            "lsrs %[xl], %[xl], #16\n\t"
            "adds %[lo], %[t]\n\t"
            "adcs %[m], %[xl]\n\t"
            ".syntax divided"
            : [x] "+l"(x), [m] "+l"(m), [xl] "=&l"(xl), [ml] "=&l"(ml), [lo] "=&l"(lo),
              [t] "=&l"(t)
            :
            : "cc");
    __asm__(".syntax unified\n\t"
            "adds %[lo], %[blo]\n\t"
            "adcs %[hi], %[bhi]\n\t"
            ".syntax divided"
            : [lo] "+l"(lo), [hi] "+l"(m)
            : [blo] "l"(blo), [bhi] "l"(bhi)
            : "cc");
    *plo = lo;
    return m;
}
#else
/* The same sum in portable C (carries by comparison): what the host tests check. */
TC_INLINE int32_t tc_mulacc16(int32_t x, int32_t m, uint32_t blo, int32_t bhi,
                                  uint32_t *plo)
{
    const int32_t xh = x >> 16, mh = m >> 16;
    const uint32_t xl = (uint32_t)x & 0xFFFFu, ml = (uint32_t)m & 0xFFFFu;
    uint32_t lo = xl * ml, t, u;
    int32_t hi = xh * mh;
    t = (uint32_t)(xh * (int32_t)ml);
    u = t << 16;
    lo += u;
    hi += ((int32_t)t >> 16) + (lo < u ? 1 : 0);
    t = xl * (uint32_t)mh;
    u = t << 16;
    lo += u;
    hi += (int32_t)(t >> 16) + (lo < u ? 1 : 0);
    lo += blo;
    hi += bhi + (lo < blo ? 1 : 0);
    *plo = lo;
    return hi;
}
#endif

TC_INLINE int32_t tc_requant16(int32_t x, int32_t m, int32_t shift)
{
    uint32_t lo;
    if (shift >= 0) {
        const int32_t hi =
            tc_mulacc16((int32_t)((uint32_t)x << shift), m, 1u << 30, 0, &lo);
        return (int32_t)(((uint32_t)hi << 1) | (lo >> 31));
    } else {
        const int32_t c = (int32_t)((1u << -shift) >> 1) + (x >> 31);
        return tc_mulacc16(x, m, ((uint32_t)c << 31) | (1u << 30), c >> 1, &lo) >>
               (-shift - 1);
    }
}

TC_INLINE int32_t tc_requant(int32_t x, int32_t multiplier, int32_t shift)
{
#if defined(__ARM_ARCH_6M__)
    return tc_requant16(x, multiplier, shift);
#else
    return tc_requant_mul64(x, multiplier, shift);
#endif
}

/* ---------------------------------------- ONNX variant (shift > 31): onnxruntime's rounding
 *
 * onnxruntime (MLAS) requantizes y = saturate(round_half_even(float(float(acc) * s)) + zp),
 * float() rounding to float32 (tc_onnx.h). An ONNX convolution or GEMM running on the TFLite
 * kernels gives each output channel the pair
 *     multiplier = the IEEE bits of s (positive, normal: s = M * 2^(e - 150), M its 24-bit
 *                  mantissa with the implicit bit, 2^23 <= M < 2^24, e its biased exponent),
 *     shift      = M << 7, in [2^30, 2^31): above 31, which marks the variant;
 * tc_requant_conv(acc, multiplier, shift) is then round_half_even(float(float(acc) * s)),
 * limited to +-2^15 (far past saturation), and the caller adds the zero point and clamps to int8
 * as it does for TFLite (an ONNX layer's clamp is int8's). The compiler's side:
 * tinycompile/ops/onnx_requant.py (onnx_multipliers, integer_form_ok).
 *
 * Cores with a single-precision FPU (__ARM_FP & 4: Cortex-M4F, M7) compute exactly that: VCVT,
 * VMUL, then VCVTR, which rounds as the FPSCR says (to nearest even, the mode the multiply
 * relies on too). Elsewhere the integer form below, for the layers the compiler gives it
 * (110 <= e <= 133, and float(acc) == acc or the output saturating: ops/onnx_requant.py), with
 * tc_onnx_requant_exact (tc_onnx.c: the same arithmetic in integers, exactly, for any input)
 * where it cannot decide.
 *
 * The integer form. With i = e - 110 (0..23), P = (acc << i) * (M << 7) = acc * s * 2^47
 * exactly (|acc << i| < 2^31 is checked, M << 7 < 2^31: the product fits 64 bits). Let
 * v = acc * s = P / 2^47, u = P + 2^46 + 2^32 and hi the high word of u: q = hi >> 15 =
 * floor(u / 2^47). When hi mod 2^15 >= 2, i.e. u mod 2^47 >= 2^33, t = P + 2^46 has t mod 2^47
 * in [2^32, 2^47 - 2^32): v lies at least 2^-15 from every half-integer and q = floor(t / 2^47)
 * = floor(v + 1/2) is v's nearest integer. float(v) is within half an ulp of v, at most 2^-17
 * for |v| < 256, so it stays on v's side of every half-integer and is none:
 * round_half_even(float(v)) = q. For |v| >= 256, q and round_half_even(float(v)) (rounding is
 * monotone) are both at least 256 in magnitude, of v's sign: both saturate once the zero point
 * (|zp| <= 128) is added. Otherwise (a half-integer within 2^-15 of v, one output in 2^14 on
 * average, or acc << i overflowing, |acc| >= 2^(31 - i): saturating by far)
 * tc_onnx_requant_exact decides. float(acc) == acc for |acc| <= 2^24; beyond it the compiler
 * has checked that 2^24 * s >= 256.5 (both then saturate) or that |acc| cannot pass 2^24.
 * Checked against tc_onnx_requant (the float32 arithmetic) on millions of cases:
 * tests/test_onnx_requant.py. */
int32_t tc_onnx_requant_exact(int32_t acc, int32_t bits);

/* 1 where the core has a single-precision FPU (Cortex-M4F, M7): the variant's float form. */
#if defined(__ARM_FP) && (__ARM_FP & 4)
#define TC_FPU_SP 1
#else
#define TC_FPU_SP 0
#endif

#if TC_FPU_SP
TC_INLINE int32_t tc_requant_onnx(int32_t x, int32_t bits, int32_t m7)
{
    union {
        int32_t i;
        float f;
    } s, r;
    float v;
    (void)m7;
    s.i = bits;
    v = (float)x * s.f;
    __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r.f) : "t"(v));
    __asm__("ssat %0, #16, %1" : "=r"(r.i) : "r"(r.i));
    return r.i;
}
#else
TC_INLINE int32_t tc_requant_onnx(int32_t x, int32_t bits, int32_t m7)
{
    const int32_t i = (int32_t)((uint32_t)bits >> 23) - 110;
    const int32_t xs = (int32_t)((uint32_t)x << i);
    int32_t hi;
    if ((xs >> i) != x) {
        return tc_onnx_requant_exact(x, bits);
    }
#if defined(__ARM_ARCH_6M__)
    {
        uint32_t lo;
        hi = tc_mulacc16(xs, m7, 0, (1 << 14) + 1, &lo);
    }
#else
    hi = (int32_t)(((int64_t)xs * m7 + ((int64_t)((1 << 14) + 1) << 32)) >> 32);
#endif
    if ((((uint32_t)hi << 17) >> 18) == 0) {
        return tc_onnx_requant_exact(x, bits);
    }
    return hi >> 15;
}
#endif

/* Whether the kernels carry the ONNX variant at all. The build defines TC_ONNX_VARIANT=0 for a
 * model none of whose layers is an ONNX one (tinycompile/pipeline.py Plan.onnx_variant): the
 * compiler then drops every instance of it (about 7 KB of code on the M4/M7). */
#ifndef TC_ONNX_VARIANT
#define TC_ONNX_VARIANT 1
#endif

/* The requantization of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, whose kernels ONNX
 * convolutions and GEMMs share: tc_requant, or for a shift above 31 its ONNX variant
 * (tc_requant_onnx above). A TFLite layer pays nothing for it where its shift is negative (the
 * usual case: the test sits in the branch for shifts >= 0). The ARMv6-M kernels, whose loops
 * use every low register, choose the variant once per call instead (tc_m0.h). */
TC_INLINE int32_t tc_requant_conv(int32_t x, int32_t multiplier, int32_t shift)
{
    if (shift < 0) {
        return tc_requant(x, multiplier, shift);
    }
    if (TC_ONNX_VARIANT && shift > 31) {
        return tc_requant_onnx(x, multiplier, shift);
    }
    return tc_requant(x, multiplier, shift);
}

TC_INLINE int32_t tc_clamp(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

#endif /* TC_QMATH_H */
