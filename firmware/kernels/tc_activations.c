/* tinycompile runtime: activations, softmax, quantize/dequantize (portable C99).
 *
 * Bit-exact with TensorFlow Lite Micro's int8 reference kernels; see tc_activations.h for the
 * split between compile-time tables and device arithmetic. The fixed-point helpers below
 * follow gemmlowp's documented semantics (SaturatingRoundingMultiplyByPOT, RoundingHalfSum,
 * one_over_one_plus_x_for_x_in_0_1); the Python twin is tinycompile/passes/fixedpoint.py.
 *
 * Operators: the table-driven int8 activations (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6,
 * LEAKY_RELU, int8 QUANTIZE: tc_lut_s8), DEQUANTIZE, float QUANTIZE, SOFTMAX (TFLM's
 * reference/softmax.h int8 path). Kept as one family file: the table ops are one kernel and the
 * rest are a few lines each. One fast path: on the Cortex-M55 (Helium, TC_MVE) tc_lut_s8 looks
 * up 16 bytes per VLDRB gather.
 */
#include "tc_activations.h"

#include <stddef.h>
#include <string.h>

#include "tc_kernel_util.h"
#include "tc_qmath.h"

void tc_lut_s8(const tc_lut_params_t *p, const int8_t *in, int8_t *out)
{
    const int8_t *lut = p->lut;
    uint32_t n = p->size;
    uint32_t i = 0;
#if TC_MVE
    /* 16 lookups per VLDRB gather (byte offsets: the inputs as uint8), the last vector under a
     * VCTP8 predicate; in place is fine (each vector is read before it is written) */
    for (; n >= 16; n -= 16, in += 16, out += 16) {
        vstrbq_s8(out, vldrbq_gather_offset_s8(lut, vldrbq_u8((const uint8_t *)in)));
    }
    if (n > 0) {
        const mve_pred16_t pr = vctp8q(n);
        const uint8x16_t idx = vldrbq_z_u8((const uint8_t *)in, pr);
        vstrbq_p_s8(out, vldrbq_gather_offset_z_s8(lut, idx, pr), pr);
    }
    return;
#endif
    for (; i + 4 <= n; i += 4) {
        int8_t a = lut[(uint8_t)in[i]];
        int8_t b = lut[(uint8_t)in[i + 1]];
        int8_t c = lut[(uint8_t)in[i + 2]];
        int8_t d = lut[(uint8_t)in[i + 3]];
        out[i] = a;
        out[i + 1] = b;
        out[i + 2] = c;
        out[i + 3] = d;
    }
    for (; i < n; i++) {
        out[i] = lut[(uint8_t)in[i]];
    }
}

int tc_lut_checked_s8(const tc_lut_checked_params_t *p, const int8_t *in, int8_t *out)
{
    const int8_t *lut = p->lut;
    const int32_t lo = p->min_input;
    for (uint32_t i = 0; i < p->size; i++) {
        const int8_t x = in[i]; /* read before the write: in place is fine */
        if (x < lo) {
            return 1;
        }
        out[i] = lut[(uint8_t)x];
    }
    return 0;
}

void tc_dequantize_s8_f32(const tc_dequantize_params_t *p, const int8_t *in, float *out)
{
    uint32_t i;
    for (i = p->size; i > 0; i--) { /* backwards: in place, out may start at in */
        const uint32_t bits = p->lut_bits[(uint8_t)in[i - 1]];
        memcpy(&out[i - 1], &bits, sizeof(float));
    }
}

/* std::round for |q| < 2^24: halves away from zero, without libm. */
static int32_t tc_round_half_away(float q)
{
    int32_t t = (int32_t)q;   /* truncates toward zero */
    float frac = q - (float)t; /* exact: the fractional part of q */
    if (frac >= 0.5f) {
        t += 1;
    } else if (frac <= -0.5f) {
        t -= 1;
    }
    return t;
}

void tc_quantize_f32_s8(const tc_quantize_params_t *p, const float *in, int8_t *out)
{
    float scale;
    uint32_t i;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    /* Forward order, one read before each (narrower) write: safe in place. */
    for (i = 0; i < p->size; i++) {
        float q = in[i] / scale;
        int32_t r;
        if (q >= 1024.0f) {
            r = 1024; /* saturates to 127 below */
        } else if (q > -1024.0f) {
            r = tc_round_half_away(q);
        } else {
            r = -1024; /* -inf, very negative and NaN: -128 (what TFLM gives on x86) */
        }
        out[i] = (int8_t)tc_clamp(r + p->zero_point, -128, 127);
    }
}

/* 16x8 interface: float32 -> int16 as above with the int16 range (|q| capped at 65536, beyond
 * which the clamp decides anyway; NaN gives -32768 as TFLM on x86), and int16 -> float32 as
 * scale * (q - zero_point) in float32: v is exact in float, so this single rounding of the exact
 * product equals TFLM's float(double(scale) * v). */
