/* tinycompile runtime, internal: the Helium (MVE, Cortex-M55: TC_MVE) rows of the int8 ADD
 * (tc_elementwise.c) and SUB (tc_binary.c), static inline; on other cores this header declares
 * nothing. Both work on four int32 lanes per vector, a row's last 1 to 3 elements under a VCTP32
 * predicate (no scalar tail), inner strides 0 or 1 (an operand fixed along the row):
 *   - tc_add_lin_mve: ADD's exact linear form (tc_elementwise.h, ops/elem_fast.py),
 *     clamp((x * lin_p + y * lin_q + lin_r) >> lin_k) with wrapping int32 sums: VMLAS, VMLA,
 *     VQSHL + VSHR (shift and int8 saturation), [VMAX, VMIN,] VSTRB: 2 instructions per element;
 *   - tc_addsub_mve_row: TFLM's arithmetic step by step (both inputs shifted left and rescaled,
 *     summed or subtracted, requantized by tc_mve.h's tc_mve_requant_n, offset, clamped),
 *     exactly as tc_requant; for ADDs without a linear form and for SUB.
 * Results are the portable rows', byte for byte. */
#ifndef TC_ADD_MVE_H
#define TC_ADD_MVE_H

#include "tc_elementwise.h"
#include "tc_kernel_util.h"
#include "tc_mve.h"

#if TC_MVE
/* floor(t / 2^k) saturated to int8, then clamped to [lo, hi] when clamp: VQSHL by sl = 24 - k
 * puts the saturated quotient in the top byte (for k > 24 it shifts right, truncating, and
 * |t| < 2^31 leaves |t / 2^k| below 2^6: nothing to saturate), VSHR brings it down. */
TC_INLINE int32x4_t tc_add_mve_fin(int32x4_t t, int32_t sl, int32x4_t lo, int32x4_t hi,
                                   const int clamp)
{
    t = vshrq_n_s32(vqshlq_r_s32(t, sl), 24);
    if (clamp) {
        t = vminq_s32(vmaxq_s32(t, lo), hi);
    }
    return t;
}

/* The linear form over n elements: x * P (+ y * Q unless one) + R, wrapping as the scalar
 * form's sums do (VMLAS / VMLA keep the low 32 bits), 4 elements per step, the last 1 to 3
 * under a VCTP32 predicate. 8 instructions per step (loads and the store post-increment). */
TC_INLINE void tc_add_lin_mve_loop(const int8_t *x, const int8_t *y, int8_t *out, int32_t n,
                                   int32_t P, int32_t Q, int32_t R, int32_t sl, int32_t lo,
                                   int32_t hi, const int clamp, const int one)
{
    const int32x4_t pv = vdupq_n_s32(P), lov = vdupq_n_s32(lo), hiv = vdupq_n_s32(hi);
    for (; n >= 4; n -= 4) {
        int32x4_t t = vmlasq_n_s32(vldrbq_s32(x), pv, R);
        x += 4;
        if (!one) {
            t = vmlaq_n_s32(t, vldrbq_s32(y), Q);
            y += 4;
        }
        vstrbq_s32(out, tc_add_mve_fin(t, sl, lov, hiv, clamp));
        out += 4;
    }
    if (n > 0) {
        const mve_pred16_t pr = vctp32q((uint32_t)n);
        int32x4_t t = vmlasq_n_s32(vldrbq_z_s32(x, pr), pv, R);
        if (!one) {
            t = vmlaq_n_s32(t, vldrbq_z_s32(y, pr), Q);
        }
        vstrbq_p_s32(out, tc_add_mve_fin(t, sl, lov, hiv, clamp), pr);
    }
}

/* tc_add_lin_row on Helium (inner strides 0 or 1, not both 0): an operand fixed along the
 * row joins R, as there. */
TC_INLINE void tc_add_lin_mve(const tc_add_params_t *p, int32_t n, const int8_t *x, int32_t sx,
                           const int8_t *y, int32_t sy, int8_t *out)
{
    const int32_t lo = p->act_min, hi = p->act_max, sl = 24 - p->lin_k;
    const int clamp = lo > -128 || hi < 127;
    int32_t P = p->lin_p, Q = p->lin_q, R = p->lin_r;
    if (sx == 0 || sy == 0) {
        const int8_t *v = sy == 0 ? x : y;
        R = (int32_t)((uint32_t)R + (sy == 0 ? (uint32_t)(int32_t)y[0] * (uint32_t)Q
                                             : (uint32_t)(int32_t)x[0] * (uint32_t)P));
        P = sy == 0 ? P : Q;
        if (clamp) {
            tc_add_lin_mve_loop(v, v, out, n, P, P, R, sl, lo, hi, 1, 1);
        } else {
            tc_add_lin_mve_loop(v, v, out, n, P, P, R, sl, lo, hi, 0, 1);
        }
        return;
    }
    if (clamp) {
        tc_add_lin_mve_loop(x, y, out, n, P, Q, R, sl, lo, hi, 1, 0);
    } else {
        tc_add_lin_mve_loop(x, y, out, n, P, Q, R, sl, lo, hi, 0, 0);
    }
}

