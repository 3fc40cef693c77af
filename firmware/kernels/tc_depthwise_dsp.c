/* tinycompile runtime: DEPTHWISE_CONV_2D, int8: the DSP fast paths (Cortex-M4/M7).
 *
 * Beside the portable kernel tc_depthwise.c (which matches TFLM's reference
 * DepthwiseConvPerChannel and calls these where they apply). Both give results identical to
 * the portable loops; they compile to nothing on cores without __ARM_FEATURE_DSP.
 *
 * 1. tc_dwconv3x3_dsp: the whole layer for 3x3 filters, depth multiplier 1, no dilation, in_c
 *    a multiple of 4 (tc_dwconv3x3n_dsp: any in_c, TFLite's requantization; its own instance,
 *    which only layers needing it link: tc_dw3_layer.h), stride 1 or 2 along the output lines (any padding, any stride across
 *    them, in place or not). Outputs run in lines along the longer output axis (rows, or
 *    columns for tall layers such as the DS-CNN's 25 x 5); a line reads three input lines.
 *    Per block of four channels:
 *    - set-up, once per block: per channel and filter line, the taps (w0, w1) and (w1, w2) as
 *      16-bit lanes, doubled; the channel's requantization constants;
 *    - input lines are unpacked once into a stack buffer, a ring of three lines, per channel
 *      16-bit values, word m = columns (2m, 2m + 1) (SXTB16 + PKHBT/PKHTB); columns and lines
 *      outside the image hold the input zero point, which contributes nothing once the zero
 *      point is folded into bias_eff (like TFLM's skipped taps), so borders cost nothing extra;
 *    - outputs are computed in passes of up to six adjacent outputs of one channel, two taps
 *      per instruction: output 2m = SMLAD(A[m], (w0, w1)) + A[m + 1].lo * w2, output 2m + 1 =
 *      A[m].hi * w0 + SMLAD(A[m + 1], (w1, w2)) (stride 1), output k = SMLAD(A[k], (w0, w1)) +
 *      A[k + 1].lo * w2 (stride 2); the six-output line step is in assembly so that its six
 *      accumulators stay in registers;
 *    - requantization of the doubled accumulator (doubled weights and bias: free) without
 *      64-bit arithmetic, tc_kernel_util.h's tc_rq2_s8: TFLite's with SMMLAR, or onnxruntime's
 *      in float32 (tc_requant's ONNX variant: an ONNX layer, on cores with an FPU), a
 *      compile-time argument of the line functions; a narrower fused activation afterwards.
 *    The conditions (|bias_eff| < 2^29 so that 2 * acc cannot overflow; TFLite: 1 <= r <= 23,
 *    per channel, so that SMMLAR's q + h stays in int32: see tc_rq2_s8) are checked on entry;
 *    it returns 0 (nothing written) when anything fails.
 *    In place (out == in) output line y is written over input line y only once input lines up
 *    to y + 1 are in the buffer, which holds everything later lines read: no ring is needed.
 *    That needs a whole line in one buffer tile (TC_DW3_COLS columns), else it returns 0.
 *    Stack: about 1.5 KB in all (the buffer: 3 lines x 4 channels x TC_DW3_COLS 16-bit values).
 * tc_depthwise_block4_dsp.c holds the four-channel interior pixel the portable kernel uses for
 * the layers this path refuses.
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"

#if TC_DSP

/* ------------------------------------------------------------- 3x3, whole layer */

/* Buffer columns per line (stack: 4 channels x 3 lines x TC_DW3_COLS 16-bit values). */
#define TC_DW3_COLS 32
#define TC_DW3_WORDS (TC_DW3_COLS / 2 + 2)

/* One channel of a block, set up once per block. Along a line the window's three taps are
 * u = 0, 1, 2; the three lines are t = 0, 1, 2. */
typedef struct {
    uint32_t w[3][2]; /* [t]: (w[t][0], w[t][1]) and (w[t][1], w[t][2]) in 16-bit lanes, x2 */
    int32_t bias;     /* 2 * bias_eff */
    int32_t mult;     /* TFLite: the multiplier; ONNX: the IEEE bits of scale / 2 */
    int32_t rnd;      /* TFLite: 2^(r-1) + out_offset * 2^r; ONNX: out_offset */
    int32_t rsh;      /* TFLite: r = -shift */
} tc_dw3_chan_t;

