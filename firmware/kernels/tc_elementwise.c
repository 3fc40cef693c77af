/* tinycompile runtime: ADD and MUL, int8, with broadcasting (tc_add_s8, tc_mul_s8; see
 * tc_elementwise.h).
 *
 * Match TensorFlow Lite Micro's reference kernels (add.cc with reference/integer_ops/add.h,
 * mul.cc with reference/integer_ops/mul.h, elementwise and broadcast), requantizing with
 * tc_requant (tc_qmath.h). ADD and MUL share most of their code, so they stay one family file; the
 * broadcast loop walker is tc_broadcast.h's. An int8 ADD given input tables (tc_add_params_t)
 * looks both rescaled inputs up (an int8 has 256 values; the compiler computes each with
 * TFLM's arithmetic), leaving one requantization per element instead of three. tc_add_s16 / tc_mul_s16: the same
 * arithmetic on int16 elements (16x8).
 */
#include "tc_elementwise.h"

#include "tc_broadcast.h"
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

static void tc_add_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

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

/* ------------------------------------------------------------------------------------ MUL */

static void tc_mul_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_mul_params_t *p = (const tc_mul_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = p->in1_offset + x[i * sx];
        int32_t b = p->in2_offset + y[i * sy];
        int32_t raw = tc_requant(a * b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int8_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_mul_s8(const tc_mul_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_mul_row,
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
