/* tinycompile runtime, internal: the int8 dot products of CONV_2D and FULLY_CONNECTED, and
 * the window copy of their im2col paths. Part of tc_kernel_util.h, which includes it once TC_DSP
 * is set: the portable variants are here, the DSP ones (SXTB16 + SMLAD sum the same products
 * in int32 with the same wrap-around, so results are identical) in tc_dot_dsp.h. They are
 * static inline because they must inline into the operators' loops.
 *
 * tc_dot_s8:     acc + sum(a[i] * b[i])
 * tc_dot12_s8:   two output channels share the input: a[0] += x.w0, a[1] += x.w1
 * tc_dot22_s8:   two inputs x two channels: a[0] += x0.w0, a[1] += x0.w1, a[2] += x1.w0,
 *                a[3] += x1.w1
 * tc_dot_off_s8: acc + sum((x[i] + off) * w[i]), the border path (TFLM's inner loop)
 * tc_dot14_s8:   one input x four channels w0 + k * ws: a[k] += x.w_k
 * tc_dot22_x8_s8 (DSP only): tc_dot22_s8 with x1 - x0 == w1 - w0 and n a multiple of 8
 * tc_copy_s8:    n bytes (im2col windows)
 *
 * The portable variants of tc_dot_s8 / tc_dot12_s8 run one index register counting up to zero
 * for all streams (ARMv6-M has only register-offset LDRSB); the DSP variants take four int8
 * per word, then finish element by element. (The scalar loops are written out in each variant
 * rather than shared through a helper: GCC allocates registers worse for the helper form.) */
#ifndef TC_DOT_H
#define TC_DOT_H

#ifndef TC_KERNEL_UTIL_H
#error "tc_dot.h is included through tc_kernel_util.h"
#endif

#if TC_DSP
#include "tc_dot_dsp.h"
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

TC_INLINE void tc_dot14_s8(const int8_t *x, const int8_t *w, int32_t ws, int32_t n, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
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

TC_INLINE void tc_copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    memcpy(dst, src, (size_t)n);
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

#endif /* TC_DOT_H */