/* Output k of a pass, one line t: a += x[k S] w0 + x[k S + 1] w1 + x[k S + 2] w2, the
 * buffer line's words A[m] = (x[2m], x[2m + 1]). S = 1: even k = 2m: SMLAD(A[m], (w0, w1)) +
 * A[m + 1].lo * w2; odd k = 2m + 1: A[m].hi * w0 + SMLAD(A[m + 1], (w1, w2)). S = 2: k:
 * SMLAD(A[k], (w0, w1)) + A[k + 1].lo * w2. */
#define TC_DW3_TAPS(k, acc)                                                                 \
    do {                                                                                    \
        if ((k) < N) {                                                                      \
            if (S == 1) {                                                                   \
                if (((k) & 1) == 0) {                                                       \
                    acc = __smlad(A[(k) / 2], w01, acc);                                    \
                    acc = __smlabt(A[(k) / 2 + 1], w12, acc);                               \
                } else {                                                                    \
                    acc = __smlatb(A[(k) / 2], w01, acc);                                   \
                    acc = __smlad(A[(k) / 2 + 1], w12, acc);                                \
                }                                                                           \
            } else {                                                                        \
                acc = __smlad(A[(k)], w01, acc);                                            \
                acc = __smlabt(A[(k) + 1], w12, acc);                                       \
            }                                                                               \
        }                                                                                   \
    } while (0)

#define TC_DW3_OUT(k, acc)                                                                  \
    do {                                                                                    \
        if ((k) < N) {                                                                      \
            *o = (int8_t)tc_rq2_s8(acc, m, q, r, R);                                        \
            o += ostep;                                                                     \
        }                                                                                   \
    } while (0)

/* One buffer line of a six-output pass (see TC_DW3_TAPS), in assembly so that the six
 * accumulators, two weights and two words of the line stay in registers (at -O0, where GCC
 * cannot give the asm that many, the same steps in C: TC_ASM_LOOPS, tc_kernel_util.h). */
#if TC_ASM_LOOPS
TC_INLINE void tc_dw3_line6_s1(const uint32_t *L, const uint32_t *w, int32_t *p0, int32_t *p1,
                               int32_t *p2, int32_t *p3, int32_t *p4, int32_t *p5)
{
    int32_t a0 = *p0, a1 = *p1, a2 = *p2, a3 = *p3, a4 = *p4, a5 = *p5;
    uint32_t x, y, w01, w12;
    __asm__("ldrd %[w01], %[w12], [%[w]]\n\t"
            "ldrd %[x], %[y], [%[L]]\n\t"
            "smlad %[a0], %[x], %[w01], %[a0]\n\t"
            "smlatb %[a1], %[x], %[w01], %[a1]\n\t"
            "smlabt %[a0], %[y], %[w12], %[a0]\n\t"
            "smlad %[a1], %[y], %[w12], %[a1]\n\t"
            "smlad %[a2], %[y], %[w01], %[a2]\n\t"
            "smlatb %[a3], %[y], %[w01], %[a3]\n\t"
            "ldrd %[x], %[y], [%[L], #8]\n\t"
            "smlabt %[a2], %[x], %[w12], %[a2]\n\t"
            "smlad %[a3], %[x], %[w12], %[a3]\n\t"
            "smlad %[a4], %[x], %[w01], %[a4]\n\t"
            "smlatb %[a5], %[x], %[w01], %[a5]\n\t"
            "smlabt %[a4], %[y], %[w12], %[a4]\n\t"
            "smlad %[a5], %[y], %[w12], %[a5]"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4),
              [a5] "+r"(a5), [x] "=&r"(x), [y] "=&r"(y), [w01] "=&r"(w01), [w12] "=&r"(w12)
            : [L] "r"(L), [w] "r"(w)
            : "memory");
    *p0 = a0;
    *p1 = a1;
    *p2 = a2;
    *p3 = a3;
    *p4 = a4;
    *p5 = a5;
}

