/* tinycompile runtime: DIV (int8, broadcasting), matching TensorFlow Lite Micro's div.cc with
 * reference/div.h (DivElementwise, BroadcastDivSlowQuantized). Written from those semantics.
 *
 * Per element: the divisor's sign moves to the dividend; the dividend v is normalised by its
 * leading sign bits h; q = SRDHM(v << h, 1/|divisor|) (the reciprocal, from GetReciprocal, is
 * tabulated by the compiler per divisor byte); then RoundingDivideByPOT(SRDHM(q, multiplier),
 * h + recip_shift - out_shift) plus the output zero point, clamped. That exponent may exceed 31,
 * where gemmlowp's C++ is undefined: this does what TFLM's x86 build does (an all-ones mask and
 * the shift taken modulo 32), the reference the compiler is checked against. No fast path; the
 * loop nest is tc_bcast_walk (tc_broadcast.h). int32 DIV (unquantized): C division, clamped,
 * with its own odometer over the same merged broadcast loops.
 */
#include "tc_div.h"

#include "tc_broadcast.h"
#include "tc_qmath.h"

/* CountLeadingSignBits of an int32 (31 for 0). */
static int32_t tc_div_clrsb(int32_t v)
{
    uint32_t u = (uint32_t)(v < 0 ? ~v : v);
    int32_t n = 0;

    if (u == 0) {
        return 31;
    }
    while (!(u & 0x80000000u)) {
        u <<= 1;
        ++n;
    }
    return n - 1;
}

/* RoundingDivideByPOT for exponents 0..62, above 31 as TFLM's x86 build computes it. */
static int32_t tc_div_rdivpot(int32_t x, int32_t e)
{
    if (e <= 31) {
        return tc_rdivpot(x, e);
    }
    /* mask (int32)((1ll << e) - 1) = -1: remainder x, threshold -1 + (x < 0) */
    return (x >> (e & 31)) + (x > (x < 0 ? 0 : -1) ? 1 : 0);
}

static void tc_div_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_div_params_t *p = (const tc_div_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        const int32_t b = y[i * sy];
        const uint8_t k = (uint8_t)b;
        int32_t v = p->in1_offset + x[i * sx];
        int32_t h;
        int32_t q;
        int32_t raw;
        if (p->in2_offset + b < 0) {
            v = -v;
        }
        h = tc_div_clrsb(v);
        q = tc_srdhm((int32_t)((uint32_t)v << h), p->inv[k]);
        raw = tc_div_rdivpot(tc_srdhm(q, p->out_multiplier), h + p->inv_shift[k] - p->out_shift);
        out[i] = (int8_t)tc_clamp(raw + p->out_offset, p->act_min, p->act_max);
    }
}

void tc_div_s8(const tc_div_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_bcast_walk(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_div_row,
                  p);
}

static int32_t tc_div_i32(int32_t a, int32_t b)
{
    if (b == 0) {
        return 0;
    }
    if (b == -1) {
        return a == INT32_MIN ? INT32_MIN : -a;
    }
    return a / b;
}

void tc_div_s32(const tc_div_s32_params_t *p, const int32_t *in1, const int32_t *in2,
                int32_t *out)
{
    int32_t idx[TC_BCAST_MAX_DIMS];
    int32_t off1 = 0;
    int32_t off2 = 0;
    int32_t i;
    int d;

    for (d = 0; d < p->rank; ++d) {
        idx[d] = 0;
    }
    for (i = 0; i < p->size; ++i) {
        const int32_t a = p->rank ? in1[off1] : in1[i];
        const int32_t b = p->rank ? in2[off2] : in2[i];
        out[i] = tc_clamp(tc_div_i32(a, b), p->act_min, p->act_max);
        for (d = p->rank - 1; d >= 0; --d) { /* odometer, innermost first */
            off1 += p->stride1[d];
            off2 += p->stride2[d];
            if (++idx[d] < p->dims[d]) {
                break;
            }
            off1 -= p->stride1[d] * p->dims[d];
            off2 -= p->stride2[d] * p->dims[d];
            idx[d] = 0;
        }
    }
}
