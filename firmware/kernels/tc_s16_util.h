/* tinycompile runtime, internal: what the 16x8 fast kernels share (tc_s16.h): the 32-bit
 * requantization, the quad layout's tap order and the assembly inner loops (tc_s16_gemm.c).
 * Include after tc_kernel_util.h.
 */
#ifndef TC_S16_UTIL_H
#define TC_S16_UTIL_H

#include <stdint.h>

#include "tc_qmath.h"

/* Requantize an exact int32 accumulator with its channel's rq = {bias, m, 2^(sh - 1), sh}
 * (tc_s16.h): (floor(acc * m / 2^32) + 2^(sh - 1)) >> sh, then clamp. One SMMLA on M4/M7; on
 * ARMv6-M tc_qmath.h's tc_mulacc16 (m < 2^30). */
TC_INLINE int32_t tc_s16_rq(int32_t acc, const int32_t *rq)
{
#if TC_DSP
    int32_t v;
    __asm__("smmla %0, %1, %2, %3" : "=r"(v) : "r"(acc), "r"(rq[1]), "r"(rq[2]));
    return v >> rq[3];
#elif defined(__ARM_ARCH_6M__)
    uint32_t lo;
    return tc_mulacc16(acc, rq[1], 0, rq[2], &lo) >> rq[3];
#else
    return (int32_t)(((((int64_t)acc * rq[1]) >> 32) + rq[2]) >> rq[3]);
#endif
}

TC_INLINE int16_t tc_s16_out(int32_t acc, const int32_t *rq, int32_t lo, int32_t hi)
{
    return (int16_t)tc_clamp(tc_s16_rq(acc, rq), lo, hi);
}

/* Byte of tap t (0..3) inside a channel's word of a group: taps 0, 2, 1, 3. */
#define TC_S16_POS(t) ((((t) & 1) << 1) | (((t) >> 1) & 1))

/* tc_s16_gemm.c (tc_s16_dot*: a[] += sum(x * u) over ng >= 1 groups of four taps). */
#if TC_DSP
void tc_s16_dot2x2(const int16_t *col, const uint8_t *w, int32_t ng, int32_t *a);
void tc_s16_dot1x4(const int16_t *x, const uint8_t *w, int32_t ng, int32_t *a);
#endif
#if defined(__ARM_ARCH_6M__)
void tc_s16_dot1x4_m0(const int32_t *x, const uint8_t *w, int32_t ng, int32_t *a);
#endif

#endif /* TC_S16_UTIL_H */
