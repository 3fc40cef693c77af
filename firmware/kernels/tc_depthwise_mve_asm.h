/* tinycompile runtime, internal: the assembly of tc_depthwise_mve.c's Helium depthwise passes
 * (included by it alone, under TC_ASM_LOOPS, after its tc_dwm_blk_t; see its header for the
 * design). Optimized builds only: at -O0 GCC cannot give these statements their registers, and
 * tc_depthwise_mve.c takes its C passes instead.
 */
#if !defined(TC_DWM_BLK_T)
#error "tc_depthwise_mve_asm.h is included by tc_depthwise_mve.c only"
#endif

/* The assembly passes. Registers: accumulators q0..q3 (outputs 0..3 of the pass), the window
 * line's three weights q4..q6, the input column q7. Each pass runs over nb blocks of four
 * channels (an asm loop): the line slots' pointers, the weights and the block constants
 * post-increment to the next block (4 bytes, 9 vectors, one tc_dwm_blk_t: their other loads
 * use offsets from there), the output pointer steps 4 bytes. */

/* Weights of window line t (w0 post-increments w by the block's 144 bytes). */
#define TC_DWM_W0                                                                           \
    "vldrw.32      q4, [%[w]], #144\n\t"                                                    \
    "vldrw.32      q5, [%[w], #-128]\n\t"                                                   \
    "vldrw.32      q6, [%[w], #-112]\n\t"
#define TC_DWM_W1                                                                           \
    "vldrw.32      q4, [%[w], #-96]\n\t"                                                    \
    "vldrw.32      q5, [%[w], #-80]\n\t"                                                    \
    "vldrw.32      q6, [%[w], #-64]\n\t"
#define TC_DWM_W2                                                                           \
    "vldrw.32      q4, [%[w], #-48]\n\t"                                                    \
    "vldrw.32      q5, [%[w], #-32]\n\t"                                                    \
    "vldrw.32      q6, [%[w], #-16]\n\t"

/* Input column j of a line slot, converted to float (column 0 post-increments the pointer to
 * the next block; columns are 16 bytes apart). */
#define TC_DWM_X0(L)                                                                        \
    "vldrb.s32     q7, [%[" #L "]], #4\n\t"                                                 \
    "vcvt.f32.s32  q7, q7\n\t"
#define TC_DWM_X(L, off)                                                                    \
    "vldrb.s32     q7, [%[" #L "], #" #off "]\n\t"                                          \
    "vcvt.f32.s32  q7, q7\n\t"

/* acc (q<a>) += column * weight (q<u>), or (first window line) = */
#define TC_DWM_MAC(m, a, u) m "      q" #a ", q7, q" #u "\n\t"

/* One window line of a pass of four outputs at stride 1 (columns 0..5) and 2 (0..8), of two
 * outputs (0..3, 0..4) and of one (0..2); m: "vmul.f32" on the first window line (the
 * accumulators start there), else "vfma.f32". */
#define TC_DWM_L4S1(L, W, m)                                                                \
    W TC_DWM_X0(L) TC_DWM_MAC(m, 0, 4)                                                      \
    TC_DWM_X(L, 12) TC_DWM_MAC("vfma.f32", 0, 5) TC_DWM_MAC(m, 1, 4)                        \
    TC_DWM_X(L, 28) TC_DWM_MAC("vfma.f32", 0, 6) TC_DWM_MAC("vfma.f32", 1, 5)               \
        TC_DWM_MAC(m, 2, 4)                                                                 \
    TC_DWM_X(L, 44) TC_DWM_MAC("vfma.f32", 1, 6) TC_DWM_MAC("vfma.f32", 2, 5)               \
        TC_DWM_MAC(m, 3, 4)                                                                 \
    TC_DWM_X(L, 60) TC_DWM_MAC("vfma.f32", 2, 6) TC_DWM_MAC("vfma.f32", 3, 5)               \
    TC_DWM_X(L, 76) TC_DWM_MAC("vfma.f32", 3, 6)
