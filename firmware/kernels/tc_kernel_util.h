/* tinycompile runtime, internal: helpers shared by the kernel files (not part of the public
 * API; lives beside the kernels, so generated code never includes it).
 *
 * Everything here is static inline, so every kernel file stays self-contained:
 *   - TC_DSP: 1 where the core has the DSP extension (__ARM_FEATURE_DSP: Cortex-M4/M7), else 0;
 *     then word loads and SXTB16 helpers for the SMLAD / SMLAxy fast paths;
 *   - tc_out_s8: requantize (tc_qmath.h's tc_requant_conv: TFLite's tc_requant, or its ONNX
 *     variant for ONNX layers) + output offset + activation clamp;
 *   - int8 dot products for CONV_2D and FULLY_CONNECTED, each in a portable and a DSP variant
 *     (SXTB16 + SMLAD sum the same products in int32 with the same wrap-around, so results are
 *     identical). They are shared by both operators and must inline into their loops, which is
 *     why these fast paths live here rather than in a tc_*_dsp.c file. The DSP inner loops of
 *     tc_dot22_s8 (2 inputs x 2 channels) and tc_dot14_s8 (1 input x 4 channels) are inline
 *     assembly (they need every register); tc_out_s8_dsp is their requantization;
 *   - convolution window geometry (valid taps, interior output range), shared by CONV_2D and
 *     DEPTHWISE_CONV_2D;
 *   - declarations of the out-of-line fast paths defined in tc_*_dsp.c.
 */
#ifndef TC_KERNEL_UTIL_H
#define TC_KERNEL_UTIL_H

#include <stdint.h>
#include <string.h>

#include "tc_qmath.h"

/* TC_PORTABLE (the benchmark's baseline, `portable=True` builds): every kernel takes its portable
 * C path on any core: TC_DSP is 0 and the ARMv6-M special paths are off (the compiler's
 * __ARM_ARCH_6M__ is undefined below, in every kernel file, which includes this header before
 * testing it); kernels test TC_DSP or __ARM_ARCH_6M__ only after including this header. */
#if defined(TC_PORTABLE)
#undef __ARM_ARCH_6M__
#define TC_DSP 0
#elif defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TC_DSP 1
#else
#define TC_DSP 0
#endif

/* ------------------------------------------------------------------ 16x8 dot product */

/* sum(x[i] * w[i * stride]) of int16 activations and int8 weights, exactly, as TFLM's int64
 * accumulator: each product is below 2^22 in magnitude, so blocks of 256 sum in int32 without
 * overflow and only the block sums are added in 64 bits (cheap on cores without 64-bit adds). */
TC_INLINE int64_t tc_dot_s16_s8(const int16_t *x, const int8_t *w, int32_t n, int32_t stride)
{
    int64_t acc = 0;
    while (n > 0) {
        const int32_t m = n < 256 ? n : 256;
        int32_t part = 0, i;
        for (i = 0; i < m; i++) {
            part += (int32_t)x[i] * w[i * stride];
        }
        acc += part;
        x += m;
        w += m * stride;
        n -= m;
    }
    return acc;
}

/* One int16 output of a 16x8 op: 64-bit requantization, clamp (zero points are 0). */
TC_INLINE int16_t tc_out_s16(int64_t acc, int32_t rm, int32_t ts, int32_t lo, int32_t hi)
{
    return (int16_t)tc_clamp(tc_requant64(acc, rm, ts), lo, hi);
}

/* ------------------------------------------------------------------ DSP building blocks */

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
 *   onnx = 0, TFLite: m the multiplier, q = 2^(r-1) + out_offset * 2^r, r = -shift in [1, 20];
 *     SMMLAR(2 * acc, m, q) = q + h, h = SaturatingRoundingDoublingHighMul(acc, m) exactly
 *     (2 * acc fits int32: |bias_eff| < 2^29 is checked by the caller); adding the sign of acc
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
#endif

/* --------------------------------------------------------------------------- output */

/* One int8 output from an int32 accumulator: requantize (TFLite's, or the ONNX variant where
 * shift > 31: tc_requant_conv), add the output zero point, clamp to the fused activation's
 * range (int8's for an ONNX layer). */
TC_INLINE int8_t tc_out_s8(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                           int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant_conv(acc, mult, shift) + off, lo, hi);
}