/* The first line of a pass: the accumulators start from the bias b. */
TC_INLINE void tc_dw3_line6_s1_first(const uint32_t *L, const uint32_t *w, int32_t b,
                                     int32_t *p0, int32_t *p1, int32_t *p2, int32_t *p3,
                                     int32_t *p4, int32_t *p5)
{
    int32_t a0, a1, a2, a3, a4, a5;
    uint32_t x, y, w01, w12;
    __asm__("ldrd %[w01], %[w12], [%[w]]\n\t"
            "ldrd %[x], %[y], [%[L]]\n\t"
            "smlad %[a0], %[x], %[w01], %[b]\n\t"
            "smlatb %[a1], %[x], %[w01], %[b]\n\t"
            "smlabt %[a0], %[y], %[w12], %[a0]\n\t"
            "smlad %[a1], %[y], %[w12], %[a1]\n\t"
            "smlad %[a2], %[y], %[w01], %[b]\n\t"
            "smlatb %[a3], %[y], %[w01], %[b]\n\t"
            "ldrd %[x], %[y], [%[L], #8]\n\t"
            "smlabt %[a2], %[x], %[w12], %[a2]\n\t"
            "smlad %[a3], %[x], %[w12], %[a3]\n\t"
            "smlad %[a4], %[x], %[w01], %[b]\n\t"
            "smlatb %[a5], %[x], %[w01], %[b]\n\t"
            "smlabt %[a4], %[y], %[w12], %[a4]\n\t"
            "smlad %[a5], %[y], %[w12], %[a5]"
            : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [a4] "=&r"(a4),
              [a5] "=&r"(a5), [x] "=&r"(x), [y] "=&r"(y), [w01] "=&r"(w01), [w12] "=&r"(w12)
            : [L] "r"(L), [w] "r"(w), [b] "r"(b)
            : "memory");
    *p0 = a0;
    *p1 = a1;
    *p2 = a2;
    *p3 = a3;
    *p4 = a4;
    *p5 = a5;
}

TC_INLINE void tc_dw3_line6_s2(const uint32_t *L, const uint32_t *w, int32_t *p0, int32_t *p1,
                               int32_t *p2, int32_t *p3, int32_t *p4, int32_t *p5)
{
    int32_t a0 = *p0, a1 = *p1, a2 = *p2, a3 = *p3, a4 = *p4, a5 = *p5;
    uint32_t x, y, w01, w12;
    __asm__("ldrd %[w01], %[w12], [%[w]]\n\t"
            "ldrd %[x], %[y], [%[L]]\n\t"
            "smlad %[a0], %[x], %[w01], %[a0]\n\t"
            "smlabt %[a0], %[y], %[w12], %[a0]\n\t"
            "smlad %[a1], %[y], %[w01], %[a1]\n\t"
            "ldrd %[x], %[y], [%[L], #8]\n\t"
            "smlabt %[a1], %[x], %[w12], %[a1]\n\t"
            "smlad %[a2], %[x], %[w01], %[a2]\n\t"
            "smlabt %[a2], %[y], %[w12], %[a2]\n\t"
            "smlad %[a3], %[y], %[w01], %[a3]\n\t"
            "ldrd %[x], %[y], [%[L], #16]\n\t"
            "smlabt %[a3], %[x], %[w12], %[a3]\n\t"
            "smlad %[a4], %[x], %[w01], %[a4]\n\t"
            "smlabt %[a4], %[y], %[w12], %[a4]\n\t"
            "smlad %[a5], %[y], %[w01], %[a5]\n\t"
            "ldr %[x], [%[L], #24]\n\t"
            "smlabt %[a5], %[x], %[w12], %[a5]"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4),
              [a5] "+r"(a5), [x] "=&r"(x), [y] "=&r"(y), [w01] "=&r"(w01), [w12] "=&r"(w12)
            : [L] "r"(L), [w] "r"(w)
            : "memory");
    *p0 = a0;
    *p1 = a1;
    *p2 = a2;
    *p3 = a3;
    *p4 = a4;
    *p5 = a5;
}