#define TC_DWM_L4S2(L, W, m)                                                                \
    W TC_DWM_X0(L) TC_DWM_MAC(m, 0, 4)                                                      \
    TC_DWM_X(L, 12) TC_DWM_MAC("vfma.f32", 0, 5)                                            \
    TC_DWM_X(L, 28) TC_DWM_MAC("vfma.f32", 0, 6) TC_DWM_MAC(m, 1, 4)                        \
    TC_DWM_X(L, 44) TC_DWM_MAC("vfma.f32", 1, 5)                                            \
    TC_DWM_X(L, 60) TC_DWM_MAC("vfma.f32", 1, 6) TC_DWM_MAC(m, 2, 4)                        \
    TC_DWM_X(L, 76) TC_DWM_MAC("vfma.f32", 2, 5)                                            \
    TC_DWM_X(L, 92) TC_DWM_MAC("vfma.f32", 2, 6) TC_DWM_MAC(m, 3, 4)                        \
    TC_DWM_X(L, 108) TC_DWM_MAC("vfma.f32", 3, 5)                                           \
    TC_DWM_X(L, 124) TC_DWM_MAC("vfma.f32", 3, 6)
#define TC_DWM_L2S1(L, W, m)                                                                \
    W TC_DWM_X0(L) TC_DWM_MAC(m, 0, 4)                                                      \
    TC_DWM_X(L, 12) TC_DWM_MAC("vfma.f32", 0, 5) TC_DWM_MAC(m, 1, 4)                        \
    TC_DWM_X(L, 28) TC_DWM_MAC("vfma.f32", 0, 6) TC_DWM_MAC("vfma.f32", 1, 5)               \
    TC_DWM_X(L, 44) TC_DWM_MAC("vfma.f32", 1, 6)
#define TC_DWM_L2S2(L, W, m)                                                                \
    W TC_DWM_X0(L) TC_DWM_MAC(m, 0, 4)                                                      \
    TC_DWM_X(L, 12) TC_DWM_MAC("vfma.f32", 0, 5)                                            \
    TC_DWM_X(L, 28) TC_DWM_MAC("vfma.f32", 0, 6) TC_DWM_MAC(m, 1, 4)                        \
    TC_DWM_X(L, 44) TC_DWM_MAC("vfma.f32", 1, 5)                                            \
    TC_DWM_X(L, 60) TC_DWM_MAC("vfma.f32", 1, 6)
#define TC_DWM_L1(L, W, m)                                                                  \
    W TC_DWM_X0(L) TC_DWM_MAC(m, 0, 4)                                                      \
    TC_DWM_X(L, 12) TC_DWM_MAC("vfma.f32", 0, 5)                                            \
    TC_DWM_X(L, 28) TC_DWM_MAC("vfma.f32", 0, 6)

/* The three window lines of a pass. (The widening loads and the narrowing stores with an
 * immediate offset take a low base register: operands "l".) */
#define TC_DWM_LINES(LN)                                                                    \
    LN(a, TC_DWM_W0, "vmul.f32") LN(b, TC_DWM_W1, "vfma.f32") LN(c, TC_DWM_W2, "vfma.f32")

/* Requantize accumulator q<j> (int32 after VCVT and + bias) in place: mult in q4, shift in q5
 * (every shift a right shift: the sign of the accumulator added to VQRDMULH's result makes
 * VRSHL's rounding half up TFLM's half away from zero; tc_rq2_s8 in tc_dsp.h for why the
 * accumulator's sign stands for the product's). */
#define TC_DWM_RQ(j)                                                                        \
    "vshr.s32      q6, q" #j ", #31\n\t"                                                    \
    "vqrdmulh.s32  q" #j ", q" #j ", q4\n\t"                                                \
    "vadd.i32      q" #j ", q" #j ", q6\n\t"                                                \
    "vrshl.s32     q" #j ", q" #j ", q5\n\t"

/* accumulator q<j> to int32, + bias (q4) */
#define TC_DWM_CVT(j)                                                                       \
    "vcvt.s32.f32  q" #j ", q" #j "\n\t"                                                    \
    "vadd.i32      q" #j ", q" #j ", q4\n\t"

/* The ends of the passes. Four outputs: accumulators q0..q3 to int32, + bias, requantized,
 * pairs (0, 1) and (2, 3) narrowed to int16 lanes (outputs 0 and 1 of channel 0, then of
 * channel 1, ..), + the output zero point (saturating), saturated to int8 in each lane's low
 * byte, stored by scatter (the block's byte offsets). Two outputs: one pair. One output: q0's
 * int8 results in the low byte of each 32-bit lane, stored by VSTRB.32. The block constants
 * post-increment k. */
