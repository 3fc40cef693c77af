/* tinycompile runtime: the inner loops of the 16x8 CONV_2D and FULLY_CONNECTED fast kernels
 * (tc_conv2d_int16_fast.c), in assembly: int16 activations times the quad weight layout of
 * tc_s16.h (w + 128 as uint8, each channel's four taps of a group in the order 0, 2, 1, 3).
 *
 * Every routine adds sum(x * u) over ng groups of four taps to int32 accumulators in memory
 * (a[]); the caller starts them at bias - 128 * sum(x), so that they end at bias + x . w
 * (wrapping int32 arithmetic: exact where the compiler proved that value fits, tc_s16.h).
 *   - Cortex-M4/M7 (DSP): tc_s16_dot2x2: two pixels x two channels from a column of groups of
 *     16 bytes (pixel 0's four taps, then pixel 1's) and a quad's two channels (w at channel 0
 *     or 2 of the quad, 16 bytes per group): LDM + LDRD + 4 UXTB16 + 8 SMLAD for 16 MACs, two
 *     groups per loop pass. tc_s16_dot1x4: one pixel (four int16 per group, any alignment) x
 *     a whole quad: 2 LDR + LDM + 8 UXTB16 + 8 SMLAD;
 *   - ARMv6-M: tc_s16_dot1x4_m0: one pixel whose taps are int32 (LDR with immediate offsets)
 *     x a quad (LDRB with immediate offsets): per tap one LDR, four LDRB, MULS and ADDS.
 * Elsewhere nothing here is compiled (the portable kernel loops in C).
 */
#include <stdint.h>

#include "tc_kernel_util.h"
#include "tc_s16_util.h"

#define TC_ARG __attribute__((unused)) /* read by the assembly, not by name */

#if TC_DSP
/* AAPCS: r0 col, r1 w, r2 ng (>= 1), r3 a = {pixel 0 channel 0, p0 c1, p1 c0, p1 c1}. */
#define TC_S22_STEP                                                                             \
    "ldm     r0!, {r8, r9, r10, r11}\n\t"                                                       \
    "ldrd    lr, r12, [r1], #16\n\t"                                                            \
    "uxtb16  r3, lr\n\t"                                                                        \
    "uxtb16  lr, lr, ror #8\n\t"                                                                \
    "smlad   r4, r8, r3, r4\n\t"                                                                \
    "smlad   r6, r10, r3, r6\n\t"                                                               \
    "smlad   r4, r9, lr, r4\n\t"                                                                \
    "smlad   r6, r11, lr, r6\n\t"                                                               \
    "uxtb16  r3, r12\n\t"                                                                       \
    "uxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r5, r8, r3, r5\n\t"                                                                \
    "smlad   r7, r10, r3, r7\n\t"                                                               \
    "smlad   r5, r9, r12, r5\n\t"                                                               \
    "smlad   r7, r11, r12, r7\n\t"

