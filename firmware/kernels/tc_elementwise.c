/* tinycompile runtime: ADD, int8, with broadcasting (tc_add_s8; see tc_elementwise.h), and the
 * 16x8 ADD and MUL. The int8 MUL (tc_mul_s8) and its fast paths are in tc_elementwise_mul.c.
 *
 * Match TensorFlow Lite Micro's reference kernels (add.cc with reference/integer_ops/add.h,
 * mul.cc with reference/integer_ops/mul.h, elementwise and broadcast), requantizing with
 * tc_requant (tc_qmath.h); the broadcast loop walker is tc_broadcast.h's. An int8 ADD given input tables (tc_add_params_t)
 * looks both rescaled inputs up (an int8 has 256 values; the compiler computes each with
 * TFLM's arithmetic), leaving one requantization per element instead of three. Faster still, an
 * int8 ADD given an exact linear form (tc_elementwise.h, ops/elem_fast.py) runs it: two
 * multiply-accumulates per element (tc_add_lin_row), or on Cortex-M4/M7 two SMLAW per element
 * over four elements per word (tc_add_dsp_row). On the Cortex-M55 (Helium, TC_MVE) the rows
 * run four elements per vector (tc_add_mve.h): the linear form (VMLAS, VMLA, a saturating
 * shift; 2 instructions per element), else TFLM's arithmetic step by step, both exact.
 * tc_add_s16 / tc_mul_s16: the same arithmetic on int16 elements (16x8).
 */
#include "tc_elementwise.h"

#include "tc_broadcast.h"
#include "tc_add_mve.h"
#include "tc_kernel_util.h"
#include "tc_qmath.h"

/* ------------------------------------------------------------------------------------ ADD */

TC_INLINE int32_t tc_add_scale(int32_t v, int32_t left_shift, int32_t m, int32_t s)
{
    /* v is within [-255, 255] (int8, left_shift 20) or [-65535, 65535] (int16, 15): no overflow */
    return tc_requant(v * ((int32_t)1 << left_shift), m, s);
}

TC_INLINE int8_t tc_add_finish(const tc_add_params_t *p, int32_t a, int32_t b)
{
    int32_t raw = tc_requant(a + b, p->out_multiplier, p->out_shift) + p->out_offset;
    return (int8_t)tc_clamp(raw, p->act_min, p->act_max);
}

/* The linear form: x * P + y * Q + R in wrapping 32-bit arithmetic, shifted right by K (exact:
 * ops/elem_fast.py checked every input pair). Inner strides are 1 or 0 (broadcast). */
static void tc_add_lin_row(const tc_add_params_t *p, int32_t n, const int8_t *x, int32_t sx,
                           const int8_t *y, int32_t sy, int8_t *out)
{
    const uint32_t P = (uint32_t)p->lin_p, Q = (uint32_t)p->lin_q;
    const int32_t k = p->lin_k, lo = p->act_min, hi = p->act_max;
    uint32_t r = (uint32_t)p->lin_r;
    int32_t i;
    if (sy == 0 || sx == 0) { /* one operand fixed along the row: its term joins R */
        const int8_t *v = sy == 0 ? x : y;
        r += sy == 0 ? (uint32_t)(int32_t)y[0] * Q : (uint32_t)(int32_t)x[0] * P;
        {
            const uint32_t m = sy == 0 ? P : Q;
            for (i = 0; i < n; ++i) {
                int32_t t = (int32_t)((uint32_t)(int32_t)v[i] * m + r) >> k;
                out[i] = (int8_t)(t < lo ? lo : t > hi ? hi : t);
            }
        }
        return;
    }
    for (i = 0; i < n; ++i) {
        int32_t t = (int32_t)((uint32_t)(int32_t)x[i] * P + (uint32_t)(int32_t)y[i] * Q + r) >> k;
        out[i] = (int8_t)(t < lo ? lo : t > hi ? hi : t);
    }
}

#if TC_DSP
/* floor(m * v / 256) for an int8 v, as SMLAW computes it from v in the high byte of a lane. */
TC_INLINE int32_t tc_add_dsp_term(int32_t m, int32_t v)
{
    return __smlawb(m, (int32_t)((uint32_t)v << 8), 0);
}

/* (w << 8) & m in one instruction (GCC would shift, then AND with an immediate). */
TC_INLINE uint32_t tc_and_lsl8(uint32_t w, uint32_t m)
{
    uint32_t r;
    __asm__("and %0, %1, %2, lsl #8" : "=r"(r) : "r"(m), "r"(w));
    return r;
}