/* The first line of a pass: the accumulators start from the bias b. */
TC_INLINE void tc_dw3_line6_s2_first(const uint32_t *L, const uint32_t *w, int32_t b,
                                     int32_t *p0, int32_t *p1, int32_t *p2, int32_t *p3,
                                     int32_t *p4, int32_t *p5)
{
    int32_t a0, a1, a2, a3, a4, a5;
    uint32_t x, y, w01, w12;
    __asm__("ldrd %[w01], %[w12], [%[w]]\n\t"
            "ldrd %[x], %[y], [%[L]]\n\t"
            "smlad %[a0], %[x], %[w01], %[b]\n\t"
            "smlabt %[a0], %[y], %[w12], %[a0]\n\t"
            "smlad %[a1], %[y], %[w01], %[b]\n\t"
            "ldrd %[x], %[y], [%[L], #8]\n\t"
            "smlabt %[a1], %[x], %[w12], %[a1]\n\t"
            "smlad %[a2], %[x], %[w01], %[b]\n\t"
            "smlabt %[a2], %[y], %[w12], %[a2]\n\t"
            "smlad %[a3], %[y], %[w01], %[b]\n\t"
            "ldrd %[x], %[y], [%[L], #16]\n\t"
            "smlabt %[a3], %[x], %[w12], %[a3]\n\t"
            "smlad %[a4], %[x], %[w01], %[b]\n\t"
            "smlabt %[a4], %[y], %[w12], %[a4]\n\t"
            "smlad %[a5], %[y], %[w01], %[b]\n\t"
            "ldr %[x], [%[L], #24]\n\t"
            "smlabt %[a5], %[x], %[w12], %[a5]"
            : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [a4] "=&r"(a4),
              [a5] "=&r"(a5), [x] "=&r"(x), [y] "=&r"(y), [w01] "=&r"(w01), [w12] "=&r"(w12)
            : [L] "r"(L), [w] "r"(w), [b] "r"(b)
            : "memory");
    *p0 = a0;
    *p1 = a1;
    *p2 = a2;
    *p3 = a3;
    *p4 = a4;
    *p5 = a5;
}

#else
TC_INLINE void tc_dw3_line6_s1(const uint32_t *L, const uint32_t *w, int32_t *p0, int32_t *p1,
                               int32_t *p2, int32_t *p3, int32_t *p4, int32_t *p5)
{
    const uint32_t w01 = w[0], w12 = w[1], x0 = L[0], x1 = L[1], x2 = L[2], x3 = L[3];
    *p0 = __smlabt(x1, w12, __smlad(x0, w01, *p0));
    *p1 = __smlad(x1, w12, __smlatb(x0, w01, *p1));
    *p2 = __smlabt(x2, w12, __smlad(x1, w01, *p2));
    *p3 = __smlad(x2, w12, __smlatb(x1, w01, *p3));
    *p4 = __smlabt(x3, w12, __smlad(x2, w01, *p4));
    *p5 = __smlad(x3, w12, __smlatb(x2, w01, *p5));
}

TC_INLINE void tc_dw3_line6_s2(const uint32_t *L, const uint32_t *w, int32_t *p0, int32_t *p1,
                               int32_t *p2, int32_t *p3, int32_t *p4, int32_t *p5)
{
    const uint32_t w01 = w[0], w12 = w[1];
    *p0 = __smlabt(L[1], w12, __smlad(L[0], w01, *p0));
    *p1 = __smlabt(L[2], w12, __smlad(L[1], w01, *p1));
    *p2 = __smlabt(L[3], w12, __smlad(L[2], w01, *p2));
    *p3 = __smlabt(L[4], w12, __smlad(L[3], w01, *p3));
    *p4 = __smlabt(L[5], w12, __smlad(L[4], w01, *p4));
    *p5 = __smlabt(L[6], w12, __smlad(L[5], w01, *p5));
}

/* The first line of a pass: the accumulators start from the bias b. */
TC_INLINE void tc_dw3_line6_s1_first(const uint32_t *L, const uint32_t *w, int32_t b,
                                     int32_t *p0, int32_t *p1, int32_t *p2, int32_t *p3,
                                     int32_t *p4, int32_t *p5)
{
    *p0 = *p1 = *p2 = *p3 = *p4 = *p5 = b;
    tc_dw3_line6_s1(L, w, p0, p1, p2, p3, p4, p5);
}

TC_INLINE void tc_dw3_line6_s2_first(const uint32_t *L, const uint32_t *w, int32_t b,
                                     int32_t *p0, int32_t *p1, int32_t *p2, int32_t *p3,
                                     int32_t *p4, int32_t *p5)
{
    *p0 = *p1 = *p2 = *p3 = *p4 = *p5 = b;
    tc_dw3_line6_s2(L, w, p0, p1, p2, p3, p4, p5);
}
#endif /* TC_ASM_LOOPS */