/* --------------------------------------------------------------------- dot products
 *
 * tc_dot_s8:     acc + sum(a[i] * b[i])
 * tc_dot12_s8:   two output channels share the input: a[0] += x.w0, a[1] += x.w1
 * tc_dot22_s8:   two inputs x two channels: a[0] += x0.w0, a[1] += x0.w1, a[2] += x1.w0,
 *                a[3] += x1.w1
 * tc_dot_off_s8: acc + sum((x[i] + off) * w[i]), the border path (TFLM's inner loop)
 * tc_dot14_s8:   one input x four channels w0 + k * ws: a[k] += x.w_k (tc_dot14r_s8: over rows)
 * tc_dot22_x8_s8 (DSP only): tc_dot22_s8 with x1 - x0 == w1 - w0 and n a multiple of 8
 * tc_copy_s8:    n bytes (im2col windows)
 *
 * The portable variants of tc_dot_s8 / tc_dot12_s8 run one index register counting up to zero
 * for all streams (ARMv6-M has only register-offset LDRSB); the DSP variants take four int8
 * per word, then finish element by element. (The scalar loops are written out in each variant
 * rather than shared through a helper: GCC allocates registers worse for the helper form.) */

#if TC_DSP

TC_INLINE int32_t tc_dot_s8(const int8_t *a, const int8_t *b, int32_t n, int32_t acc)
{
    for (; n >= 4; n -= 4) {
        uint32_t av = tc_ld32(a), bv = tc_ld32(b);
        a += 4;
        b += 4;
        acc = __smlad(tc_sxtb16_lo(av), tc_sxtb16_lo(bv), acc);
        acc = __smlad(tc_sxtb16_hi(av), tc_sxtb16_hi(bv), acc);
    }
    for (; n > 0; n--) {
        acc += *a++ * *b++;
    }
    return acc;
}

TC_INLINE void tc_dot12_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1];
    for (; n >= 4; n -= 4) {
        uint32_t xv = tc_ld32(x), v0 = tc_ld32(w0), v1 = tc_ld32(w1);
        uint32_t xe = tc_sxtb16_lo(xv), xo = tc_sxtb16_hi(xv);
        x += 4;
        w0 += 4;
        w1 += 4;
        a0 = __smlad(xe, tc_sxtb16_lo(v0), a0);
        a0 = __smlad(xo, tc_sxtb16_hi(v0), a0);
        a1 = __smlad(xe, tc_sxtb16_lo(v1), a1);
        a1 = __smlad(xo, tc_sxtb16_hi(v1), a1);
    }
    for (; n > 0; n--) {
        int32_t xv = *x++;
        a0 += xv * *w0++;
        a1 += xv * *w1++;
    }
    a[0] = a0;
    a[1] = a1;
}

/* Two inputs x two channels where x1 - x0 == w1 - w0 == d (im2col columns, pointwise pixels
 * of stride 1 with depth == in_c, FC rows): four values of each stream per step, 4 LDR + 8
 * SXTB16 + 8 SMLAD for 16 MACs, two steps per pass. Inline assembly: the schedule needs every
 * register (six temporaries, never more than six halves live). The pointers walk the second
 * streams (x1, w1) with post-increment; the first streams are read at offset -d (a register
 * offset wraps modulo 2^32). */
#define TC_DOT22_ASM_STEP                                                                       \
    "ldr     %[p], [%[x], %[nd]]\n\t"                                                           \
    "ldr     %[u], [%[w], %[nd]]\n\t"                                                           \
    "ldr     %[v], [%[w]], #4\n\t"                                                              \
    "sxtb16  %[t1], %[p]\n\t"                                                                   \
    "sxtb16  %[t2], %[u]\n\t"                                                                   \
    "smlad   %[a00], %[t1], %[t2], %[a00]\n\t"                                                  \
    "sxtb16  %[t3], %[v]\n\t"                                                                   \
    "smlad   %[a01], %[t1], %[t3], %[a01]\n\t"                                                  \
    "ldr     %[t1], [%[x]], #4\n\t"                                                             \
    "sxtb16  %[p], %[p], ror #8\n\t"                                                            \
    "sxtb16  %[u], %[u], ror #8\n\t"                                                            \
    "sxtb16  %[v], %[v], ror #8\n\t"                                                            \
    "smlad   %[a00], %[p], %[u], %[a00]\n\t"                                                    \
    "smlad   %[a01], %[p], %[v], %[a01]\n\t"                                                    \
    "sxtb16  %[p], %[t1]\n\t"                                                                   \
    "smlad   %[a10], %[p], %[t2], %[a10]\n\t"                                                   \
    "smlad   %[a11], %[p], %[t3], %[a11]\n\t"                                                   \
    "sxtb16  %[t1], %[t1], ror #8\n\t"                                                          \
    "smlad   %[a10], %[t1], %[u], %[a10]\n\t"                                                   \
    "smlad   %[a11], %[t1], %[v], %[a11]\n\t"