/* Four outputs (the SMLAW sums of elements 0..3) clamped, as one word: the sums' high halves
 * (>> 16 of the form) paired by PKHTB, saturated to int8 by SSAT16, bytes interleaved, the
 * fused activation applied bytewise with SSUB8/SEL (clamp: a compile-time argument). */
TC_INLINE uint32_t tc_add_dsp_pack(int32_t v0, int32_t v1, int32_t v2, int32_t v3, uint32_t m,
                                   uint32_t lo4, uint32_t hi4, const int clamp)
{
    uint32_t e = (uint32_t)__ssat16((int16x2_t)tc_pkhtb16((uint32_t)v0, (uint32_t)v2), 8);
    uint32_t o = (uint32_t)__ssat16((int16x2_t)tc_pkhtb16((uint32_t)v1, (uint32_t)v3), 8);
    uint32_t w = (e & 0x00FF00FFu) | tc_and_lsl8(o, m), t;
    if (clamp) {
        __asm__("ssub8 %[t], %[w], %[l]\n\tsel %[w], %[w], %[l]\n\t"
                "ssub8 %[t], %[w], %[h]\n\tsel %[w], %[h], %[w]"
                : [w] "+r"(w), [t] "=&r"(t)
                : [l] "r"(lo4), [h] "r"(hi4)
                : "cc");
    }
    return w;
}

/* The DSP form's whole words of a row (i < n rounded down to 4), returns how many were done:
 * bytes masked into the high byte of 16-bit lanes (even elements shifted up, odd ones in
 * place), one SMLAWB/SMLAWT per operand and element; v: the only operand varying along the
 * row when one == 1 (the other's term is in R). */
TC_INLINE int32_t tc_add_dsp_words(const int8_t *x, const int8_t *y, int8_t *out, int32_t n,
                                   int32_t P, int32_t Q, int32_t R, uint32_t lo4, uint32_t hi4,
                                   const int clamp, const int one)
{
    const uint32_t M = 0xFF00FF00u;
    int32_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        const uint32_t a = tc_ld32(x + i), ae = tc_and_lsl8(a, M), ao = a & M;
        uint32_t r;
        if (one) {
            r = tc_add_dsp_pack(__smlawb(P, (int32_t)ae, R), __smlawb(P, (int32_t)ao, R),
                                __smlawt(P, (int32_t)ae, R), __smlawt(P, (int32_t)ao, R), M,
                                lo4, hi4, clamp);
        } else {
            const uint32_t b = tc_ld32(y + i), be = tc_and_lsl8(b, M), bo = b & M;
            r = tc_add_dsp_pack(__smlawb(Q, (int32_t)be, __smlawb(P, (int32_t)ae, R)),
                                __smlawb(Q, (int32_t)bo, __smlawb(P, (int32_t)ao, R)),
                                __smlawt(Q, (int32_t)be, __smlawt(P, (int32_t)ae, R)),
                                __smlawt(Q, (int32_t)bo, __smlawt(P, (int32_t)ao, R)), M, lo4,
                                hi4, clamp);
        }
        memcpy(out + i, &r, 4);
    }
    return i;
}

/* The DSP form over a row (tc_add_dsp_words, then the last elements one by one); an operand
 * fixed along the row (stride 0) joins R. */
static void tc_add_dsp_row(const tc_add_params_t *p, int32_t n, const int8_t *x, int32_t sx,
                           const int8_t *y, int32_t sy, int8_t *out)
{
    const int32_t lo = p->act_min, hi = p->act_max;
    const uint32_t lo4 = (uint8_t)lo * 0x01010101u, hi4 = (uint8_t)hi * 0x01010101u;
    const int clamp = lo > -128 || hi < 127;
    int32_t P = p->dsp_p, Q = p->dsp_q, R = p->dsp_r, i;
    if (sx == 0 || sy == 0) {
        const int8_t *v = sy == 0 ? x : y;
        const int32_t t = sy == 0 ? tc_add_dsp_term(Q, y[0]) : tc_add_dsp_term(P, x[0]);
        R = (int32_t)((uint32_t)R + (uint32_t)t);
        P = sy == 0 ? P : Q;
        i = clamp ? tc_add_dsp_words(v, v, out, n, P, P, R, lo4, hi4, 1, 1)
                  : tc_add_dsp_words(v, v, out, n, P, P, R, lo4, hi4, 0, 1);
        for (; i < n; ++i) {
            const int32_t u = (int32_t)((uint32_t)R + (uint32_t)tc_add_dsp_term(P, v[i])) >> 16;
            out[i] = (int8_t)tc_clamp(u, lo, hi);
        }
        return;
    }
    i = clamp ? tc_add_dsp_words(x, y, out, n, P, Q, R, lo4, hi4, 1, 0)
              : tc_add_dsp_words(x, y, out, n, P, Q, R, lo4, hi4, 0, 0);
    for (; i < n; ++i) {
        const uint32_t u = (uint32_t)R + (uint32_t)tc_add_dsp_term(P, x[i]) +
                           (uint32_t)tc_add_dsp_term(Q, y[i]);
        out[i] = (int8_t)tc_clamp((int32_t)u >> 16, lo, hi);
    }
}
#endif