#define TC_DWM_END(CVT, RQ)                                                                 \
    "vldrw.32      q4, [%[k]], #80\n\t"                                                     \
    CVT                                                                                     \
    "vldrw.32      q4, [%[k], #-64]\n\t"                                                    \
    "vldrw.32      q5, [%[k], #-48]\n\t"                                                    \
    RQ
#define TC_DWM_END4                                                                         \
    TC_DWM_END(TC_DWM_CVT(0) TC_DWM_CVT(1) TC_DWM_CVT(2) TC_DWM_CVT(3),                     \
               TC_DWM_RQ(0) TC_DWM_RQ(1) TC_DWM_RQ(2) TC_DWM_RQ(3))                         \
    "vqmovnb.s32   q6, q0\n\t"                                                              \
    "vqmovnt.s32   q6, q1\n\t"                                                              \
    "vqmovnb.s32   q7, q2\n\t"                                                              \
    "vqmovnt.s32   q7, q3\n\t"                                                              \
    "vqadd.s16     q6, q6, %[off]\n\t"                                                      \
    "vqadd.s16     q7, q7, %[off]\n\t"                                                      \
    "vqmovnb.s16   q6, q6\n\t"                                                              \
    "vqmovnb.s16   q7, q7\n\t"                                                              \
    "vldrh.u16     q0, [%[k], #-32]\n\t"                                                    \
    "vldrh.u16     q1, [%[k], #-16]\n\t"
#define TC_DWM_STORE4                                                                       \
    "vstrb.16      q6, [%[q], q0]\n\t"                                                      \
    "vstrb.16      q7, [%[q], q1]\n\t"
#define TC_DWM_STORE4P                                                                      \
    "vmsr          p0, %[m0]\n\t"                                                           \
    "vpst\n\t"                                                                              \
    "vstrbt.16     q6, [%[q], q0]\n\t"                                                      \
    "vmsr          p0, %[m1]\n\t"                                                           \
    "vpst\n\t"                                                                              \
    "vstrbt.16     q7, [%[q], q1]\n\t"
#define TC_DWM_END2                                                                         \
    TC_DWM_END(TC_DWM_CVT(0) TC_DWM_CVT(1), TC_DWM_RQ(0) TC_DWM_RQ(1))                      \
    "vqmovnb.s32   q6, q0\n\t"                                                              \
    "vqmovnt.s32   q6, q1\n\t"                                                              \
    "vqadd.s16     q6, q6, %[off]\n\t"                                                      \
    "vqmovnb.s16   q6, q6\n\t"                                                              \
    "vldrh.u16     q0, [%[k], #-32]\n\t"                                                    \
    "vstrb.16      q6, [%[q], q0]\n\t"
#define TC_DWM_END1                                                                         \
    TC_DWM_END(TC_DWM_CVT(0), TC_DWM_RQ(0))                                                 \
    "vqmovnb.s32   q0, q0\n\t"                                                              \
    "vqadd.s16     q0, q0, %[off]\n\t"                                                      \
    "vqmovnb.s16   q0, q0\n\t"                                                              \
    "vstrb.32      q0, [%[q]]\n\t"

#define TC_DWM_CLOBBER                                                                      \
    "memory", "cc", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10",      \
        "d11", "d12", "d13", "d14", "d15"

/* A pass at one position of a line over nb >= 1 blocks of four channels, TFLite's
 * requantization with right shifts, the full int8 range: the first window at column 0 of the
 * line slots a, b, c (block 0), w and k block 0's weights and constants, outputs stored at q
 * (block 0's channel 0, the outputs os apart as the block's scatter offsets say). */