/* One pass: N (1..6) adjacent outputs of one channel, the first window at word 0 of the three
 * buffer lines; stored at o, o + ostep, .. */
TC_INLINE void tc_dw3_pass(const uint32_t *l0, const uint32_t *l1, const uint32_t *l2,
                           const tc_dw3_chan_t *ch, int8_t *o, int32_t ostep, const int N,
                           const int S, const int R)
{
    const int NW = S == 1 ? N / 2 + 2 : N + 1; /* words a line of the pass reads */
    const int32_t b = ch->bias;
    int32_t a0 = b, a1 = b, a2 = b, a3 = b, a4 = b, a5 = b;
    int t, i;
#pragma GCC unroll 3
    for (t = 0; t < 3; t++) {
        const uint32_t *L = t == 0 ? l0 : (t == 1 ? l1 : l2);
        const uint32_t w01 = ch->w[t][0], w12 = ch->w[t][1];
        uint32_t A[8];
        if (N == 6 && S == 1) {
            if (t == 0) { /* the accumulators start from the bias */
                tc_dw3_line6_s1_first(L, ch->w[t], b, &a0, &a1, &a2, &a3, &a4, &a5);
            } else {
                tc_dw3_line6_s1(L, ch->w[t], &a0, &a1, &a2, &a3, &a4, &a5);
            }
            continue;
        }
        if (N == 6 && S == 2) {
            if (t == 0) {
                tc_dw3_line6_s2_first(L, ch->w[t], b, &a0, &a1, &a2, &a3, &a4, &a5);
            } else {
                tc_dw3_line6_s2(L, ch->w[t], &a0, &a1, &a2, &a3, &a4, &a5);
            }
            continue;
        }
#pragma GCC unroll 8
        for (i = 0; i < NW; i++) {
            A[i] = L[i];
        }
        TC_DW3_TAPS(0, a0);
        TC_DW3_TAPS(1, a1);
        TC_DW3_TAPS(2, a2);
        TC_DW3_TAPS(3, a3);
        TC_DW3_TAPS(4, a4);
        TC_DW3_TAPS(5, a5);
    }
    {
        const int32_t m = ch->mult, q = ch->rnd, r = ch->rsh;
        TC_DW3_OUT(0, a0);
        TC_DW3_OUT(1, a1);
        TC_DW3_OUT(2, a2);
        TC_DW3_OUT(3, a3);
        TC_DW3_OUT(4, a4);
        TC_DW3_OUT(5, a5);
    }
}

#define TC_DW3_MAXN 6

/* The rest of a line (n < TC_DW3_MAXN outputs), the four channels of the block (channel i's
 * lines TC_DW3_WORDS words after channel i - 1's, its outputs at o + i). */
TC_INLINE void tc_dw3_rest(const uint32_t *l0, const uint32_t *l1, const uint32_t *l2,
                           const tc_dw3_chan_t *ch, int8_t *o, int32_t ostep, int32_t n,
                           const int S, const int R)
{
    int i;
    for (i = 0; i < 4; i++) {
        const uint32_t *m0 = l0, *m1 = l1, *m2 = l2;
        int8_t *q = o;
        int32_t k = n;
        if (k >= 4) {
            tc_dw3_pass(m0, m1, m2, ch, q, ostep, 4, S, R);
            m0 += 2 * S;
            m1 += 2 * S;
            m2 += 2 * S;
            q += 4 * ostep;
            k -= 4;
        }
        if (k == 3) {
            tc_dw3_pass(m0, m1, m2, ch, q, ostep, 3, S, R);
        } else if (k == 2) {
            tc_dw3_pass(m0, m1, m2, ch, q, ostep, 2, S, R);
        } else if (k == 1) {
            tc_dw3_pass(m0, m1, m2, ch, q, ostep, 1, S, R);
        }
        l0 += TC_DW3_WORDS;
        l1 += TC_DW3_WORDS;
        l2 += TC_DW3_WORDS;
        ch++;
        o++;
    }
}

/* Out-of-line instances of tc_dw3_rest (and below tc_dw3_line) for stride S and the
 * requantization R (0 TFLite, 1 ONNX). */
#define TC_DW3_REST(name, S, R)                                                             \
    __attribute__((noinline)) static void name(const uint32_t *l0, const uint32_t *l1,      \
        const uint32_t *l2, const tc_dw3_chan_t *ch, int8_t *o, int32_t ostep, int32_t n)   \
    { tc_dw3_rest(l0, l1, l2, ch, o, ostep, n, S, R); }
