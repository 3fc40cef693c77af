/* tinycompile runtime: int8 binary elementwise operators with broadcasting: SUB, MAXIMUM,
 * MINIMUM, SQUARED_DIFFERENCE, PRELU (see tc_binary.h).
 *
 * Match TensorFlow Lite Micro's reference kernels: SUB as reference/sub.h's SubElementwise and
 * BroadcastQuantSubSlow (both operands shifted left by 20 bits, rescaled to a common scale,
 * subtracted, requantized, clamped); MAXIMUM/MINIMUM as maximum_minimum.cc (raw values
 * compared); SQUARED_DIFFERENCE as squared_difference.cc (operands shifted left by 7 bits,
 * rescaled, subtracted, squared, requantized); PRELU as reference/prelu.h's
 * BroadcastPrelu4DSlow (two multipliers, by the sign of the offset input). Requantization through tc_requant (tc_qmath.h); the loop
 * nest through tc_bcast_walk (tc_broadcast.h). One fast path: the int8 SUB on Helium
 * (Cortex-M55, TC_MVE) runs its rows four elements per vector, exactly
 * (tc_add_mve.h's tc_addsub_mve_row).
 */
#include "tc_binary.h"

#include "tc_add_mve.h"
#include "tc_broadcast.h"
#include "tc_qmath.h"

/* ------------------------------------------------------------------------------------ SUB */

TC_INLINE int32_t tc_sub_scale(int32_t v, int32_t left_shift, int32_t m, int32_t s)
{
    return tc_requant(v * ((int32_t)1 << left_shift), m, s); /* |v| <= 255 or 65535 (<< 15) */
}

static void tc_sub_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

#if TC_MVE
    if ((sx == 0 || sx == 1) && (sy == 0 || sy == 1) && (sx | sy)) {
        tc_addsub_mve_row(p, n, x, sx, y, sy, out, 1);
        return;
    }
#endif
    for (i = 0; i < n; ++i) {
        int32_t a = tc_sub_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                 p->in1_shift);
        int32_t b = tc_sub_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                 p->in2_shift);
        int32_t raw = tc_requant(a - b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int8_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_sub_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_sub_row,
                  p);
}

static void tc_sub_row16(const void *vp, int32_t n, const int16_t *x, int32_t sx,
                         const int16_t *y, int32_t sy, int16_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = tc_sub_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                 p->in1_shift);
        int32_t b = tc_sub_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                 p->in2_shift);
        int32_t raw = tc_requant(a - b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int16_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

/* 16x8 SUB (int16 elements, left_shift 15: |v| <= 65535 keeps v << 15 in int32). */
void tc_sub_s16(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out)
{
    tc_bcast_walk_s16(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                      tc_sub_row16, p);
}

/* -------------------------------------------------------------------- MAXIMUM, MINIMUM */

static void tc_max_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    int32_t i;

    (void)vp;
    for (i = 0; i < n; ++i) {
        const int8_t a = x[i * sx];
        const int8_t b = y[i * sy];
        out[i] = a > b ? a : b;
    }
}

static void tc_min_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    int32_t i;

    (void)vp;
    for (i = 0; i < n; ++i) {
        const int8_t a = x[i * sx];
        const int8_t b = y[i * sy];
        out[i] = a < b ? a : b;
    }
}

void tc_maximum_s8(const tc_bcast_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_max_row,
                  p);
}

void tc_minimum_s8(const tc_bcast_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_min_row,
                  p);
}

/* --------------------------------------------------------------------- SQUARED_DIFFERENCE */

static void tc_sqdiff_row(const void *vp, int32_t n, const int8_t *x, int32_t sx,
                          const int8_t *y, int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        /* |v| <= 255, shifted by 7: the scaled difference stays below 2^15, its square 2^30 */
        int32_t a = tc_sub_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                 p->in1_shift);
        int32_t b = tc_sub_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                 p->in2_shift);
        int32_t d = a - b;
        int32_t raw = tc_requant(d * d, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int8_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_squared_difference_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2,
                              int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                  tc_sqdiff_row, p);
}

/* ---------------------------------------------------------------------------------- PRELU */

static void tc_prelu_row(const void *vp, int32_t n, const int8_t *x, int32_t sx,
                         const int8_t *y, int32_t sy, int8_t *out)
{
    const tc_prelu_params_t *p = (const tc_prelu_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        const int32_t v = p->in_offset + x[i * sx];
        int32_t raw;
        if (v >= 0) {
            raw = tc_requant(v, p->multiplier1, p->shift1);
        } else {
            raw = tc_requant(v * (p->alpha_offset + y[i * sy]), p->multiplier2, p->shift2);
        }
        out[i] = (int8_t)tc_clamp(raw + p->out_offset, -128, 127);
    }
}

void tc_prelu_s8(const tc_prelu_params_t *p, const int8_t *in, const int8_t *alpha, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in, alpha, out,
                  tc_prelu_row, p);
}
