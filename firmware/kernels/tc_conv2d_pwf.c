/* tinycompile runtime: pointwise CONV_2D over few input channels (tc_conv_pw_s8; the layout of
 * its parameter stream and when the compiler chooses it: tc_conv2d.h, tinycompile/ops/pwf.py).
 *
 * With 1..12 input channels the ordinary pointwise loops spend most of an output on overhead
 * (dot product calls and their tails for in_c % 4 != 0, per-call setup, requantization through
 * the generic helpers). Here one pixel's inputs are loaded once into registers and the output
 * channels walk a compile-time stream: per channel 2 * bias_eff, the multiplier, a rounding
 * constant q = 2^(r-1) + out_offset * 2^r (r = -shift >= 1) and r, then the doubled weights as
 * int16 pairs matching SXTB16's split of a word of inputs ([x0 x2], [x1 x3]). An output is
 *     acc2 = 2 * bias_eff + sum 2 w x          (SMLAD on DSP cores)
 *     v = (q + hi32(acc2 * m + 2^31) + (acc2 < 0 ? -1 : 0)) >> r,  clamp
 * which is TFLM's MultiplyByQuantizedMultiplier + output offset (tc_dsp.h's tc_rq2_s8 proves
 * the identity; the compiler checks, per channel, that |acc2| and q + h stay inside int32 for
 * every possible input, else the layer keeps tc_conv_s8). Since a pixel's inputs are read
 * before any of its outputs is stored, in place (tc_conv2d.h's 1x1 layouts) needs no temp:
 * the pixels run forwards or backwards (tc_pw_forward) straight into place.
 *
 * Paths: DSP (Cortex-M4/M7) SXTB16 + SMLAD + SMMLAR; ARMv6-M and portable C the same sums with
 * the int16 halves (ARMv6-M: tc_mulacc16's 64-bit sum, no library multiply). A pixel is read as
 * whole words on DSP cores (lanes past in_c meet zero weights); a pixel whose last word would
 * pass the end of the input is copied to the stack first.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#define TC_PWF_MAX_C 12 /* ops/pwf.py MAX_IN_C */
#define TC_PWF_MAX_NW 6 /* weight words per channel for 12 channels */

/* Weight words per channel for c input channels: two per whole group of four, then one for a
 * last group of one value, two for two or three. */
TC_INLINE int32_t tc_pwf_nw(int32_t c)
{
    const int32_t r = c & 3;
    return 2 * (c >> 2) + (r == 0 ? 0 : r == 1 ? 1 : 2);
}

/* One run of pixels: n pixels from x (input step xs bytes, may be negative), outputs from o
 * (step os). end: the first byte past the input tensor (pixels read as words must not pass
 * it). */
typedef struct {
    const tc_conv_params_t *p;
    const int8_t *end;
} tc_pwf_t;

#if TC_DSP
/* The outputs of one pixel whose inputs, split by SXTB16, are xv[0 .. NW): NW constant. */
TC_INLINE void tc_pwf_pixel_dsp(const int32_t *q, int32_t oc_n, const uint32_t *xv,
                                int32_t lo, int32_t hi, int8_t *o, const int32_t NW,
                                const int full)
{
    const uint32_t x0 = xv[0], x1 = NW > 1 ? xv[1] : 0, x2 = NW > 2 ? xv[2] : 0;
    const uint32_t x3 = NW > 3 ? xv[3] : 0, x4 = NW > 4 ? xv[4] : 0, x5 = NW > 5 ? xv[5] : 0;
    int8_t *const oe = o + oc_n;
    for (; o < oe; o++, q += 4 + NW) {
        int32_t acc = q[0], v;
        acc = __smlad(x0, (uint32_t)q[4], acc);
        if (NW > 1) {
            acc = __smlad(x1, (uint32_t)q[5], acc);
        }
        if (NW > 2) {
            acc = __smlad(x2, (uint32_t)q[6], acc);
        }
        if (NW > 3) {
            acc = __smlad(x3, (uint32_t)q[7], acc);
        }
        if (NW > 4) {
            acc = __smlad(x4, (uint32_t)q[8], acc);
        }
        if (NW > 5) {
            acc = __smlad(x5, (uint32_t)q[9], acc);
        }
        __asm__("smmlar %0, %1, %2, %3" : "=r"(v) : "r"(acc), "r"(q[1]), "r"(q[2]));
        v = __ssat((v + (acc >> 31)) >> q[3], 8);
        if (!full) {
            v = tc_clamp(v, lo, hi);
        }
        *o = (int8_t)v;
    }
}