TC_DW3_REST(tc_dw3_rest_s1, 1, 0)
TC_DW3_REST(tc_dw3_rest_s2, 2, 0)
TC_DW3_REST(tc_dw3_rest_s1o, 1, 1)
TC_DW3_REST(tc_dw3_rest_s2o, 2, 1)

/* One output line (n outputs) of the four channels of a block: passes of TC_DW3_MAXN outputs
 * channel by channel (the channel's lines at constant offsets), then the rest. l[k]: buffer
 * line slot k, channel 0, the first window at word 0. */
TC_INLINE void tc_dw3_line(const uint32_t *const *l, const tc_dw3_chan_t *ch, int8_t *o,
                           int32_t ostep, int32_t n, const int S, const int R)
{
    const int32_t adv = S == 1 ? TC_DW3_MAXN / 2 : TC_DW3_MAXN; /* words per pass */
    const uint32_t *l0 = l[0], *l1 = l[1], *l2 = l[2];
    const int32_t w1 = TC_DW3_WORDS, w2 = 2 * TC_DW3_WORDS, w3 = 3 * TC_DW3_WORDS;
    for (; n >= TC_DW3_MAXN; n -= TC_DW3_MAXN) {
        tc_dw3_pass(l0, l1, l2, ch, o, ostep, TC_DW3_MAXN, S, R);
        tc_dw3_pass(l0 + w1, l1 + w1, l2 + w1, ch + 1, o + 1, ostep, TC_DW3_MAXN, S, R);
        tc_dw3_pass(l0 + w2, l1 + w2, l2 + w2, ch + 2, o + 2, ostep, TC_DW3_MAXN, S, R);
        tc_dw3_pass(l0 + w3, l1 + w3, l2 + w3, ch + 3, o + 3, ostep, TC_DW3_MAXN, S, R);
        l0 += adv;
        l1 += adv;
        l2 += adv;
        o += TC_DW3_MAXN * ostep;
    }
    if (n > 0) {
        (S == 1 ? (R ? tc_dw3_rest_s1o : tc_dw3_rest_s1) : (R ? tc_dw3_rest_s2o : tc_dw3_rest_s2))(
            l0, l1, l2, ch, o, ostep, n);
    }
}

typedef void (*tc_dw3_line_fn)(const uint32_t *const *l, const tc_dw3_chan_t *ch, int8_t *o,
                               int32_t ostep, int32_t n);

#define TC_DW3_LINE(name, S, R)                                                             \
    __attribute__((noinline)) static void name(const uint32_t *const *l,                    \
        const tc_dw3_chan_t *ch, int8_t *o, int32_t ostep, int32_t n)                       \
    { tc_dw3_line(l, ch, o, ostep, n, S, R); }
TC_DW3_LINE(tc_dw3_line_s1, 1, 0)
TC_DW3_LINE(tc_dw3_line_s2, 2, 0)
TC_DW3_LINE(tc_dw3_line_s1o, 1, 1)
TC_DW3_LINE(tc_dw3_line_s2o, 2, 1)

/* The fused activation's clamp, when narrower than int8, over n outputs of four channels. */
static void tc_dw3_clamp(int8_t *o, int32_t ostep, int32_t n, int32_t lo, int32_t hi)
{
    for (; n > 0; n--, o += ostep) {
        int i;
        for (i = 0; i < 4; i++) {
            o[i] = (int8_t)tc_clamp(o[i], lo, hi);
        }
    }
}

/* Two columns (raw words v0, v1: four channels each) into word d[0] of the four channel lines
 * (TC_DW3_WORDS apart): channel i's column pair in 16-bit lanes. */
TC_INLINE void tc_dw3_put2(uint32_t v0, uint32_t v1, uint32_t *d)
{
    const uint32_t e0 = tc_sxtb16_lo(v0), e1 = tc_sxtb16_lo(v1);
    const uint32_t o0 = tc_sxtb16_hi(v0), o1 = tc_sxtb16_hi(v1);
    d[0] = tc_pkhbt16(e0, e1);
    d[TC_DW3_WORDS] = tc_pkhbt16(o0, o1);
    d[2 * TC_DW3_WORDS] = tc_pkhtb16(e0, e1);
    d[3 * TC_DW3_WORDS] = tc_pkhtb16(o0, o1);
}

