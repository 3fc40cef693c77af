/* tinycompile runtime, internal: helpers of the ARMv6-M (Cortex-M0/M0+) kernels
 * (tc_conv2d_m0.c, tc_depthwise_m0.c, tc_fully_connected_m0.c, tc_pool_m0.c). Portable C99, so they build
 * and can be tested everywhere; only ARMv6-M builds call them (the portable kernels dispatch
 * with `#if defined(__ARM_ARCH_6M__)`).
 *
 * The requantization they use is tc_qmath.h's tc_requant, which on ARMv6-M is tc_requant16
 * (four 16x16 products instead of a call to __aeabi_lmul, proven and tested identical), or for
 * an ONNX layer its ONNX variant's integer form (tc_out_s8_m0v).
 */
#ifndef TC_M0_H
#define TC_M0_H

#include <stdint.h>

#include "tc_conv2d.h"
#include "tc_fully_connected.h"
#include "tc_pool.h"
#include "tc_qmath.h"

/* The ARMv6-M entry points, same contracts as tc_dwconv_s8 / tc_conv_s8 / tc_fc_s8. */
void tc_dwconv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* tc_depthwise_dm4_m0.c: the whole layer for depth multipliers in fours, dilation 1, windows of
 * at most 50 taps and 256 / k_h >= k_w; returns 0 (nothing written) elsewhere. */
int tc_dwconv_dm4_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_fc_s8_m0(const tc_fc_params_t *p, const int8_t *in, int8_t *out);
/* CONV_2D: returns 0 (nothing done) for grouped convolutions, which take the portable path. */
int tc_conv_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* tc_conv2d_few_m0.c: tc_conv_few_s8 on ARMv6-M (the whole layer). */
void tc_conv_few_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* tc_pool_m0.c: tc_maxpool_s8 / tc_avgpool_s8 on ARMv6-M (the whole layer), for windows of
 * at most TC_POOL_M0_MAXTAPS taps. */
#define TC_POOL_M0_MAXTAPS 64
void tc_maxpool_s8_m0(const tc_pool_params_t *p, const int8_t *in, int8_t *out);
void tc_avgpool_s8_m0(const tc_pool_params_t *p, const int8_t *in, int8_t *out);

/* Pieces of the ARMv6-M kernels' naked assembly routines. TC_M0_ARG marks their (unused in C)
 * parameters. TC_M0_ENTER / TC_M0_LEAVE save and restore r4-r11 and return (a 36-byte frame:
 * the fifth argument, if any, then at [sp, #36]), so a routine may use every low register and
 * r8-r11. TC_M0_DOT14_ELEM is one element of the four-channel dot products (tc_m0_dot14 and
 * tc_conv2d_few_m0.c's banded one): r0 x, r1/r5/r6/r7 the four weight rows, r3 an index counting
 * up (its ADDS sets Z at zero), r8-r11 the sums, r2 and r4 clobbered. */
#define TC_M0_ARG __attribute__((unused))
#define TC_M0_ENTER                                                                             \
    "push {r4, r5, r6, r7, lr}\n\t"                                                            \
    "mov r4, r8\n\t"                                                                            \
    "mov r5, r9\n\t"                                                                            \
    "mov r6, r10\n\t"                                                                           \
    "mov r7, r11\n\t"                                                                           \
    "push {r4, r5, r6, r7}\n\t"
#define TC_M0_LEAVE                                                                             \
    "pop {r4, r5, r6, r7}\n\t"                                                                  \
    "mov r8, r4\n\t"                                                                            \
    "mov r9, r5\n\t"                                                                            \
    "mov r10, r6\n\t"                                                                           \
    "mov r11, r7\n\t"                                                                           \
    "pop {r4, r5, r6, r7, pc}\n\t"
/* The four sums of the dot products: r8-r11 from a (the fifth argument, at [sp, #36] after
 * TC_M0_ENTER) and back; r4 holds a, r5 clobbered. */
#define TC_M0_A_LOAD                                                                            \
    "ldr r4, [sp, #36]\n\t"                                                                     \
    "ldr r5, [r4, #0]\n\t"                                                                      \
    "mov r8, r5\n\t"                                                                            \
    "ldr r5, [r4, #4]\n\t"                                                                      \
    "mov r9, r5\n\t"                                                                            \
    "ldr r5, [r4, #8]\n\t"                                                                      \
    "mov r10, r5\n\t"                                                                           \
    "ldr r5, [r4, #12]\n\t"                                                                     \
    "mov r11, r5\n\t"
#define TC_M0_A_STORE                                                                           \
    "ldr r4, [sp, #36]\n\t"                                                                     \
    "mov r5, r8\n\t"                                                                            \
    "str r5, [r4, #0]\n\t"                                                                      \
    "mov r5, r9\n\t"                                                                            \
    "str r5, [r4, #4]\n\t"                                                                      \
    "mov r5, r10\n\t"                                                                           \
    "str r5, [r4, #8]\n\t"                                                                      \
    "mov r5, r11\n\t"                                                                           \
    "str r5, [r4, #12]\n\t"
