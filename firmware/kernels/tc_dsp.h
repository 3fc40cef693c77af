/* tinycompile runtime, internal: the DSP building blocks (Cortex-M4/M7, __ARM_FEATURE_DSP)
 * shared by the kernel files: unaligned word loads, SXTB16 and PKHBT/PKHTB, and the DSP
 * requantizations (tc_rq2_s8 for DEPTHWISE_CONV_2D's doubled accumulators, tc_out_s8_dsp for
 * the CONV_2D / FULLY_CONNECTED loops: tc_out_s8's arithmetic in fewer instructions).
 * Part of tc_kernel_util.h, which includes it once TC_DSP is set; empty where TC_DSP is 0.
 */
#ifndef TC_DSP_H
#define TC_DSP_H

#ifndef TC_KERNEL_UTIL_H
#error "tc_dsp.h is included through tc_kernel_util.h"
#endif

#if TC_DSP
#include <arm_acle.h>

TC_INLINE uint32_t tc_ld32(const int8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4); /* unaligned LDR: allowed on M4/M7 */
    return v;
}

/* SXTB16: bytes 0 and 2, sign-extended into two 16-bit lanes. */
TC_INLINE uint32_t tc_sxtb16_lo(uint32_t v)
{
    return (uint32_t)__sxtb16(v);
}

/* SXTB16 of the value rotated right by 8 (bytes 1 and 3), in one instruction. */
TC_INLINE uint32_t tc_sxtb16_hi(uint32_t v)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

/* (lo half of a, lo half of b) and (hi half of a, hi half of b). */
TC_INLINE uint32_t tc_pkhbt16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

TC_INLINE uint32_t tc_pkhtb16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
    return r;
}

/* One int8 output from a doubled accumulator acc2 = 2 * acc (DEPTHWISE_CONV_2D's 3x3 path
 * doubles its weights and bias for free), with per-channel constants formed once:
 *   onnx = 0, TFLite: m the multiplier, q = 2^(r-1) + out_offset * 2^r, r = -shift in [1, 23];
 *     SMMLAR(2 * acc, m, q) = q + h, h = SaturatingRoundingDoublingHighMul(acc, m) exactly
 *     (2 * acc fits int32: |bias_eff| < 2^29 is checked by the caller, and 9 taps add less than
 *     2^18, so |h| <= |acc| + 1 < 2^29 + 2^18; with |out_offset| <= 128 and r <= 23,
 *     |q| <= 2^30 + 2^22, so q + h stays inside int32: r = 24 would not); adding the sign of acc
 *     and shifting by r gives RoundingDivideByPOT(h, r) + out_offset (see tc_requant in
 *     tc_qmath.h for why the sign of acc can stand for the sign of h), SSAT saturates to int8;
 *   onnx = 1, tc_requant's ONNX variant on a core with a single-precision FPU: m the IEEE bits
 *     of scale / 2, q the output zero point: round_half_even(float(acc2) * (scale / 2)), which
 *     is float(float(acc) * scale) rounded (the doubling and the halving are exact), plus q,
 *     saturated (QADD, then SSAT). r is unused. */
TC_INLINE int32_t tc_rq2_s8(int32_t acc2, int32_t m, int32_t q, int32_t r, const int onnx)
{
    int32_t v;
    if (!onnx) {
        __asm__("smmlar %0, %1, %2, %3" : "=r"(v) : "r"(acc2), "r"(m), "r"(q));
        v = (v + (acc2 >> 31)) >> r;
    } else {
#if TC_FPU_SP
        union {
            int32_t i;
            float f;
        } s, t;
        s.i = m;
        __asm__("vcvtr.s32.f32 %0, %1" : "=t"(t.f) : "t"((float)acc2 * s.f));
        v = __qadd(t.i, q);
#else
        v = 0; /* never called: the caller needs an FPU for the ONNX variant */
        (void)q;
#endif
    }
    return __ssat(v, 8);
}

/* TFLM's requantization plus the output zero point, without 64-bit arithmetic, where the
 * compiler found it exact (FULLY_CONNECTED's rq_smmlar, CONV_2D's TC_CONV_RQ_SMMLAR:
 * ops/conv_common.py smmlar_ok): with r = -shift >= 1, SMMLAR(2 * acc, m, R) = R + h with
 * h = SaturatingRoundingDoublingHighMul(acc, m) exactly (2 * acc fits int32),
 * R = (2 * out_offset + 1) * 2^(r - 1) = 2^(r - 1) + out_offset * 2^r (k2 = 2 * out_offset + 1);
 * adding the sign of acc (which stands for the sign of h: they differ only where h = 0, and
 * then both round to 0) and shifting right by r gives TFLM's RoundingDivideByPOT(h, r) +
 * out_offset; SSAT clamps to int8 (the shift by r is split into r - 1 = ~shift and the SSAT's
 * own 1). A narrower fused activation is applied afterwards. */
