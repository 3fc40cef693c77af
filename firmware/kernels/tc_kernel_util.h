/* tinycompile runtime, internal: helpers shared by the kernel files (not part of the public
 * API; lives beside the kernels, so generated code never includes it).
 *
 * Everything here is static inline, so every kernel file stays self-contained:
 *   - TC_DSP: 1 where the core has the DSP extension (__ARM_FEATURE_DSP: Cortex-M4/M7), else 0;
 *     then word loads and SXTB16 helpers for the SMLAD / SMLAxy fast paths;
 *   - tc_out_s8: requantize (tc_qmath.h's tc_requant) + output offset + activation clamp;
 *   - int8 dot products for CONV_2D and FULLY_CONNECTED, each in a portable and a DSP variant
 *     (SXTB16 + SMLAD sum the same products in int32 with the same wrap-around, so results are
 *     identical). They are shared by both operators and must inline into their loops, which is
 *     why these fast paths live here rather than in a tc_*_dsp.c file;
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
#endif

/* --------------------------------------------------------------------------- output */

/* One int8 output from an int32 accumulator: requantize, add the output zero point, clamp to
 * the fused activation's range. */
TC_INLINE int8_t tc_out_s8(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                           int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant(acc, mult, shift) + off, lo, hi);
}

/* --------------------------------------------------------------------- dot products
 *
 * tc_dot_s8:     acc + sum(a[i] * b[i])
 * tc_dot12_s8:   two output channels share the input: a[0] += x.w0, a[1] += x.w1
 * tc_dot22_s8:   two inputs x two channels: a[0] += x0.w0, a[1] += x0.w1, a[2] += x1.w0,
 *                a[3] += x1.w1
 * tc_dot_off_s8: acc + sum((x[i] + off) * w[i]), the border path (TFLM's inner loop)
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

TC_INLINE void tc_dot22_s8(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                           const int8_t *w1, int32_t n, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    for (; n >= 4; n -= 4) {
        uint32_t p = tc_ld32(x0), q = tc_ld32(x1), u = tc_ld32(w0), v = tc_ld32(w1);
        uint32_t pe = tc_sxtb16_lo(p), po = tc_sxtb16_hi(p);
        uint32_t qe = tc_sxtb16_lo(q), qo = tc_sxtb16_hi(q);
        uint32_t ue = tc_sxtb16_lo(u), uo = tc_sxtb16_hi(u);
        uint32_t ve = tc_sxtb16_lo(v), vo = tc_sxtb16_hi(v);
        x0 += 4;
        x1 += 4;
        w0 += 4;
        w1 += 4;
        a00 = __smlad(pe, ue, a00);
        a00 = __smlad(po, uo, a00);
        a01 = __smlad(pe, ve, a01);
        a01 = __smlad(po, vo, a01);
        a10 = __smlad(qe, ue, a10);
        a10 = __smlad(qo, uo, a10);
        a11 = __smlad(qe, ve, a11);
        a11 = __smlad(qo, vo, a11);
    }
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

/* ------------------------------------------------------- out-of-line fast paths (DSP) */

#if TC_DSP
#include "tc_depthwise.h"

/* tc_depthwise_dsp.c: channels oc .. oc + 3 of an interior DEPTHWISE_CONV_2D pixel, depth
 * multiplier 1, x at the window's first tap of channel oc, w at the channels' weight block;
 * stored at dst[0 .. 3]. */
void tc_dwconv_block4_dsp(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                          int32_t oc, int32_t xs, int32_t rs, int8_t *dst);
#endif

#endif /* TC_KERNEL_UTIL_H */