static void tc_add_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

#if !defined(TC_PORTABLE)
#if TC_MVE
    if ((sx == 0 || sx == 1) && (sy == 0 || sy == 1) && (sx | sy)) {
        if (p->lin_k > 0) {
            tc_add_lin_mve(p, n, x, sx, y, sy, out);
        } else {
            tc_addsub_mve_row(p, n, x, sx, y, sy, out, 0);
        }
        return;
    }
#endif
#if TC_DSP
    if (p->dsp_ok) {
        tc_add_dsp_row(p, n, x, sx, y, sy, out);
        return;
    }
#endif
    if (p->lin_k > 0) {
        tc_add_lin_row(p, n, x, sx, y, sy, out);
        return;
    }
#endif

    if (p->in1_table) { /* both inputs rescaled by table lookup: one requantization left */
        const int32_t *const t1 = p->in1_table + 128, *const t2 = p->in2_table + 128;
#if TC_DSP
        const int32_t m = p->out_multiplier, sh = p->out_shift, oo = p->out_offset;
        const int32_t lo = p->act_min, hi = p->act_max;
        if (sx == 1 && sy == 1 && sh < 0) {
            const uint32_t r1 = ~(uint32_t)sh, t = 1u << r1;
            const int8_t *const end = x + n;
            while (x < end) {
                int32_t v = __ssat(tc_requant_rs_dsp(t1[*x++] + t2[*y++], m, r1, t) + oo, 8);
                if (lo > -128 || hi < 127) {
                    v = tc_clamp(v, lo, hi);
                }
                *out++ = (int8_t)v;
            }
            return;
        }
        for (i = 0; i < n; ++i) {
            out[i] = tc_out_s8_dsp(t1[x[i * sx]] + t2[y[i * sy]], m, sh, oo, lo, hi);
        }
#else
        for (i = 0; i < n; ++i) {
            out[i] = tc_add_finish(p, t1[x[i * sx]], t2[y[i * sy]]);
        }
#endif
        return;
    }

    if (sy == 0) {
        const int32_t b = tc_add_scale(p->in2_offset + y[0], p->left_shift, p->in2_multiplier,
                                       p->in2_shift);
        for (i = 0; i < n; ++i) {
            int32_t a = tc_add_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                     p->in1_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    } else if (sx == 0) {
        const int32_t a = tc_add_scale(p->in1_offset + x[0], p->left_shift, p->in1_multiplier,
                                       p->in1_shift);
        for (i = 0; i < n; ++i) {
            int32_t b = tc_add_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                     p->in2_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    } else {
        for (i = 0; i < n; ++i) {
            int32_t a = tc_add_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                     p->in1_shift);
            int32_t b = tc_add_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                     p->in2_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    }
}

void tc_add_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_add_row,
                    p);
}

/* ------------------------------------------------------------------ 16x8: ADD and MUL */

/* ADD on int16 (TFLM's AddElementwise with left_shift 15): |v| <= 65535, so v << 15 fits. */
static void tc_add_row16(const void *vp, int32_t n, const int16_t *x, int32_t sx,
                         const int16_t *y, int32_t sy, int16_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = tc_add_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                 p->in1_shift);
        int32_t b = tc_add_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                 p->in2_shift);
        int32_t raw = tc_requant(a + b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int16_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_add_s16(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out)
{
    tc_bcast_walk_s16(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                      tc_add_row16, p);
}

/* MUL on int16: the product of two int16 values fits int32. */
static void tc_mul_row16(const void *vp, int32_t n, const int16_t *x, int32_t sx,
                         const int16_t *y, int32_t sy, int16_t *out)
{
    const tc_mul_params_t *p = (const tc_mul_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = p->in1_offset + x[i * sx];
        int32_t b = p->in2_offset + y[i * sy];
        int32_t raw = tc_requant(a * b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int16_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_mul_s16(const tc_mul_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out)
{
    tc_bcast_walk_s16(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                      tc_mul_row16, p);
}