TC_INLINE int32_t tc_rq_smmlar_s8(int32_t acc, int32_t m, int32_t shift, int32_t k2)
{
    const int32_t r1 = ~shift;
    int32_t v;
    __asm__("smmlar  %0, %1, %2, %3" : "=r"(v) : "r"(acc * 2), "r"(m), "r"(k2 << r1));
    v = (v + (acc >> 31)) >> r1;
    __asm__("ssat    %0, #8, %1, asr #1" : "=r"(v) : "r"(v));
    return v;
}

/* tc_requant(x, m, shift) for shift < 0, given the constants a loop hoists: r1 = ~shift and
 * t = 1 << r1; six instructions. With r = -shift >= 1, tc_requant's c = 2^(r-1) + (x >> 31)
 * and base = c * 2^31 + 2^30 (low word (c << 31) | 2^30, high word c >> 1); SMLAL adds x * m
 * to base in 64 bits and the result is the high word >> (r - 1), r - 1 = ~shift. */
TC_INLINE int32_t tc_requant_rs_dsp(int32_t x, int32_t m, uint32_t r1, uint32_t t)
{
    uint32_t u, bl, bh;
    __asm__("add     %[u], %[t], %[x], asr #31\n\t"
            "lsl     %[bl], %[u], #31\n\t"
            "orr     %[bl], %[bl], #0x40000000\n\t"
            "asr     %[bh], %[u], #1\n\t"
            "smlal   %[bl], %[bh], %[x], %[m]\n\t"
            "asr     %[bh], %[bh], %[r1]\n\t"
            : [u] "=&r"(u), [bl] "=&r"(bl), [bh] "=&r"(bh)
            : [x] "r"(x), [m] "r"(m), [r1] "r"(r1), [t] "r"(t));
    return (int32_t)bh;
}

/* tc_out_s8 for the CONV_2D / FULLY_CONNECTED loops: the same arithmetic (tc_qmath.h's
 * tc_requant_conv), its right-shift branch through tc_requant_rs_dsp. */
TC_INLINE int8_t tc_out_s8_dsp(int32_t acc, int32_t mult, int32_t shift, int32_t off,
                               int32_t lo, int32_t hi)
{
    int32_t y;
    if (shift < 0) {
        const uint32_t r1 = ~(uint32_t)shift;
        y = tc_requant_rs_dsp(acc, mult, r1, 1u << r1);
    } else {
        y = tc_requant_conv(acc, mult, shift);
    }
    return (int8_t)tc_clamp(y + off, lo, hi);
}

/* One channel's two outputs (pixels 0 and 1) of the CONV_2D loops: tc_out_s8_dsp's arithmetic (tc_requant_conv,
 * output offset, clamp) with the channel's rounding constant formed once, SSAT to int8 and the
 * clamp compares only where the activation narrows the range (full: [-128, 127]). d1 is
 * stored before d0, so a lone pixel passes d1 == d0. */
TC_INLINE void tc_out2_s8_dsp(int32_t x0, int32_t x1, int32_t m, int32_t sh, int32_t oo,
                              int32_t lo, int32_t hi, int full, int8_t *d0, int8_t *d1)
{
    int32_t y0, y1;
    if (sh < 0) {
        const uint32_t r1 = ~(uint32_t)sh, t = 1u << r1;
        y0 = tc_requant_rs_dsp(x0, m, r1, t);
        y1 = tc_requant_rs_dsp(x1, m, r1, t);
    } else {
        y0 = tc_requant_conv(x0, m, sh);
        y1 = tc_requant_conv(x1, m, sh);
    }
    y0 = __ssat(y0 + oo, 8);
    y1 = __ssat(y1 + oo, 8);
    if (!full) {
        y0 = tc_clamp(y0, lo, hi);
        y1 = tc_clamp(y1, lo, hi);
    }
    *d1 = (int8_t)y1;
    *d0 = (int8_t)y0;
}
#endif

#endif /* TC_DSP_H */
