/* tinycompile runtime, internal: the DSP variants (Cortex-M4/M7) of tc_dot.h's int8 dot
 * products and window copy, same names and results as the portable ones. They take four int8
 * per word (SXTB16 + SMLAD); the inner loops of tc_dot22_s8 (2 inputs x 2 channels) and
 * tc_dot14_s8 (1 input x 4 channels) are inline assembly, as they need every register (at
 * -O0 GCC cannot give them the registers: their C loops then take everything, TC_ASM_LOOPS).
 * Included by tc_dot.h where TC_DSP is 1 (after tc_dsp.h's building blocks).
 */
#ifndef TC_DOT_DSP_H
#define TC_DOT_DSP_H

#ifndef TC_DSP_H
#error "tc_dot_dsp.h is included through tc_kernel_util.h"
#endif

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
#define TC_DOT22_ASM_STEP TC_DOT22_ASM_STEP_OFF("nd", "nd")
/* ... with the first streams at offsets -d of their own (operands XO, WO: tc_dot22r_s8) */
#define TC_DOT22_ASM_STEP_OFF(XO, WO)                                                           \
    "ldr     %[p], [%[x], %[" XO "]]\n\t"                                                       \
    "ldr     %[u], [%[w], %[" WO "]]\n\t"                                                       \
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