/* tc_dot22_s8 for x1 - x0 == w1 - w0 == d and n a positive multiple of 8: the assembly loop
 * alone, no tails. */
TC_INLINE void tc_dot22_x8_s8(const int8_t *x0, const int8_t *w0, int32_t d, int32_t n,
                              int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    const int8_t *x = x0 + d, *w = w0 + d;
    const int8_t *const end = x + n;
    const uint32_t nd = 0u - (uint32_t)d;
    uint32_t p, u, v, t1, t2, t3;
    __asm__("1:\n\t" TC_DOT22_ASM_STEP TC_DOT22_ASM_STEP "cmp     %[x], %[e]\n\t"
            "bne     1b\n\t"
            : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x] "+r"(x),
              [w] "+r"(w), [p] "=&r"(p), [u] "=&r"(u), [v] "=&r"(v), [t1] "=&r"(t1),
              [t2] "=&r"(t2), [t3] "=&r"(t3)
            : [nd] "r"(nd), [e] "r"(end)
            : "cc", "memory");
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

TC_INLINE void tc_dot22_s8(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                           const int8_t *w1, int32_t n, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    const int32_t xd = (int32_t)(x1 - x0), wd = (int32_t)(w1 - w0);
    if (xd == wd && n >= 8) {
        const int8_t *const end = x1 + (n & ~7);
        const uint32_t nd = 0u - (uint32_t)xd;
        uint32_t p, u, v, t1, t2, t3;
        __asm__("1:\n\t" TC_DOT22_ASM_STEP TC_DOT22_ASM_STEP "cmp     %[x], %[e]\n\t"
                "bne     1b\n\t"
                : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
                  [x] "+r"(x1), [w] "+r"(w1), [p] "=&r"(p), [u] "=&r"(u), [v] "=&r"(v),
                  [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
                : [nd] "r"(nd), [e] "r"(end)
                : "cc", "memory");
        x0 = x1 - xd;
        w0 = w1 - wd;
        n &= 7;
    }
    for (; n >= 4; n -= 4) {
        uint32_t p = tc_ld32(x0), q = tc_ld32(x0 + xd), u = tc_ld32(w0), v = tc_ld32(w0 + wd);
        uint32_t pe = tc_sxtb16_lo(p), qe = tc_sxtb16_lo(q);
        uint32_t ue = tc_sxtb16_lo(u), ve = tc_sxtb16_lo(v);
        a00 = __smlad(pe, ue, a00);
        a01 = __smlad(pe, ve, a01);
        a10 = __smlad(qe, ue, a10);
        a11 = __smlad(qe, ve, a11);
        p = tc_sxtb16_hi(p);
        q = tc_sxtb16_hi(q);
        u = tc_sxtb16_hi(u);
        v = tc_sxtb16_hi(v);
        a00 = __smlad(p, u, a00);
        a01 = __smlad(p, v, a01);
        a10 = __smlad(q, u, a10);
        a11 = __smlad(q, v, a11);
        x0 += 4;
        w0 += 4;
    }
    for (; n > 0; n--) {
        int32_t p = *x0, q = x0[xd], u = *w0, v = w0[wd];
        x0++;
        w0++;
        a00 += p * u;
        a01 += p * v;
        a10 += q * u;
        a11 += q * v;
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}
#undef TC_DOT22_ASM_STEP

/* One input x four channels w0 + k * ws (k = 0..3): a[k] += x.w_k. The input word is
 * unpacked once for the four channels: 5 LDR + 10 SXTB16 + 8 SMLAD for 16 MACs; two pointers
 * walk channels 1 and 3 with post-increment, channels 0 and 2 are read at offset -ws. */
#define TC_DOT14_ASM_STEP                                                                       \
    "ldr     %[xo], [%[x]], #4\n\t"                                                             \
    "sxtb16  %[xe], %[xo]\n\t"                                                                  \
    "sxtb16  %[xo], %[xo], ror #8\n\t"                                                          \
    "ldr     %[t], [%[wa], %[n1]]\n\t"                                                           \
    "sxtb16  %[u], %[t]\n\t"                                                                    \
    "smlad   %[a0], %[xe], %[u], %[a0]\n\t"                                                     \
    "sxtb16  %[t], %[t], ror #8\n\t"                                                            \
    "smlad   %[a0], %[xo], %[t], %[a0]\n\t"                                                     \
    "ldr     %[t], [%[wa]], #4\n\t"                                                           \
    "sxtb16  %[u], %[t]\n\t"                                                                    \
    "smlad   %[a1], %[xe], %[u], %[a1]\n\t"                                                     \
    "sxtb16  %[t], %[t], ror #8\n\t"                                                            \
    "smlad   %[a1], %[xo], %[t], %[a1]\n\t"                                                     \
    "ldr     %[t], [%[w], %[n1]]\n\t"                                                           \
    "sxtb16  %[u], %[t]\n\t"                                                                    \
    "smlad   %[a2], %[xe], %[u], %[a2]\n\t"                                                     \
    "sxtb16  %[t], %[t], ror #8\n\t"                                                            \
    "smlad   %[a2], %[xo], %[t], %[a2]\n\t"                                                     \
    "ldr     %[t], [%[w]], #4\n\t"                                                              \
    "sxtb16  %[u], %[t]\n\t"                                                                    \
    "smlad   %[a3], %[xe], %[u], %[a3]\n\t"                                                     \
    "sxtb16  %[t], %[t], ror #8\n\t"                                                            \
    "smlad   %[a3], %[xo], %[t], %[a3]\n\t"

/* Out of line: inlined into a busy loop, GCC may find no registers left for the asm.
 * tc_dot14r_s8 runs over rows: row r of the input starts at x + r * xs, of channel k's weights
 * at w0 + k * ws + r * n (a k x k window with contiguous rows); tc_dot14_s8 is one row. */
static __attribute__((noinline, unused)) void tc_dot14r_s8(const int8_t *x, int32_t xs,
                                                           const int8_t *w0, int32_t ws,
                                                           int32_t n, int32_t rows, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const uint32_t n1 = 0u - (uint32_t)ws;
    const int32_t n8 = n & ~7;
    for (; rows > 0; rows--) {
        const int8_t *xr = x, *w = w0 + 3 * ws;
        int32_t m;
        if (n8 > 0) {
            const int8_t *const end = xr + n8;
            const int8_t *wa = w0 + ws;
            uint32_t xe, xo, t, u;
            __asm__("1:\n\t" TC_DOT14_ASM_STEP TC_DOT14_ASM_STEP "cmp     %[x], %[e]\n\t"
                    "bne     1b\n\t"
                    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xr),
                      [w] "+r"(w), [wa] "+r"(wa), [xe] "=&r"(xe), [xo] "=&r"(xo), [t] "=&r"(t),
                      [u] "=&r"(u)
                    : [n1] "r"(n1), [e] "r"(end)
                    : "cc", "memory");
        }
        w -= 3 * ws;
        for (m = n8; m < n; m++) {
            const int32_t xv = *xr++;
            a0 += xv * w[0];
            a1 += xv * w[ws];
            a2 += xv * w[2 * ws];
            a3 += xv * w[3 * ws];
            w++;
        }
        x += xs;
        w0 += n;
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}

/* Out of line: inlined into a busy loop, GCC may find no registers left for the asm. */
static __attribute__((noinline, unused)) void tc_dot14_s8(const int8_t *x, const int8_t *w0,
                                                          int32_t ws, int32_t n, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const int8_t *w = w0 + 3 * ws;
    if (n >= 8) {
        const int8_t *const end = x + (n & ~7);
        const int8_t *wa = w0 + ws;
        const uint32_t n1 = 0u - (uint32_t)ws;
        uint32_t xe, xo, t, u;
        __asm__("1:\n\t" TC_DOT14_ASM_STEP TC_DOT14_ASM_STEP "cmp     %[x], %[e]\n\t"
                "bne     1b\n\t"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x),
                  [w] "+r"(w), [wa] "+r"(wa), [xe] "=&r"(xe), [xo] "=&r"(xo), [t] "=&r"(t),
                  [u] "=&r"(u)
                : [n1] "r"(n1), [e] "r"(end)
                : "cc", "memory");
        n &= 7;
    }
    w -= 3 * ws;
    for (; n > 0; n--) {
        const int32_t xv = *x++;
        a0 += xv * w[0];
        a1 += xv * w[ws];
        a2 += xv * w[2 * ws];
        a3 += xv * w[3 * ws];
        w++;
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}
#undef TC_DOT14_ASM_STEP

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

/* Copy n bytes (DSP cores: a word at a time, unaligned LDR/STR). */
TC_INLINE void tc_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 4; n -= 4) {
        uint32_t v;
        memcpy(&v, src, 4);
        memcpy(dst, &v, 4);
        src += 4;
        dst += 4;
    }
    for (; n > 0; n--) {
        *dst++ = *src++;
    }
}

