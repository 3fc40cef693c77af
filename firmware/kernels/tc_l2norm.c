/* tinycompile runtime: L2_NORMALIZATION, int8 (tc_l2norm_s8; see tc_l2norm.h).
 *
 * Matches TensorFlow Lite Micro's reference kernel (reference/integer_ops/l2normalization.h):
 * the reciprocal square root of each row's sum of squares is computed with the integer
 * Newton-Raphson iteration of GetInvSqrtQuantizedMultiplierExp (kernels/internal/common.h),
 * in gemmlowp Q3.28 fixed point, then each element is requantized with it (output scale
 * 2^-7). The Python twin is tinycompile/quant/fixedpoint.py's inv_sqrt_multiplier_exp.
 * No fast paths.
 */
#include "tc_l2norm.h"

#include "tc_qmath.h"

/* gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0 (saturating left shift). */
static int32_t tc_l2_sat_shl(int32_t x, int e)
{
    const int32_t threshold = (int32_t)(((uint32_t)1 << (31 - e)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << e);
}

/* 1 / sqrt(x) as multiplier * 2^shift (shift already negated: TFLM's kReverseShift). */
static void tc_l2_inv_sqrt(int32_t x, int32_t *multiplier, int32_t *shift)
{
    const int32_t three_halves = ((int32_t)1 << 28) + ((int32_t)1 << 27); /* 1.5 in Q3.28 */
    const int32_t half_sqrt2 = 1518500250;                               /* Q0.31 */
    int32_t s = 11;
    int32_t clz = 0;
    int32_t pairs;
    int32_t half_x;
    int32_t y = (int32_t)1 << 28; /* 1.0 in Q3.28 */
    int32_t m;
    int i;

    if (x <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    while (x >= ((int32_t)1 << 29)) {
        x /= 4;
        ++s;
    }
    while (((uint32_t)x << clz) < 0x80000000u) {
        ++clz;
    }
    pairs = (clz - 1) / 2 - 1;
    s -= pairs;
    x = (int32_t)((uint32_t)x << (2 * pairs));
    half_x = tc_rdivpot(x >> 1, 1);
    for (i = 0; i < 5; ++i) {
        const int32_t y3 = tc_l2_sat_shl(tc_srdhm(tc_srdhm(y, y), y), 6);
        const int32_t d = (int32_t)((uint32_t)tc_srdhm(three_halves, y) -
                                    (uint32_t)tc_srdhm(half_x, y3));
        y = tc_l2_sat_shl(d, 3);
    }
    m = tc_srdhm(y, half_sqrt2);
    if (s < 0) {
        m = (int32_t)((uint32_t)m << (-s));
        s = 0;
    }
    *multiplier = m;
    *shift = -s;
}

/* MultiplyByQuantizedMultiplier for any multiplier (TFLM's two roundings). */
static int32_t tc_l2_mbqm(int32_t x, int32_t m, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return tc_rdivpot(tc_srdhm((int32_t)((uint32_t)x << left), m), right);
}

void tc_l2norm_s8(const tc_l2norm_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t r;
    int32_t c;

    for (r = 0; r < p->rows; ++r) {
        const int8_t *x = in + r * p->depth;
        int8_t *y = out + r * p->depth;
        int32_t acc = 0;
        int32_t m;
        int32_t s;
        for (c = 0; c < p->depth; ++c) {
            const int32_t v = x[c] - p->in_zero_point;
            acc += v * v;
        }
        tc_l2_inv_sqrt(acc, &m, &s);
        for (c = 0; c < p->depth; ++c) { /* x may be y (in place): read before write */
            const int32_t v = x[c] - p->in_zero_point;
            y[c] = (int8_t)tc_clamp(tc_l2_mbqm(v, m, s + 7), -128, 127);
        }
    }
}
