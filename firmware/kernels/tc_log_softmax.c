/* tinycompile runtime: LOG_SOFTMAX, int8 (tc_log_softmax_s8; see tc_log_softmax.h).
 *
 * Matches TensorFlow Lite Micro's log_softmax.cc (reference/log_softmax.h, int8 path): the
 * per-row part runs here exactly as there: the row maximum, the wrapping int32 sum of the
 * tabulated exp values (Q12.19), log_x_for_x_greater_than_or_equal_to_1 of it in Q5.26
 * (kernels/internal/common.h, gemmlowp arithmetic), the adjusted minimum difference through
 * MultiplyByQuantizedMultiplier, and the final rounding shift. The Python twin of the
 * logarithm is tinycompile/quant/fixedpoint.py's log_x_for_x_greater_than_or_equal_to_1.
 * No fast paths.
 */
#include "tc_log_softmax.h"

#include "tc_qmath.h"

static int32_t tc_ls_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT(Param) for 0 <= e <= 31: saturating left shift. */
static int32_t tc_ls_shl(int32_t x, int e)
{
    int32_t threshold;
    if (e == 0) {
        return x;
    }
    threshold = (int32_t)(((uint32_t)1 << (31 - e)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << e);
}

static int32_t tc_ls_sat(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

static int32_t tc_ls_half_sum(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + b;
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

static int tc_ls_clz(uint32_t x)
{
    int n = 0;
    if (x == 0) {
        return 32;
    }
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: Newton-Raphson in Q2.29, Q0.31 in and out. */
static int32_t tc_ls_one_over_one_plus_x(int32_t a)
{
    const int32_t half_den = tc_ls_half_sum(a, INT32_MAX);
    int32_t x = tc_ls_add(1515870810, tc_srdhm(half_den, -1010580540));
    int i;
    for (i = 0; i < 3; i++) {
        const int32_t one_minus = (int32_t)((uint32_t)(1 << 29) - (uint32_t)tc_srdhm(half_den, x));
        x = tc_ls_add(x, tc_ls_shl(tc_srdhm(x, one_minus), 2));
    }
    return tc_ls_shl(x, 1);
}

/* log(x) for a Q12.19 x >= 1, as Q5.26 (accumulated in Q6.25). */
static int32_t tc_ls_log_q12_to_q5(int32_t x)
{
    enum { IN_BITS = 12, ACC_BITS = 6 };
    const int32_t log_2 = 1488522236;
    const int32_t sqrt_sqrt_half = 1805811301;
    const int32_t sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297;
    const int32_t alpha_d = 127690142;
    const int32_t alpha_i = 1057819769;
    const int32_t alpha_f = 638450708;
    const int32_t shifted_quarter = tc_rdivpot((int32_t)1 << 29, ACC_BITS);
    const int za_hr1 = tc_ls_clz((uint32_t)x);
    const int32_t r_a = tc_ls_shl(tc_srdhm(tc_ls_shl(x, za_hr1 - 1), sqrt_half), 1);
    const int32_t za_adj =
        tc_ls_sat((int64_t)tc_ls_shl(IN_BITS - za_hr1, 31 - ACC_BITS) + shifted_quarter);
    const int32_t z_b = tc_srdhm(x, sqrt_half);
    const int zb_hr = tc_ls_clz((uint32_t)z_b) - 1;
    const int32_t r_b = tc_ls_shl(x, zb_hr);
    const int32_t zb_adj =
        tc_ls_sat((int64_t)tc_ls_shl(IN_BITS - zb_hr, 31 - ACC_BITS) - shifted_quarter);
    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_adj = za_adj > zb_adj ? za_adj : zb_adj;
    const int32_t pp = tc_ls_half_sum(r, sqrt_sqrt_half);
    int32_t q = (int32_t)((uint32_t)r - (uint32_t)sqrt_sqrt_half);
    int32_t common_sq, num, denom, recip;
    q = tc_ls_add(q, q);
    common_sq = tc_srdhm(q, q);
    num = tc_ls_add(tc_srdhm(q, r), tc_srdhm(tc_srdhm(q, common_sq), alpha_n));
    denom = tc_ls_add(tc_srdhm(pp, tc_ls_add(tc_ls_add(alpha_i, q), tc_srdhm(alpha_d, common_sq))),
                      tc_srdhm(alpha_f, q));
    recip = tc_ls_one_over_one_plus_x(denom);
    return tc_ls_shl(
        tc_ls_add(tc_srdhm(z_adj, log_2), tc_srdhm(tc_rdivpot(num, ACC_BITS), recip)), 1);
}

void tc_log_softmax_s8(const tc_log_softmax_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->depth;
    int32_t r, c;
    for (r = 0; r < p->rows; r++) {
        const int8_t *x = in + r * depth;
        int8_t *y = out + r * depth;
        int32_t mx = -128;
        uint32_t sum = 0; /* Q12.19; wraps like TFLM's int32 only beyond 4095 maxima */
        int32_t log_sum, lo, adjusted;
        for (c = 0; c < depth; c++) {
            if (x[c] > mx) {
                mx = x[c];
            }
        }
        for (c = 0; c < depth; c++) {
            sum += (uint32_t)p->exp_lut[mx - x[c]]; /* 0 where the difference is below diff_min */
        }
        log_sum = tc_ls_log_q12_to_q5((int32_t)sum);
        lo = tc_requant(
            (int32_t)((uint32_t)log_sum + 0x80000000u), p->reverse_multiplier, p->reverse_shift);
        adjusted = p->diff_min - 1 > lo ? p->diff_min - 1 : lo;
        /* Each output reads only its own input after the row statistics: safe in place. */
        for (c = 0; c < depth; c++) {
            const int32_t d = mx - x[c];
            if (-d > adjusted) {
                const int32_t v = (int32_t)((uint32_t)p->diff_lut[d] - (uint32_t)log_sum);
                y[c] = (int8_t)tc_clamp(tc_rdivpot(v, 22) + 127, -128, 127);
            } else {
                y[c] = -128;
            }
        }
    }
}