/* (v + off) << left, requantized by (m, s): TFLM's rescaling of one ADD / SUB input, exactly
 * (|v + off| <= 255, so the shifted value fits; VMLAS computes v * 2^left + off * 2^left). */
TC_INLINE int32x4_t tc_add_mve_scale(int32x4_t v, int32x4_t one_l, int32_t off_l, int32_t m,
                                     int32_t s)
{
    return tc_mve_requant_n(vmlasq_n_s32(v, one_l, off_l), m, s);
}

/* tc_addsub_mve4's constants, read from the params once per row (the stores could alias them). */
typedef struct {
    int32_t o1, m1, s1, o2, m2, s2, mo, so, oo, lo, hi;
    int32x4_t one_l, a0, b0; /* 2^left_shift; a fixed input's rescaled value */
} tc_addsub_mve_t;

/* Four elements of TFLM's ADD (sub == 0) or SUB (sub == 1), step by step on int32 lanes: both
 * inputs rescaled (k->a0 / k->b0 for an input fixed along the row), summed (or subtracted),
 * requantized, offset, clamped; pr: the lanes to load and store when tail. */
TC_INLINE void tc_addsub_mve4(const tc_addsub_mve_t *k, const int8_t *x, const int8_t *y,
                              int8_t *out, mve_pred16_t pr, const int tail, const int sx,
                              const int sy, const int sub)
{
    int32x4_t a = k->a0, b = k->b0, t;
    if (sx) {
        a = tail ? vldrbq_z_s32(x, pr) : vldrbq_s32(x);
        a = tc_add_mve_scale(a, k->one_l, k->o1, k->m1, k->s1);
    }
    if (sy) {
        b = tail ? vldrbq_z_s32(y, pr) : vldrbq_s32(y);
        b = tc_add_mve_scale(b, k->one_l, k->o2, k->m2, k->s2);
    }
    t = tc_mve_requant_n(sub ? vsubq_s32(a, b) : vaddq_s32(a, b), k->mo, k->so);
    t = tc_mve_out(t, k->oo, k->lo, k->hi);
    if (tail) {
        vstrbq_p_s32(out, t, pr);
    } else {
        vstrbq_s32(out, t);
    }
}

/* A row of tc_addsub_mve4 (inner strides sx, sy: 0 or 1, not both 0). */
TC_INLINE void tc_addsub_mve_loop(const tc_add_params_t *p, int32_t n, const int8_t *x,
                                  const int8_t *y, int8_t *out, const int sx, const int sy,
                                  const int sub)
{
    tc_addsub_mve_t k;
    k.o1 = p->in1_offset * (1 << p->left_shift);
    k.m1 = p->in1_multiplier;
    k.s1 = p->in1_shift;
    k.o2 = p->in2_offset * (1 << p->left_shift);
    k.m2 = p->in2_multiplier;
    k.s2 = p->in2_shift;
    k.mo = p->out_multiplier;
    k.so = p->out_shift;
    k.oo = p->out_offset;
    k.lo = p->act_min;
    k.hi = p->act_max;
    k.one_l = vdupq_n_s32(1 << p->left_shift);
    k.a0 = tc_add_mve_scale(vdupq_n_s32(sx ? 0 : x[0]), k.one_l, k.o1, k.m1, k.s1);
    k.b0 = tc_add_mve_scale(vdupq_n_s32(sy ? 0 : y[0]), k.one_l, k.o2, k.m2, k.s2);
    for (; n >= 4; n -= 4) {
        tc_addsub_mve4(&k, x, y, out, 0, 0, sx, sy, sub);
        x += 4 * sx;
        y += 4 * sy;
        out += 4;
    }
    if (n > 0) {
        tc_addsub_mve4(&k, x, y, out, vctp32q((uint32_t)n), 1, sx, sy, sub);
    }
}

/* TFLM's ADD (sub == 0) or SUB (sub == 1) over a row on Helium, exactly (inner strides 0 or 1,
 * not both 0): the fallback of the ADDs without a linear form, and SUB's path (tc_binary.c). */
TC_INLINE void tc_addsub_mve_row(const tc_add_params_t *p, int32_t n, const int8_t *x, int32_t sx,
                              const int8_t *y, int32_t sy, int8_t *out, const int sub)
{
    if (sx && sy) {
        tc_addsub_mve_loop(p, n, x, y, out, 1, 1, sub);
    } else if (sx) {
        tc_addsub_mve_loop(p, n, x, y, out, 1, 0, sub);
    } else {
        tc_addsub_mve_loop(p, n, x, y, out, 0, 1, sub);
    }
}
#endif /* TC_MVE */

#endif /* TC_ADD_MVE_H */