TC_INLINE void tc_dot22_s8(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                           const int8_t *w1, int32_t n, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    const int32_t xd = (int32_t)(x1 - x0), wd = (int32_t)(w1 - w0);
#if TC_ASM_LOOPS
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
#endif
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

/* tc_dot22_s8 for x1 - x0 == w1 - w0 == d and n a positive multiple of 8: the assembly loop
 * alone, no tails (at -O0, TC_ASM_LOOPS 0: tc_dot22_s8's C loops). */
TC_INLINE void tc_dot22_x8_s8(const int8_t *x0, const int8_t *w0, int32_t d, int32_t n,
                              int32_t *a)
{
#if TC_ASM_LOOPS
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
#else
    tc_dot22_s8(x0, x0 + d, w0, w0 + d, n, a);
#endif
}

/* Two inputs (x0, x0 + xd) x two channels (w0, w0 + wd) over rows: row r of the inputs starts
 * at x0 + r * xs, of the weights at w0 + r * n (a k x k window with contiguous rows, n values
 * a row). The step is TC_DOT22_ASM_STEP with a second offset register for the weights, so the
 * loop's end bound comes from memory once per pass (all fourteen registers are taken). Out of
 * line, like tc_dot14_s8. */
#define TC_DOT22D_ASM_STEP TC_DOT22_ASM_STEP_OFF("nxd", "nwd")

static __attribute__((noinline, unused)) void tc_dot22r_s8(const int8_t *x0, int32_t xd,
                                                           int32_t xs, const int8_t *w0,
                                                           int32_t wd, int32_t n, int32_t rows,
                                                           int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
#if TC_ASM_LOOPS
    const uint32_t nxd = 0u - (uint32_t)xd, nwd = 0u - (uint32_t)wd;
    const int32_t n8 = n & ~7;
#else
    const int32_t n8 = 0; /* -O0: the C loop takes whole rows */
#endif
    for (; rows > 0; rows--, x0 += xs, w0 += n) {
        const int8_t *x = x0 + xd, *w = w0 + wd;
        int32_t m;
#if TC_ASM_LOOPS
        if (n8 > 0) {
            const int8_t *volatile end = x + n8;
            uint32_t p, u, v, t1, t2, t3;
            __asm__("1:\n\t" TC_DOT22D_ASM_STEP TC_DOT22D_ASM_STEP "ldr     %[p], %[e]\n\t"
                    "cmp     %[x], %[p]\n\t"
                    "bne     1b\n\t"
                    : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
                      [x] "+r"(x), [w] "+r"(w), [p] "=&r"(p), [u] "=&r"(u), [v] "=&r"(v),
                      [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
                    : [nxd] "r"(nxd), [nwd] "r"(nwd), [e] "m"(end)
                    : "cc", "memory");
        }
#endif
        for (m = n - n8; m > 0; m--, x++, w++) {
            const int32_t q = *x, xv = x[-xd], u = w[-wd], v = *w;
            a00 += xv * u;
            a01 += xv * v;
            a10 += q * u;
            a11 += q * v;
        }
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}
#undef TC_DOT22D_ASM_STEP
#undef TC_DOT22_ASM_STEP
#undef TC_DOT22_ASM_STEP_OFF

/* One input x four channels w0 + k * ws (k = 0..3): a[k] += x.w_k. The input word is
 * unpacked once for the four channels: 5 LDR + 10 SXTB16 + 8 SMLAD for 16 MACs; two pointers
 * walk channels 1 and 3 with post-increment, channels 0 and 2 are read at offset -ws.
 * TC_DOT14_ASM_MACS is the channels' part, after the input word is unpacked into xe / xo. */
#define TC_DOT14_ASM_MACS                                                                       \
    "ldr     %[t], [%[wa], %[n1]]\n\t"                                                          \
    "sxtb16  %[u], %[t]\n\t"                                                                    \
    "smlad   %[a0], %[xe], %[u], %[a0]\n\t"                                                     \
    "sxtb16  %[t], %[t], ror #8\n\t"                                                            \
    "smlad   %[a0], %[xo], %[t], %[a0]\n\t"                                                     \
    "ldr     %[t], [%[wa]], #4\n\t"                                                             \
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

#define TC_DOT14_ASM_STEP                                                                       \
    "ldr     %[xo], [%[x]], #4\n\t"                                                             \
    "sxtb16  %[xe], %[xo]\n\t"                                                                  \
    "sxtb16  %[xo], %[xo], ror #8\n\t"                                                          \
    TC_DOT14_ASM_MACS

/* tc_dot14_s8 with the input offset added on the fly: a[k] += sum of (x + off) * w over n
 * values, channel k's weights at w0 + k * ws. o2 holds off in both halves: SXTAB16 sign-extends
 * and adds it in the instruction that unpacks the input, so the step costs what
 * TC_DOT14_ASM_STEP does. For border windows: only the taps inside the image, from the
 * model's bias, no copy with the zero point in the padding. */
#define TC_DOT14V_ASM_STEP                                                                      \
    "ldr     %[xo], [%[x]], #4\n\t"                                                             \
    "sxtab16 %[xe], %[o2], %[xo]\n\t"                                                           \
    "sxtab16 %[xo], %[o2], %[xo], ror #8\n\t"                                                   \
    TC_DOT14_ASM_MACS

#define TC_DOT14V_OPERANDS                                                                      \
    : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xr), [w] "+r"(w),  \
      [wa] "+r"(wa), [xe] "=&r"(xe), [xo] "=&r"(xo), [t] "=&r"(t), [u] "=&r"(u)

/* The same sum in C, four values per step then one by one: the assembly loop's tail, and short
 * rows (under 8 values). Out of line: one copy for both. */
static __attribute__((noinline, unused)) void tc_dot14o_s8(const int8_t *x, const int8_t *w,
                                                           int32_t ws, int32_t n, uint32_t o2,
                                                           int32_t *a)
{
    const int32_t off = (int16_t)(o2 & 0xFFFFu);
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (; n >= 4; n -= 4, x += 4, w += 4) {
        const uint32_t xv = tc_ld32(x);
        const uint32_t xe = (uint32_t)__sadd16(tc_sxtb16_lo(xv), o2);
        const uint32_t xo = (uint32_t)__sadd16(tc_sxtb16_hi(xv), o2);
        uint32_t v = tc_ld32(w);
        a0 = __smlad(xo, tc_sxtb16_hi(v), __smlad(xe, tc_sxtb16_lo(v), a0));
        v = tc_ld32(w + ws);
        a1 = __smlad(xo, tc_sxtb16_hi(v), __smlad(xe, tc_sxtb16_lo(v), a1));
        v = tc_ld32(w + 2 * ws);
        a2 = __smlad(xo, tc_sxtb16_hi(v), __smlad(xe, tc_sxtb16_lo(v), a2));
        v = tc_ld32(w + 3 * ws);
        a3 = __smlad(xo, tc_sxtb16_hi(v), __smlad(xe, tc_sxtb16_lo(v), a3));
    }
    for (; n > 0; n--, w++) {
        const int32_t xv = *x++ + off;
        a0 += xv * w[0];
        a1 += xv * w[ws];
        a2 += xv * w[2 * ws];
        a3 += xv * w[3 * ws];
    }
    a[0] = a0;
    a[1] = a1;
    a[2] = a2;
    a[3] = a3;
}

static __attribute__((noinline, unused)) void tc_dot14v_s8(const int8_t *x, const int8_t *w0,
                                                           int32_t ws, int32_t n, uint32_t o2,
                                                           int32_t *a)
{
#if TC_ASM_LOOPS
    const int32_t n8 = n & ~7;
    if (n8 > 0) {
        int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
        const int8_t *xr = x, *w = w0 + 3 * ws, *wa = w0 + ws;
        const int8_t *volatile end = xr + n8; /* all fourteen registers taken: from memory */
        const uint32_t n1 = 0u - (uint32_t)ws;
        uint32_t xe, xo, t, u;
        __asm__("1:\n\t" TC_DOT14V_ASM_STEP TC_DOT14V_ASM_STEP "ldr     %[t], %[e]\n\t"
                "cmp     %[x], %[t]\n\t"
                "bne     1b\n\t" TC_DOT14V_OPERANDS
                : [n1] "r"(n1), [e] "m"(end), [o2] "r"(o2)
                : "cc", "memory");
        a[0] = a0;
        a[1] = a1;
        a[2] = a2;
        a[3] = a3;
    }
#else
    const int32_t n8 = 0; /* -O0: tc_dot14o_s8 takes the whole row */
#endif
    if (n > n8) {
        tc_dot14o_s8(x + n8, w0 + n8, ws, n - n8, o2, a);
    }
}
#undef TC_DOT14V_OPERANDS
#undef TC_DOT14V_ASM_STEP

/* Out of line: inlined into a busy loop, GCC may find no registers left for the asm. */
static __attribute__((noinline, unused)) void tc_dot14_s8(const int8_t *x, const int8_t *w0,
                                                          int32_t ws, int32_t n, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const int8_t *w = w0 + 3 * ws;
#if TC_ASM_LOOPS
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
#endif
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
#undef TC_DOT14_ASM_MACS

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
#endif /* TC_DOT_DSP_H */
