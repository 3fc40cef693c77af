/* tinycompile runtime, internal: the step of CONV_2D's int16 column GEMM in assembly, shared by
 * tc_conv2d_dsp.c (tc_gemm22_col16) and tc_conv2d_chunk_dsp.c (tc_gemm2n_col16): Cortex-M4/M7.
 *
 * TC_G22_STEP: a[0..3] in r4-r7 (pixel 0 x channels 0, 1; pixel 1 x channels 0, 1) += one
 * group of the column at r0 (advanced by 16 bytes) against the weights at r1 (channel 0,
 * advanced by 4) and r1 + r2 (channel 1). The step needs all fourteen registers, with the
 * column group in r8-r11 so that one LDM loads it (a register list must ascend, which inline
 * assembly cannot promise, hence naked functions): LDM + 2 LDR + 4 SXTB16 + 8 SMLAD = 15
 * instructions for 16 MACs. r12 and lr are its scratch.
 */
#ifndef TC_GEMM22_DSP_H
#define TC_GEMM22_DSP_H

#define TC_G22_STEP                                                                             \
    "ldm     r0!, {r8, r9, r10, r11}\n\t" /* pixel 0 [x0 x2] [x1 x3], pixel 1 the same */      \
    "ldr     r12, [r1, r2]\n\t"           /* channel 1: four weights */                        \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r5, r8, lr, r5\n\t"                                                                \
    "smlad   r7, r10, lr, r7\n\t"                                                               \
    "smlad   r5, r9, r12, r5\n\t"                                                               \
    "smlad   r7, r11, r12, r7\n\t"                                                              \
    "ldr     r12, [r1], #4\n\t" /* channel 0 */                                                 \
    "sxtb16  lr, r12\n\t"                                                                       \
    "sxtb16  r12, r12, ror #8\n\t"                                                              \
    "smlad   r4, r8, lr, r4\n\t"                                                                \
    "smlad   r6, r10, lr, r6\n\t"                                                               \
    "smlad   r4, r9, r12, r4\n\t"                                                               \
    "smlad   r6, r11, r12, r6\n\t"

#define TC_ARG __attribute__((unused)) /* read by the assembly, not by name */

#endif /* TC_GEMM22_DSP_H */
