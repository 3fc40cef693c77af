/* tinycompile runtime: int8 binary elementwise operators with broadcasting: SUB (tc_sub_s8;
 * see tc_binary.h).
 *
 * Match TensorFlow Lite Micro's reference kernels: SUB as reference/sub.h's SubElementwise and
 * BroadcastQuantSubSlow (both operands shifted left by 20 bits, rescaled to a common scale,
 * subtracted, requantized, clamped). Requantization through tc_requant (tc_qmath.h); the loop
 * nest through tc_bcast_walk (tc_broadcast.h). No fast paths.
 */
#include "tc_binary.h"

#include "tc_broadcast.h"
#include "tc_qmath.h"

/* ------------------------------------------------------------------------------------ SUB */

TC_INLINE int32_t tc_sub_scale(int32_t v, int32_t left_shift, int32_t m, int32_t s)
{
    return tc_requant(v * ((int32_t)1 << left_shift), m, s); /* |v| <= 255: no overflow */
}

static void tc_sub_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

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