void tc_quantize_f32_s16(const tc_quantize_params_t *p, const float *in, int16_t *out)
{
    float scale;
    uint32_t i;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    for (i = 0; i < p->size; i++) { /* one read before each narrower write: safe in place */
        float q = in[i] / scale;
        int32_t r;
        if (q >= 65536.0f) {
            r = 65536;
        } else if (q > -65536.0f) {
            r = tc_round_half_away(q);
        } else {
            r = -65536;
        }
        out[i] = (int16_t)tc_clamp(r + p->zero_point, -32768, 32767);
    }
}

void tc_dequantize_s16_f32(const tc_quantize_params_t *p, const int16_t *in, float *out)
{
    float scale;
    uint32_t i;
    memcpy(&scale, &p->scale_bits, sizeof scale);
    for (i = p->size; i > 0; i--) { /* backwards: in place, out may start at in */
        int16_t q; /* read through memcpy: in and out may be the same bytes */
        memcpy(&q, &in[i - 1], sizeof q);
        out[i - 1] = scale * (float)((int32_t)q - p->zero_point);
    }
}

/* ------------------------------------------------------------------ softmax */

static int32_t tc_wadd(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t tc_wsub(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* SaturatingRoundingMultiplyByPOT<e> for 0 < e < 31: saturating left shift. */
static int32_t tc_sat_shl(int32_t x, int e)
{
    int32_t threshold = (int32_t)((1u << (31 - e)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << e);
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out: Newton-Raphson in Q2.29. */
static int32_t tc_one_over_one_plus_x(int32_t a)
{
    int64_t s = (int64_t)a + INT32_MAX;
    int32_t half_den = (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
    int32_t x = tc_wadd(1515870810, tc_srdhm(half_den, -1010580540));
    int i;
    for (i = 0; i < 3; i++) {
        int32_t one_minus = tc_wsub(1 << 29, tc_srdhm(half_den, x));
        x = tc_wadd(x, tc_sat_shl(tc_srdhm(x, one_minus), 2));
    }
    return tc_sat_shl(x, 1);
}

/* int8 softmax over the last axis (reference_ops::Softmax<int8_t, OutputT>); OutputT is int8
 * (out8) or int16 (out16): exponent = bits over unit + 31 - bits of OutputT, offset OutputT's
 * minimum. Inlined into each entry, so the int8 one keeps its own loop. */
TC_INLINE void tc_softmax_s8_any(const tc_softmax_params_t *p, const int8_t *in, int8_t *out8,
                                 int16_t *out16)
{
    const int32_t *lut = p->exp_lut;
    const int out_bits = out16 ? 16 : 8;
    const int32_t out_min = out16 ? -32768 : -128, out_max = out16 ? 32767 : 127;
    uint32_t depth = p->depth;
    uint32_t r, c;
    for (r = 0; r < p->rows; r++) {
        const int8_t *x = in + (size_t)r * depth;
        int32_t mx = -128;
        uint32_t sum = 0; /* Q12.19, wraps like TFLM's int32 beyond 4095 elements at the max */
        int headroom_plus_one, exponent;
        int32_t recip;
        for (c = 0; c < depth; c++) {
            if (x[c] > mx) {
                mx = x[c];
            }
        }
        for (c = 0; c < depth; c++) {
            sum += (uint32_t)tc_rdivpot(lut[mx - x[c]], 12);
        }
        /* GetReciprocal(sum, 12): 1/sum as a Q0.31 scale and a power of two. */
        headroom_plus_one = tc_clz32(sum);
        recip = tc_one_over_one_plus_x(
            (int32_t)((headroom_plus_one < 32 ? sum << headroom_plus_one : 0u) - 0x80000000u));
        exponent = (12 - headroom_plus_one) + 31 - out_bits;
        if (exponent > 31) {
            exponent = 31; /* only reachable when the sum overflowed (TFLM aborts there) */
        }
        /* Each output reads only its own input after the row statistics: safe in place (an
         * int16 output over an int8 input is never planned in place). */
        for (c = 0; c < depth; c++) {
            int32_t v = tc_rdivpot(tc_srdhm(recip, lut[mx - x[c]]), exponent) + out_min;
            v = tc_clamp(v, out_min, out_max);
            if (out16) {
                out16[(size_t)r * depth + c] = (int16_t)v;
            } else {
                out8[(size_t)r * depth + c] = (int8_t)v;
            }
        }
    }
}

void tc_softmax_s8(const tc_softmax_params_t *p, const int8_t *in, int8_t *out)
{
    tc_softmax_s8_any(p, in, out, NULL);
}

void tc_softmax_s8_s16(const tc_softmax_params_t *p, const int8_t *in, int16_t *out)
{
    tc_softmax_s8_any(p, in, NULL, out);
}