__attribute__((naked, noinline)) void tc_s16_dot2x2(TC_ARG const int16_t *col,
                                                    TC_ARG const uint8_t *w, TC_ARG int32_t ng,
                                                    TC_ARG int32_t *a)
{
    __asm__ volatile("push    {r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "ldm     r3, {r4, r5, r6, r7}\n\t"
                     "tst     r2, #1\n\t"
                     "beq     2f\n\t" TC_S22_STEP "subs    r2, r2, #1\n\t"
                     "beq     3f\n\t"
                     "2:\n\t"
                     "add     r2, r0, r2, lsl #4\n\t"
                     "1:\n\t" TC_S22_STEP TC_S22_STEP "cmp     r0, r2\n\t"
                     "bne     1b\n\t"
                     "3:\n\t"
                     "pop     {r3}\n\t"
                     "stm     r3, {r4, r5, r6, r7}\n\t"
                     "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}
#undef TC_S22_STEP

/* AAPCS: r0 x, r1 w (a quad), r2 ng (>= 1), r3 a[4]. */
#define TC_S14_STEP                                                                             \
    "ldr     r8, [r0], #4\n\t"                                                                  \
    "ldr     r9, [r0], #4\n\t"                                                                  \
    "ldm     r1!, {r10, r11, r12, lr}\n\t"                                                      \
    "uxtb16  r3, r10\n\t"                                                                       \
    "uxtb16  r10, r10, ror #8\n\t"                                                              \
    "smlad   r4, r8, r3, r4\n\t"                                                                \
    "smlad   r4, r9, r10, r4\n\t"                                                               \
    "uxtb16  r3, r11\n\t"                                                                       \
    "uxtb16  r11, r11, ror #8\n\t"                                                              \
    "smlad   r5, r8, r3, r5\n\t"                                                                \
    "smlad   r5, r9, r11, r5\n\t"                                                               \
    "uxtb16  r3, r12\n\t"                                                                       \
    "uxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r6, r8, r3, r6\n\t"                                                                \
    "smlad   r6, r9, r12, r6\n\t"                                                               \
    "uxtb16  r3, lr\n\t"                                                                        \
    "uxtb16  lr, lr, ror #8\n\t"                                                                \
    "smlad   r7, r8, r3, r7\n\t"                                                                \
    "smlad   r7, r9, lr, r7\n\t"

__attribute__((naked, noinline)) void tc_s16_dot1x4(TC_ARG const int16_t *x,
                                                    TC_ARG const uint8_t *w, TC_ARG int32_t ng,
                                                    TC_ARG int32_t *a)
{
    __asm__ volatile("push    {r3, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
                     "ldm     r3, {r4, r5, r6, r7}\n\t"
                     "tst     r2, #1\n\t"
                     "beq     2f\n\t" TC_S14_STEP "subs    r2, r2, #1\n\t"
                     "beq     3f\n\t"
                     "2:\n\t"
                     "add     r2, r0, r2, lsl #3\n\t"
                     "1:\n\t" TC_S14_STEP TC_S14_STEP "cmp     r0, r2\n\t"
                     "bne     1b\n\t"
                     "3:\n\t"
                     "pop     {r3}\n\t"
                     "stm     r3, {r4, r5, r6, r7}\n\t"
                     "pop     {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t");
}
#undef TC_S14_STEP
#endif /* TC_DSP */

#if defined(__ARM_ARCH_6M__)
/* One tap: x (int32) at [r0, #XO], its four weights at [r1, #B], #B + 4, + 8, + 12. */
#define TC_M0_TAP(XO, B)                                                                        \
    "ldr     r6, [r0, #" #XO "]\n\t"                                                            \
    "ldrb    r7, [r1, #" #B "]\n\t"                                                             \
    "muls    r7, r6\n\t"                                                                        \
    "adds    r2, r2, r7\n\t"                                                                    \
    "ldrb    r7, [r1, #(" #B " + 4)]\n\t"                                                       \
    "muls    r7, r6\n\t"                                                                        \
    "adds    r3, r3, r7\n\t"                                                                    \
    "ldrb    r7, [r1, #(" #B " + 8)]\n\t"                                                       \
    "muls    r7, r6\n\t"                                                                        \
    "adds    r4, r4, r7\n\t"                                                                    \
    "ldrb    r7, [r1, #(" #B " + 12)]\n\t"                                                      \
    "muls    r7, r6\n\t"                                                                        \
    "adds    r5, r5, r7\n\t"

/* AAPCS: r0 x (int32 taps, 4-byte aligned), r1 w (a quad), r2 ng (>= 1), r3 a[4]. */
__attribute__((naked, noinline)) void tc_s16_dot1x4_m0(TC_ARG const int32_t *x,
                                                       TC_ARG const uint8_t *w,
                                                       TC_ARG int32_t ng, TC_ARG int32_t *a)
{
    __asm__ volatile(".syntax unified\n\t"
                     "push    {r3, r4, r5, r6, r7, lr}\n\t"
                     "mov     r4, r8\n\t"
                     "push    {r4}\n\t"
                     "lsls    r2, r2, #4\n\t"
                     "adds    r2, r0, r2\n\t"
                     "mov     r8, r2\n\t" /* end of x */
                     "ldm     r3, {r2, r3, r4, r5}\n\t"
                     "1:\n\t" TC_M0_TAP(0, 0) TC_M0_TAP(4, 2) TC_M0_TAP(8, 1) TC_M0_TAP(12, 3)
                     "adds    r0, #16\n\t"
                     "adds    r1, #16\n\t"
                     "cmp     r0, r8\n\t"
                     "bne     1b\n\t"
                     "pop     {r6}\n\t"
                     "mov     r8, r6\n\t"
                     "pop     {r6}\n\t"
                     "stm     r6!, {r2, r3, r4, r5}\n\t"
                     "pop     {r4, r5, r6, r7, pc}\n\t"
                     ".syntax divided\n\t");
}
#undef TC_M0_TAP
#endif /* __ARM_ARCH_6M__ */