/* n pixels (see tc_pwf_t) for constant NW: each pixel's words loaded and split once. */
TC_INLINE void tc_pwf_run_k(const tc_pwf_t *k, const int8_t *x, int32_t xs, int32_t n,
                            int8_t *o, int32_t os, const int32_t NW)
{
    const tc_conv_params_t *p = k->p;
    const int32_t C = p->in_c, OC = p->out_c, G = (NW + 1) / 2, lo = p->act_min, hi = p->act_max;
    const int32_t *const q = (const int32_t *)(const void *)p->wfew;
    const int full = lo <= -128 && hi >= 127;
    for (; n > 0; n--, x += xs, o += os) {
        uint32_t xv[2 * ((TC_PWF_MAX_NW + 1) / 2)];
        const int8_t *src = x;
        uint32_t tmp[(TC_PWF_MAX_C + 3) / 4];
        int32_t g;
        if (x + 4 * G > k->end) { /* the last word would pass the input: a zeroed copy */
            memset(tmp, 0, sizeof tmp);
            memcpy(tmp, x, (size_t)C);
            src = (const int8_t *)tmp;
        }
        for (g = 0; g < G; g++) {
            const uint32_t w = tc_ld32(src + 4 * g);
            xv[2 * g] = tc_sxtb16_lo(w);
            xv[2 * g + 1] = tc_sxtb16_hi(w);
        }
        if (full) {
            tc_pwf_pixel_dsp(q, OC, xv, lo, hi, o, NW, 1);
        } else {
            tc_pwf_pixel_dsp(q, OC, xv, lo, hi, o, NW, 0);
        }
    }
}
#else
/* The same sums from the int16 halves of the weight words: ARMv6-M and portable C. */
TC_INLINE int32_t tc_pwf_half_lo(int32_t w)
{
    return (int32_t)(int16_t)(uint16_t)((uint32_t)w & 0xFFFFu);
}

/* hi32(acc2 * m + 2^31) + q: tc_mulacc16's 64-bit sum on ARMv6-M, int64 elsewhere. */
TC_INLINE int32_t tc_pwf_mulhi(int32_t acc2, int32_t m, int32_t q)
{
#if defined(__ARM_ARCH_6M__)
    uint32_t lo;
    return tc_mulacc16(acc2, m, 0x80000000u, q, &lo);
#else
    return (int32_t)(((int64_t)q * 4294967296LL + (int64_t)acc2 * m + 2147483648LL) >> 32);
#endif
}

/* Word j's products: the low half (value e = 4 (j / 2) + (j & 1)) against xa, the high half
 * (value e + 2) against xb where that value exists (C constant: no products of zero weights). */
#define TC_PWF_E(j) (4 * ((j) >> 1) + ((j) & 1))
#define TC_PWF_W(j)                                                                             \
    if (TC_PWF_E(j) < C) {                                                                      \
        const int32_t w = q[4 + (j)];                                                           \
        acc += xa[j] * tc_pwf_half_lo(w);                                                       \
        if (TC_PWF_E(j) + 2 < C) {                                                              \
            acc += xb[j] * (w >> 16);                                                           \
        }                                                                                       \
    }

/* n pixels (see tc_pwf_t) for constant C (1..12). A pixel's values are read as bytes; one whose
 * reads would pass the input's end (values up to 4 ceil(C / 4)) is copied to the stack. */