/* x + off (in [-255, 255]) is formed in 16-bit lanes with SADD16, then SMLAD. */
TC_INLINE int32_t tc_dot_off_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t off,
                                int32_t acc)
{
    const uint32_t off2 = ((uint32_t)off << 16) | ((uint32_t)off & 0xFFFFu);
    for (; n >= 4; n -= 4) {
        uint32_t xv = tc_ld32(x), wv = tc_ld32(w);
        uint32_t xe = (uint32_t)__sadd16(tc_sxtb16_lo(xv), off2);
        uint32_t xo = (uint32_t)__sadd16(tc_sxtb16_hi(xv), off2);
        x += 4;
        w += 4;
        acc = __smlad(xe, tc_sxtb16_lo(wv), acc);
        acc = __smlad(xo, tc_sxtb16_hi(wv), acc);
    }
    for (; n > 0; n--) {
        acc += (*x++ + off) * *w++;
    }
    return acc;
}

#else /* portable */

TC_INLINE int32_t tc_dot_s8(const int8_t *a, const int8_t *b, int32_t n, int32_t acc)
{
    int32_t i;
    a += n;
    b += n;
    for (i = -n; i < 0; i++) {
        acc += a[i] * b[i];
    }
    return acc;
}

TC_INLINE void tc_dot12_s8(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1];
    int32_t i;
    x += n;
    w0 += n;
    w1 += n;
    for (i = -n; i < 0; i++) {
        int32_t xv = x[i];
        a0 += xv * w0[i];
        a1 += xv * w1[i];
    }
    a[0] = a0;
    a[1] = a1;
}