/* Fill a buffer line slot d (four channel lines) with ncols input pixels: columns jv0 .. jv1 - 1
 * from x, x + step, .. (four channels each), the others the zero point (pad, four bytes). */
static void tc_dw3_fill(const int8_t *x, int32_t step, int32_t ncols, int32_t jv0, int32_t jv1,
                        uint32_t pad, uint32_t *d)
{
    /* the zero point in both 16-bit lanes: a pair of padding columns, any channel */
    const uint32_t pp = tc_pkhbt16(tc_sxtb16_lo(pad), tc_sxtb16_lo(pad));
    int32_t j = 0;
    /* columns go out in pairs: (pad, pad) before the image, a pair straddling its first
     * column, pairs inside, a pair straddling its last column, pads after it */
    for (; j + 1 < jv0; j += 2, d++) {
        d[0] = d[TC_DW3_WORDS] = d[2 * TC_DW3_WORDS] = d[3 * TC_DW3_WORDS] = pp;
    }
    if (j < jv0) { /* j = jv0 - 1 */
        tc_dw3_put2(pad, j + 1 < jv1 ? tc_ld32(x) : pad, d++);
        j += 2;
        x += step;
    }
    for (; j + 1 < jv1; j += 2) {
        const uint32_t v0 = tc_ld32(x), v1 = tc_ld32(x + step);
        x += 2 * step;
        tc_dw3_put2(v0, v1, d++);
    }
    if (j < jv1) {
        tc_dw3_put2(tc_ld32(x), pad, d++);
        j += 2;
    }
    for (; j < ncols; j += 2, d++) {
        d[0] = d[TC_DW3_WORDS] = d[2 * TC_DW3_WORDS] = d[3 * TC_DW3_WORDS] = pp;
    }
}

/* A last block of cn (1..3) channels (tc_dwconv3x3n_dsp): passes of up to four outputs of
 * each channel, TFLite's requantization. */
#define TC_DW3_PART_FN(name, S)                                                             \
    __attribute__((noinline)) static void name(const uint32_t *const *l,                    \
        const tc_dw3_chan_t *ch, int8_t *o, int32_t ostep, int32_t n, int32_t cn)           \
    {                                                                                       \
        int32_t k, i;                                                                       \
        for (k = 0; k < n; k += 4, o += 4 * ostep) {                                        \
            for (i = 0; i < cn; i++) {                                                      \
                const int32_t b = k / 2 * S + i * TC_DW3_WORDS;                             \
                const uint32_t *m0 = l[0] + b, *m1 = l[1] + b, *m2 = l[2] + b;              \
                switch (n - k) {                                                            \
                case 1: tc_dw3_pass(m0, m1, m2, ch + i, o + i, ostep, 1, S, 0); break;      \
                case 2: tc_dw3_pass(m0, m1, m2, ch + i, o + i, ostep, 2, S, 0); break;      \
                case 3: tc_dw3_pass(m0, m1, m2, ch + i, o + i, ostep, 3, S, 0); break;      \
                default: tc_dw3_pass(m0, m1, m2, ch + i, o + i, ostep, 4, S, 0); break;     \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
TC_DW3_PART_FN(tc_dw3_part_s1, 1)
TC_DW3_PART_FN(tc_dw3_part_s2, 2)

/* The layer functions (tc_dw3_layer.h). */
#define TC_DW3_NAME tc_dwconv3x3_dsp
#define TC_DW3_PART 0
#define TC_DW3_CH(c0, i) c0 + i
#include "tc_dw3_layer.h"
#undef TC_DW3_NAME
#undef TC_DW3_PART
#undef TC_DW3_CH

#define TC_DW3_NAME tc_dwconv3x3n_dsp
#define TC_DW3_PART 1
#define TC_DW3_CH(c0, i) (c0 + (i < cn ? i : cn - 1)) /* channels past cn: cn - 1's constants */
#include "tc_dw3_layer.h"
#undef TC_DW3_NAME
#undef TC_DW3_PART
#undef TC_DW3_CH

#else

/* Nothing to compile without DSP (ISO C wants a declaration in every translation unit). */
typedef int tc_depthwise_dsp_unused_t;

#endif /* TC_DSP */
