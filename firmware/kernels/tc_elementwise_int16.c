/* tinycompile runtime: ADD, 16x8 fast path (tc_add_s16q; parameters tc_add_params_t of
 * tc_elementwise.h, zero points 0, left_shift 15).
 *
 * TFLM's int16 AddElementwise: each input x rescaled as
 * RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << 15, m), r), the two summed and
 * requantized the same way, clamped. Exact shortcuts (the compiler passes only layers whose
 * shifts are <= 0, ops/add.py):
 *   - for int16 x, SaturatingRoundingDoublingHighMul(x << 15, m) = floor((x * m + 2^15) / 2^16)
 *     (x * m * 2^15 + 2^30 over 2^31): SMMULR of x << 16 on Cortex-M4/M7; elsewhere
 *     x * (m >> 16) + ((x * (m & 0xFFFF) + 2^15) >> 16), two 32-bit products (no 64-bit one);
 *   - RoundingDivideByPOT(h, r) = (h + 2^(r - 1) + (h >> 31)) >> r for r >= 1 (half away from
 *     zero), h itself for r = 0: the loops come in the four instances of r1 = 0 or not, r2 = 0
 *     or not (the input with the larger scale has r = 0);
 *   - each rescaled input is at most 2^29 in magnitude (x * 2^15 times a rescale factor <= 1/2),
 *     so 2 * (a + b) fits int32 and SaturatingRoundingDoublingHighMul(a + b, m_out) is
 *     SMMULR(2 * (a + b), m_out) (M4/M7; elsewhere tc_requant, exactly TFLM's).
 * The output shift must be negative on M4/M7 for the SMMULR form (else tc_requant per element).
 */
#include <stdint.h>

#include "tc_broadcast.h"
#include "tc_elementwise.h"
#include "tc_kernel_util.h"
#include "tc_s16.h"

typedef struct {
    int32_t m1, r1, c1, m2, r2, c2, mo, ro, co, lo, hi;
} tc_add16_k_t;

/* One input's rescaling; z: r == 0. */
TC_INLINE int32_t tc_add16_in(int32_t x, int32_t m, int32_t r, int32_t c, const int z)
{
    int32_t h;
#if TC_DSP
    __asm__("smmulr %0, %1, %2" : "=r"(h) : "r"((int32_t)((uint32_t)x << 16)), "r"(m));
#else
    h = x * (m >> 16) + ((x * (m & 0xFFFF) + (1 << 15)) >> 16);
#endif
    return z ? h : (h + c + (h >> 31)) >> r;
}

TC_INLINE int16_t tc_add16_outv(int32_t v, const tc_add16_k_t *k)
{
    int32_t y;
#if TC_DSP
    int32_t h;
    __asm__("smmulr %0, %1, %2" : "=r"(h) : "r"(v + v), "r"(k->mo));
    y = (h + k->co + (h >> 31)) >> k->ro;
#else
    y = tc_requant(v, k->mo, -k->ro);
#endif
    return (int16_t)tc_clamp(y, k->lo, k->hi);
}

TC_INLINE void tc_add16_loop(const tc_add16_k_t *k, int32_t n, const int16_t *x, int32_t sx,
                             const int16_t *y, int32_t sy, int16_t *out, const int z1,
                             const int z2)
{
    int32_t i;
    if (sy == 0) {
        const int32_t b = tc_add16_in(*y, k->m2, k->r2, k->c2, z2);
        for (i = 0; i < n; i++) {
            out[i] = tc_add16_outv(tc_add16_in(*x, k->m1, k->r1, k->c1, z1) + b, k);
            x += sx;
        }
    } else if (sx == 1 && sy == 1) {
        for (i = 0; i < n; i++) {
            out[i] = tc_add16_outv(tc_add16_in(x[i], k->m1, k->r1, k->c1, z1) +
                                       tc_add16_in(y[i], k->m2, k->r2, k->c2, z2),
                                   k);
        }
    } else {
        for (i = 0; i < n; i++) {
            out[i] = tc_add16_outv(tc_add16_in(*x, k->m1, k->r1, k->c1, z1) +
                                       tc_add16_in(*y, k->m2, k->r2, k->c2, z2),
                                   k);
            x += sx;
            y += sy;
        }
    }
}

static void tc_add16_row(const void *vp, int32_t n, const int16_t *x, int32_t sx,
                         const int16_t *y, int32_t sy, int16_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    tc_add16_k_t k;
    k.m1 = p->in1_multiplier;
    k.r1 = -p->in1_shift;
    k.c1 = k.r1 ? 1 << (k.r1 - 1) : 0;
    k.m2 = p->in2_multiplier;
    k.r2 = -p->in2_shift;
    k.c2 = k.r2 ? 1 << (k.r2 - 1) : 0;
    k.mo = p->out_multiplier;
    k.ro = -p->out_shift;
    k.co = k.ro ? 1 << (k.ro - 1) : 0;
    k.lo = p->act_min;
    k.hi = p->act_max;
#if TC_DSP
    if (k.ro == 0) { /* the SMMULR form needs a right shift: TFLM's arithmetic per element */
        int32_t i;
        for (i = 0; i < n; i++) {
            const int32_t a = tc_add16_in(x[i * sx], k.m1, k.r1, k.c1, 0 + (k.r1 == 0));
            const int32_t b = tc_add16_in(y[i * sy], k.m2, k.r2, k.c2, 0 + (k.r2 == 0));
            out[i] = (int16_t)tc_clamp(tc_requant(a + b, k.mo, 0), k.lo, k.hi);
        }
        return;
    }
#endif
    if (k.r1 == 0) {
        if (k.r2 == 0) {
            tc_add16_loop(&k, n, x, sx, y, sy, out, 1, 1);
        } else {
            tc_add16_loop(&k, n, x, sx, y, sy, out, 1, 0);
        }
    } else if (k.r2 == 0) {
        tc_add16_loop(&k, n, x, sx, y, sy, out, 0, 1);
    } else {
        tc_add16_loop(&k, n, x, sx, y, sy, out, 0, 0);
    }
}

void tc_add_s16q(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out)
{
    tc_bcast_walk_s16(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out,
                      tc_add16_row, p);
}