TC_INLINE void tc_dot22_s8(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                           const int8_t *w1, int32_t n, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    for (; n > 0; n--) {
        int32_t p = *x0++, q = *x1++, u = *w0++, v = *w1++;
        a00 += p * u;
        a01 += p * v;
        a10 += q * u;
        a11 += q * v;
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

TC_INLINE void tc_dot14_s8(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (; n > 0; n--) {
        const int32_t xv = *x++;
        a0 += xv * w[0];
        a1 += xv * w[ws];
        a2 += xv * w[2 * ws];
        a3 += xv * w[3 * ws];
        w++;
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}

TC_INLINE void tc_dot14r_s8(const int8_t *x, int32_t xs, const int8_t *w0, int32_t ws,
                             int32_t n, int32_t rows, int32_t *a)
{
    for (; rows > 0; rows--, x += xs, w0 += n) {
        tc_dot14_s8(x, w0, ws, n, a);
    }
}

TC_INLINE void tc_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n);
}

TC_INLINE int32_t tc_dot_off_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t off,
                                int32_t acc)
{
    for (; n > 0; n--) {
        acc += (*x++ + off) * *w++;
    }
    return acc;
}

#endif /* TC_DSP */

/* ------------------------------------------------------------------- window geometry */

/* Range [*lo, *hi) of filter taps t with 0 <= origin + dil * t < size. */
static inline void tc_tap_range(int32_t origin, int32_t dil, int32_t k, int32_t size,
                                int32_t *lo, int32_t *hi)
{
    int32_t a = 0, b = k;
    if (origin < 0) {
        a = (-origin + dil - 1) / dil;
    }
    if (origin + (k - 1) * dil >= size) {
        b = size - origin > 0 ? (size - origin - 1) / dil + 1 : 0;
    }
    if (b < a) {
        b = a;
    }
    *lo = a;
    *hi = b;
}

/* Outputs o in [*lo, *hi) whose whole window o * stride - pad + [0, (k - 1) * dil] is inside
 * [0, size); *hi >= *lo. */