TC_INLINE void tc_pwf_run_k(const tc_pwf_t *k, const int8_t *x, int32_t xs, int32_t n,
                            int8_t *o, int32_t os, const int32_t C)
{
    const tc_conv_params_t *p = k->p;
    const int32_t NW = tc_pwf_nw(C), OC = p->out_c, lo = p->act_min, hi = p->act_max;
    const int32_t *const q0 = (const int32_t *)(const void *)p->wfew;
    for (; n > 0; n--, x += xs, o += os) {
        int32_t xa[TC_PWF_MAX_NW], xb[TC_PWF_MAX_NW], j;
        int8_t tmp[4 * ((TC_PWF_MAX_C + 3) / 4)];
        const int8_t *src = x;
        const int32_t *q = q0;
        int8_t *d = o;
        int8_t *const de = o + OC;
        if (x + TC_PWF_E(NW - 1) + 3 > k->end) {
            for (j = 0; j < (int32_t)sizeof tmp; j++) {
                tmp[j] = j < C ? x[j] : 0;
            }
            src = tmp;
        }
        for (j = 0; j < NW; j++) { /* xb past C meets zero weights (not multiplied) */
            xa[j] = src[TC_PWF_E(j)];
            xb[j] = src[TC_PWF_E(j) + 2];
        }
        for (; d < de; d++, q += 4 + NW) {
            int32_t acc = q[0], v;
            TC_PWF_W(0)
            TC_PWF_W(1)
            TC_PWF_W(2)
            TC_PWF_W(3)
            TC_PWF_W(4)
            TC_PWF_W(5)
            v = (tc_pwf_mulhi(acc, q[1], q[2]) + (acc >> 31)) >> q[3];
            *d = (int8_t)tc_clamp(v, lo, hi);
        }
    }
}
#undef TC_PWF_W
#undef TC_PWF_E
#endif

/* One out-of-line instance of tc_pwf_run_k per constant (NW on the M4/M7, in_c elsewhere). */
#define TC_PWF_RUN(c)                                                                           \
    static void tc_pwf_run##c(const tc_pwf_t *k, const int8_t *x, int32_t xs, int32_t n,       \
                              int8_t *o, int32_t os)                                            \
    {                                                                                           \
        tc_pwf_run_k(k, x, xs, n, o, os, c);                                                    \
    }
TC_PWF_RUN(1)
TC_PWF_RUN(2)
TC_PWF_RUN(3)
TC_PWF_RUN(4)
TC_PWF_RUN(5)
TC_PWF_RUN(6)
#if !TC_DSP
TC_PWF_RUN(7)
TC_PWF_RUN(8)
TC_PWF_RUN(9)
TC_PWF_RUN(10)
TC_PWF_RUN(11)
TC_PWF_RUN(12)
#endif
#undef TC_PWF_RUN

typedef void (*tc_pwf_fn)(const tc_pwf_t *, const int8_t *, int32_t, int32_t, int8_t *,
                          int32_t);

void tc_conv_pw_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
#if TC_DSP /* per NW */
    static const tc_pwf_fn runs[TC_PWF_MAX_NW] = {tc_pwf_run1, tc_pwf_run2, tc_pwf_run3,
                                                  tc_pwf_run4, tc_pwf_run5, tc_pwf_run6};
#else /* per in_c */
    static const tc_pwf_fn runs[TC_PWF_MAX_C] = {
        tc_pwf_run1, tc_pwf_run2, tc_pwf_run3, tc_pwf_run4,  tc_pwf_run5,  tc_pwf_run6,
        tc_pwf_run7, tc_pwf_run8, tc_pwf_run9, tc_pwf_run10, tc_pwf_run11, tc_pwf_run12};
#endif
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t N = p->batches * H * W;
    const tc_pwf_fn run = runs[(TC_DSP ? tc_pwf_nw(C) : C) - 1];
    tc_pwf_t k;
    int32_t n, oy;
    k.p = p;
    k.end = in + N * C;
    if (p->stride_h == 1 && p->stride_w == 1) {
        /* every input pixel, in order; in place (out over in) forwards or backwards so that no
         * output lands on input still to be read (a pixel's own input is read first) */
        if (!tc_pw_overlap(in, out, N, C, OC) || tc_pw_forward((int32_t)(in - out), N, C, OC)) {
            run(&k, in, C, N, out, OC);
        } else {
            run(&k, in + (N - 1) * C, -C, N, out + (N - 1) * OC, -OC);
        }
        return;
    }
    for (n = 0; n < p->batches; n++) { /* strided: output rows over every stride_h-th row */
        for (oy = 0; oy < p->out_h; oy++) {
            run(&k, in + ((n * H + oy * p->stride_h) * W) * C, p->stride_w * C, p->out_w,
                out + ((n * p->out_h + oy) * p->out_w) * OC, OC);
        }
    }
}
