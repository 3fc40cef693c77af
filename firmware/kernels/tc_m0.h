/* tinycompile runtime, internal: helpers of the ARMv6-M (Cortex-M0/M0+) kernels
 * (tc_conv2d_m0.c, tc_depthwise_m0.c, tc_fully_connected_m0.c). Portable C99, so they build
 * and can be tested everywhere; only ARMv6-M builds call them (the portable kernels dispatch
 * with `#if defined(__ARM_ARCH_6M__)`).
 *
 * ARMv6-M has a 32x32->32 multiply only: tc_requant's 64-bit product becomes a call to
 * __aeabi_lmul (a full 64x64 multiply) plus 64-bit adds and shifts. tc_requant_m0 gives the
 * same int32 for every input with four 16x16 products instead.
 */
#ifndef TC_M0_H
#define TC_M0_H

#include <stdint.h>

#include "tc_conv2d.h"
#include "tc_fully_connected.h"
#include "tc_qmath.h"

/* The ARMv6-M entry points, same contracts as tc_dwconv_s8 / tc_conv_s8 / tc_fc_s8. */
void tc_dwconv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_fc_s8_m0(const tc_fc_params_t *p, const int8_t *in, int8_t *out);
/* CONV_2D: returns 0 (nothing done) for grouped convolutions, which take the portable path. */
int tc_conv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* tc_conv2d_m0.c: a[k] += sum_{i < n} x[i] * w[k * ws + i] for k = 0..3 (Thumb-1 assembly on
 * ARMv6-M, C elsewhere). */
void tc_m0_dot14(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t *a);

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
 * (tests/test_kernels_fast_m0.py: edge values and random inputs). */
#if defined(__ARM_ARCH_6M__)
/* (hi, lo) = hh * 2^32 + (a + b) * 2^16 + ll as above, then + (bhi, blo); Thumb-1 has the
 * ADDS/ADCS pair the 64-bit sum needs, which C cannot express without 64-bit types (GCC then
 * spills). Four MULS, no call. */
TC_INLINE int32_t tc_mulacc_hi_m0(int32_t x, int32_t m, uint32_t blo, int32_t bhi,
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
TC_INLINE int32_t tc_mulacc_hi_m0(int32_t x, int32_t m, uint32_t blo, int32_t bhi,
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

TC_INLINE int32_t tc_requant_m0(int32_t x, int32_t m, int32_t shift)
{
    uint32_t lo;
    if (shift >= 0) {
        const int32_t hi =
            tc_mulacc_hi_m0((int32_t)((uint32_t)x << shift), m, 1u << 30, 0, &lo);
        return (int32_t)(((uint32_t)hi << 1) | (lo >> 31));
    } else {
        const int32_t c = (int32_t)((1u << -shift) >> 1) + (x >> 31);
        return tc_mulacc_hi_m0(x, m, ((uint32_t)c << 31) | (1u << 30), c >> 1, &lo) >>
               (-shift - 1);
    }
}

/* One int8 output: tc_requant_m0 + output offset + activation clamp (tc_out_s8's). */
TC_INLINE int8_t tc_out_s8_m0(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                              int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant_m0(acc, mult, shift) + off, lo, hi);
}

#endif /* TC_M0_H */