static inline void tc_interior(int32_t n_out, int32_t stride, int32_t pad, int32_t k,
                               int32_t dil, int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t a = pad > 0 ? (pad + stride - 1) / stride : 0;
    int32_t last = size - 1 - (k - 1) * dil + pad; /* largest o * stride allowed */
    int32_t b = last < 0 ? 0 : last / stride + 1;
    if (b > n_out) {
        b = n_out;
    }
    if (a > b) {
        a = b;
    }
    *lo = a;
    *hi = b;
}

/* ----------------------------------------------------- in-place pointwise walks */

/* A 1x1 CONV_2D (stride 1, no groups) in place over n pixels of c input and oc output
 * channels, its input d = in - out bytes from its output (tc_conv2d.h: 0 when both start
 * together, n * (oc - c) when an expanding layer's output ends where its input ends). Pixels
 * run forwards when no output ever reaches input still unread, else backwards. */
TC_INLINE int tc_pw_forward(int32_t d, int32_t n, int32_t c, int32_t oc)
{
    return d >= 0 && (oc <= c || d >= (n - 1) * (oc - c));
}

/* Whether the outputs of pixels [i0, i1) miss those pixels' own input (they are then written
 * in place while it is read). */
TC_INLINE int tc_pw_apart(int32_t d, int32_t i0, int32_t i1, int32_t c, int32_t oc)
{
    return i1 * oc <= d + i0 * c || d + i1 * c <= i0 * oc;
}

/* Whether an in-place pointwise layer's input and output share bytes (else the planner gave
 * them separate buffers and the ordinary path runs). */
TC_INLINE int tc_pw_overlap(const int8_t *in, const int8_t *out, int32_t n, int32_t c,
                            int32_t oc)
{
    return out < in + n * c && in < out + n * oc;
}

/* ------------------------------------------------------- out-of-line fast paths (DSP) */

#if TC_DSP
#include "tc_depthwise.h"

/* tc_depthwise_dsp.c: channels oc .. oc + 3 of an interior DEPTHWISE_CONV_2D pixel, depth
 * multiplier 1, x at the window's first tap of channel oc, w at the channels' weight block;
 * stored at dst[0 .. 3]. */
void tc_dwconv_block4_dsp(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                          int32_t oc, int32_t xs, int32_t rs, int8_t *dst);

/* tc_conv2d_dsp.c: CONV_2D's int16 column GEMM (layout described there). tc_col16_bytes: the
 * column buffer of two pixels for windows of k values over in_c channels; tc_col16_window: the
 * window of the output whose top-left tap is input (iy0, ix0) into pixel slot 0 or 1;
 * tc_col16_pixels: c values from x (a 1x1 window read in place) into a slot;
 * tc_conv_col16_pair: every output channel of the two pixels in col (o1 == 0: slot 1 unused). */
int32_t tc_col16_bytes(int32_t k, int32_t in_c);
void tc_col16_window(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                     int16_t *col, int32_t slot);
void tc_col16_pixels(const int8_t *x, int32_t c, int16_t *col, int32_t slot);
void tc_conv_col16_pair(const tc_conv_params_t *p, const int16_t *col, int32_t k, int8_t *o0,
                        int8_t *o1);
#endif

/* ------------------------------------------------------------ depthwise window taps */

/* One channel of a depthwise window (weights in blocks of four channels, tc_depthwise.h):
 * acc + sum((x + off) * w) over nky x nkx taps, x at the first tap of its channel (taps xstep
 * apart, rows rstep), w at that tap's weight (taps 4 bytes apart, rows wrs). off is the input
 * offset on border windows, 0 where it is folded into the bias. Shared by the portable and the
 * ARMv6-M depthwise kernels. */
TC_INLINE int32_t tc_dw_taps_sum(const int8_t *x, const int8_t *w, int32_t nky, int32_t nkx,
                                 int32_t xstep, int32_t rstep, int32_t wrs, int32_t off,
                                 int32_t acc)
{
    int32_t ky, kx;
    for (ky = 0; ky < nky; ky++) {
        const int8_t *xp = x, *wp = w;
        for (kx = 0; kx < nkx; kx++) {
            acc += (*xp + off) * *wp;
            xp += xstep;
            wp += 4;
        }
        x += rstep;
        w += wrs;
    }
    return acc;
}

#endif /* TC_KERNEL_UTIL_H */