#define TC_DWM_RUN(name, LN, END)                                                           \
    TC_INLINE void name(const int8_t *a, const int8_t *b, const int8_t *c,                  \
                        const float32x4_t *w, const tc_dwm_blk_t *k, int8_t *q, int32_t nb, \
                        int32_t off)                                                        \
    {                                                                                       \
        __asm__ volatile("1:\n\t" TC_DWM_LINES(LN) END                                      \
                         "add           %[q], %[q], #4\n\t"                                 \
                         "subs          %[n], %[n], #1\n\t"                                 \
                         "bne           1b"                                                 \
                         : [a] "+l"(a), [b] "+l"(b), [c] "+l"(c), [w] "+r"(w), [k] "+r"(k), \
                           [q] "+l"(q), [n] "+r"(nb)                                        \
                         : [off] "r"(off)                                                   \
                         : TC_DWM_CLOBBER);                                                 \
    }
TC_DWM_RUN(tc_dwm_run4_s1, TC_DWM_L4S1, TC_DWM_END4 TC_DWM_STORE4)
TC_DWM_RUN(tc_dwm_run4_s2, TC_DWM_L4S2, TC_DWM_END4 TC_DWM_STORE4)
TC_DWM_RUN(tc_dwm_run2_s1, TC_DWM_L2S1, TC_DWM_END2)
TC_DWM_RUN(tc_dwm_run2_s2, TC_DWM_L2S2, TC_DWM_END2)
TC_DWM_RUN(tc_dwm_run1, TC_DWM_L1, TC_DWM_END1)

/* One pass of four outputs of one block, its stores predicated by m0 (pair 0, 1) and m1
 * (pair 2, 3): lane 2 i of a pair is its first output's channel i, lane 2 i + 1 the second's,
 * two predicate bits per 16-bit lane. */
#define TC_DWM_RUNP(name, LN)                                                               \
    TC_INLINE void name(const int8_t *a, const int8_t *b, const int8_t *c,                  \
                        const float32x4_t *w, const tc_dwm_blk_t *k, int8_t *q, int32_t off,\
                        uint32_t m0, uint32_t m1)                                           \
    {                                                                                       \
        __asm__ volatile(TC_DWM_LINES(LN) TC_DWM_END4 TC_DWM_STORE4P                        \
                         : [a] "+l"(a), [b] "+l"(b), [c] "+l"(c), [w] "+r"(w), [k] "+r"(k)  \
                         : [q] "r"(q), [off] "r"(off), [m0] "r"(m0), [m1] "r"(m1)           \
                         : TC_DWM_CLOBBER);                                                 \
    }
TC_DWM_RUNP(tc_dwm_run4p_s1, TC_DWM_L4S1)
TC_DWM_RUNP(tc_dwm_run4p_s2, TC_DWM_L4S2)

/* tc_dwm_taps_rows / _cols (tc_depthwise_mve.c's slice set-up): straight loads, conversions and
 * stores with immediate offsets (GCC 12 spills the addresses of the intrinsics' stores). */
#define TC_DWM_TAP(i, tap)                                                                  \
    "vldrb.s32     q0, [%[x], #" #tap " * 4]\n\t"                                           \
    "vcvt.f32.s32  q0, q0\n\t"                                                              \
    "vstrw.32      q0, [%[d], #" #i " * 16]\n\t"
TC_INLINE void tc_dwm_taps_rows(const int8_t *x, float32x4_t *d)
{
    __asm__ volatile(TC_DWM_TAP(0, 0) TC_DWM_TAP(1, 1) TC_DWM_TAP(2, 2) TC_DWM_TAP(3, 3)
                         TC_DWM_TAP(4, 4) TC_DWM_TAP(5, 5) TC_DWM_TAP(6, 6) TC_DWM_TAP(7, 7)
                             TC_DWM_TAP(8, 8)
                     :
                     : [x] "l"(x), [d] "r"(d)
                     : "memory", "d0", "d1");
}
TC_INLINE void tc_dwm_taps_cols(const int8_t *x, float32x4_t *d)
{
    __asm__ volatile(TC_DWM_TAP(0, 0) TC_DWM_TAP(1, 3) TC_DWM_TAP(2, 6) TC_DWM_TAP(3, 1)
                         TC_DWM_TAP(4, 4) TC_DWM_TAP(5, 7) TC_DWM_TAP(6, 2) TC_DWM_TAP(7, 5)
                             TC_DWM_TAP(8, 8)
                     :
                     : [x] "l"(x), [d] "r"(d)
                     : "memory", "d0", "d1");
}