#define TC_M0_DOT14_ELEM                                                                        \
    "ldrsb r2, [r0, r3]\n\t"                                                                    \
    "ldrsb r4, [r1, r3]\n\t"                                                                    \
    "muls r4, r2\n\t"                                                                           \
    "add r8, r4\n\t"                                                                            \
    "ldrsb r4, [r5, r3]\n\t"                                                                    \
    "muls r4, r2\n\t"                                                                           \
    "add r9, r4\n\t"                                                                            \
    "ldrsb r4, [r6, r3]\n\t"                                                                    \
    "muls r4, r2\n\t"                                                                           \
    "add r10, r4\n\t"                                                                           \
    "ldrsb r4, [r7, r3]\n\t"                                                                    \
    "muls r4, r2\n\t"                                                                           \
    "add r11, r4\n\t"                                                                           \
    "adds r3, #1\n\t"
/* The elements from index r3 (negative) up to zero, two a pass (an odd count enters at the
 * second); local labels 1 and 3. */
#define TC_M0_DOT14_RUN                                                                         \
    "lsls r4, r3, #31\n\t"                                                                      \
    "bne 3f\n"                                                                                   \
    "1:\n\t" TC_M0_DOT14_ELEM "3:\n\t" TC_M0_DOT14_ELEM "bne 1b\n\t"

/* tc_conv2d_m0.c: a[k] += sum_{i < n} x[i] * w[k * ws + i] for k = 0..3 (Thumb-1 assembly on
 * ARMv6-M, C elsewhere). */
void tc_m0_dot14(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t *a);

/* The same four-channel dot product on whatever core this builds for: tc_m0_dot14 on ARMv6-M,
 * tc_dot14_s8 (tc_dot.h: SXTB16 + SMLAD on Cortex-M4/M7) elsewhere. */
#if defined(__ARM_ARCH_6M__)
#define TC_DOT14 tc_m0_dot14
#else
#define TC_DOT14 tc_dot14_s8
#endif

/* One int8 output: requantize (tc_qmath.h's tc_requant, on ARMv6-M its 16-bit-product form
 * tc_requant16) + output offset + activation clamp, as tc_out_s8. */
TC_INLINE int8_t tc_out_s8_m0(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                              int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant(acc, mult, shift) + off, lo, hi);
}

/* tc_out_s8_m0 with the requantization variant as a compile-time argument: onnx = 1 is
 * tc_qmath.h's ONNX variant (an ONNX layer, whose shifts are above 31: tc_requant_onnx). The
 * ARMv6-M kernels choose the variant once per call of a routine (TC_M0_ONNX) and run its
 * instance: a test per output in their register-starved loops made GCC allocate them worse and
 * cost TFLite layers about 1% (measured). */
TC_INLINE int8_t tc_out_s8_m0v(int32_t acc, int32_t mult, int32_t shift, int32_t off,
                               int32_t lo, int32_t hi, const int onnx)
{
    const int32_t y = onnx ? tc_requant_onnx(acc, mult, shift) : tc_requant(acc, mult, shift);
    return (int8_t)tc_clamp(y + off, lo, hi);
}

/* Whether a layer requantizes with the ONNX variant, from its first shift (never in a build
 * without it: tc_qmath.h's TC_ONNX_VARIANT). */
#define TC_M0_ONNX(shift) (TC_ONNX_VARIANT && (shift) > 31)

/* tc_conv2d_m0.c: one output of either variant (the test per call), out of line, for the
 * routines' leftover channels. */
int8_t tc_m0_out1(int32_t acc, int32_t mult, int32_t shift, int32_t oo, int32_t lo, int32_t hi);

/* tc_conv2d_m0.c: o[k] = tc_out_s8_m0v(a[k], mult[k], shift[k], oo, lo, hi, variant) for k < 4.
 * Out of line: in the callers' loops ARMv6-M's eight low registers are taken and the
 * requantization would spill. */
void tc_m0_out4(const int32_t *a, const int32_t *mult, const int32_t *shift, int32_t oo,
                int32_t lo, int32_t hi, int8_t *o);
/* The same for n outputs, n a multiple of 4: a CONV_2D pixel's in blocks of up to TC_M0_OUTN,
 * one call each (a call costs about 20 instructions). The FULLY_CONNECTED loop keeps
 * tc_m0_out4: a block there cost more registers and stack than the calls it saved (measured). */
#define TC_M0_OUTN 16
void tc_m0_outn(const int32_t *a, const int32_t *mult, const int32_t *shift, int32_t oo,
                int32_t lo, int32_t hi, int8_t *o, int32_t n);

#endif /* TC_M0_H */
