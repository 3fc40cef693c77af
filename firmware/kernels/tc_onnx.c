/* tinycompile runtime: ONNX quantized operators with onnxruntime's arithmetic (see tc_onnx.h).
 * Plain loops: the accumulators are exact int32 sums, as MLAS's are. Convolutions without
 * groups, depthwise ones and GEMMs with zero weight zero points run on the CONV_2D /
 * DEPTHWISE_CONV_2D / FULLY_CONNECTED kernels and their fast paths instead, requantized by
 * tc_qmath.h's ONNX variant, whose integer form falls back on tc_onnx_requant_exact here. */
#include <stdint.h>
#include <string.h>

#include "tc_onnx.h"
#include "tc_qmath.h"

/* x rounded to 24 significant bits, half to even (what a conversion to float32 keeps). */
static uint64_t tc_onnx_round24(uint64_t x)
{
    const uint32_t h = (uint32_t)(x >> 32);
    const int32_t n = h ? 64 - __builtin_clz(h) : (x ? 32 - __builtin_clz((uint32_t)x) : 0);
    uint64_t q, rem, half;
    if (n <= 24) {
        return x;
    }
    q = x >> (n - 24);
    rem = x & ((1ull << (n - 24)) - 1u);
    half = 1ull << (n - 25);
    if (rem > half || (rem == half && (q & 1u))) {
        q++;
    }
    return q << (n - 24);
}

int32_t tc_onnx_requant_exact(int32_t acc, int32_t bits)
{
    /* s = M * 2^-k (M with the implicit bit, or a subnormal's), acc's float32 a (24 bits), the
     * product a * M exactly (below 2^56), rounded to 24 bits: float(float(acc) * s) * 2^k (a
     * result below float32's normal range is far below 1/2: 0 either way; one above its range
     * saturates either way). Then round half to even at 2^k, limited to 2^15. */
    const uint32_t e = ((uint32_t)bits >> 23) & 0xFFu, f = (uint32_t)bits & 0x7FFFFFu;
    const uint64_t m = e ? (f | 0x800000u) : f;
    const int32_t k = e ? 150 - (int32_t)e : 149;
    const uint32_t a = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc;
    const uint64_t p = tc_onnx_round24(tc_onnx_round24(a) * m);
    uint64_t q;
    if (k <= 0) {
        q = p == 0 ? 0 : (k < -15 || p >= (1u << 15)) ? (1u << 15) : p << -k;
    } else if (k >= 57) {
        q = 0; /* p < 2^56 <= 2^(k - 1): below one half */
    } else {
        const uint64_t rem = p & ((1ull << k) - 1u), half = 1ull << (k - 1);
        q = p >> k;
        if (rem > half || (rem == half && (q & 1u))) {
            q++;
        }
    }
    if (q > (1u << 15)) {
        q = 1u << 15;
    }
    return acc < 0 ? -(int32_t)q : (int32_t)q;
}

int32_t tc_onnx_round_clamp(float v, int32_t lo, int32_t hi)
{
    uint32_t bits;
    int32_t exp, shift, q;
    uint32_t mant, rem, half;
    memcpy(&bits, &v, sizeof bits);
    exp = (int32_t)((bits >> 23) & 0xFFu);
    mant = (bits & 0x7FFFFFu) | 0x800000u;
    if (exp == 0) {
        q = 0; /* zero or subnormal: rounds to 0 */
    } else {
        shift = 150 - exp; /* value = mant * 2^-shift */
        if (shift > 24) {
            q = 0; /* below one half */
        } else if (shift <= 0) {
            q = 0x7FFFFFFF; /* |v| >= 2^23: saturates below */
        } else {
            q = (int32_t)(mant >> shift);
            rem = mant & ((1u << shift) - 1u);
            half = 1u << (shift - 1);
            if (rem > half || (rem == half && (q & 1))) {
                q++;
            }
        }
    }
    if (bits >> 31) {
        q = -q;
    }
    return q < lo ? lo : q > hi ? hi : q;
}

int32_t tc_onnx_requant(int32_t acc, float scale, int32_t zp)
{
    float v = (float)acc * scale;
    return tc_onnx_round_clamp(v, -128 - zp, 127 - zp) + zp;
}

void tc_onnx_conv_s8(const tc_onnx_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t cpg = p->in_c / p->groups;   /* input channels per group */
    const int32_t opg = p->out_c / p->groups;  /* output channels per group */
    int32_t b, oy, ox, oc, ky, kx, c;
    for (b = 0; b < p->batches; b++) {
        const int8_t *img = in + (int32_t)b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t y0 = oy * p->stride_h - p->pad_t;
                const int32_t x0 = ox * p->stride_w - p->pad_l;
                for (oc = 0; oc < p->out_c; oc++) {
                    const int32_t c0 = (oc / opg) * cpg;
                    const int8_t *w = p->weights + (int32_t)oc * p->k_h * p->k_w * cpg;
                    int32_t acc = p->bias ? p->bias[oc] : 0, xsum = 0;
                    for (ky = 0; ky < p->k_h; ky++) {
                        const int32_t iy = y0 + ky * p->dil_h;
                        if (iy < 0 || iy >= p->in_h) {
                            continue;
                        }
                        for (kx = 0; kx < p->k_w; kx++) {
                            const int32_t ix = x0 + kx * p->dil_w;
                            const int8_t *px, *wk;
                            if (ix < 0 || ix >= p->in_w) {
                                continue;
                            }
                            px = img + ((int32_t)iy * p->in_w + ix) * p->in_c + c0;
                            wk = w + (ky * p->k_w + kx) * cpg;
                            for (c = 0; c < cpg; c++) {
                                const int32_t xv = (int32_t)px[c] - p->in_zp;
                                acc += xv * (int32_t)wk[c];
                                xsum += xv;
                            }
                        }
                    }
                    if (p->w_zp) { /* real weights w - w_zp: the window's input sum times zp */
                        acc -= p->w_zp[oc] * xsum;
                    }
                    *out++ = (int8_t)tc_onnx_requant(acc, p->scale[oc], p->out_zp);
                }
            }
        }
    }
}

void tc_onnx_gemm_s8(const tc_onnx_gemm_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t r, u, k;
    for (r = 0; r < p->rows; r++) {
        const int8_t *x = in + (int32_t)r * p->depth;
        int32_t xsum = 0;
        for (k = 0; k < p->depth; k++) {
            xsum += (int32_t)x[k] - p->in_zp;
        }
        for (u = 0; u < p->units; u++) {
            const int8_t *w = p->weights + (int32_t)u * p->depth;
            int32_t acc = p->bias ? p->bias[u] : 0;
            for (k = 0; k < p->depth; k++) {
                acc += ((int32_t)x[k] - p->in_zp) * (int32_t)w[k];
            }
            if (p->w_zp) { /* real weights w - w_zp */
                acc -= p->w_zp[u] * xsum;
            }
            *out++ = (int8_t)tc_onnx_requant(acc, p->scale[u], p->out_zp);
        }
    }
}

void tc_onnx_gap_s8(const tc_onnx_gap_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t b, c, i;
    for (b = 0; b < p->batches; b++) {
        const int8_t *img = in + (int32_t)b * p->pixels * p->channels;
        for (c = 0; c < p->channels; c++) {
            int32_t acc = -p->in_zp * p->pixels;
            for (i = 0; i < p->pixels; i++) {
                acc += img[(int32_t)i * p->channels + c];
            }
            *out++ = (int8_t)tc_onnx_requant(acc, p->scale, p->out_zp);
        }
    }
}

/* a * r + t rounded once to float32 (a fused multiply-add) for a small integer a (|a| < 2^8,
 * so a * r is exact in double). With a hardware FMA, the instruction; otherwise the double sum
 * and its exact error (TwoSum), the error deciding the one case the double rounding can get
 * wrong: a double sum exactly halfway between two floats. */
static float tc_onnx_fma_small(int32_t a, float r, float t)
{
#if defined(__FP_FAST_FMAF)
    return __builtin_fmaf((float)a, r, t);
#else
    const double p = (double)a * (double)r, td = (double)t;
    const double s = p + td;
    const double z = s - p;
    const double lo = (p - (s - z)) + (td - z); /* s + lo == p + t exactly */
    float f = (float)s;
    if (lo != 0.0 && f != 0.0f && (double)f != s) {
        uint32_t bits;
        float g;
        memcpy(&bits, &f, sizeof bits);
        /* g: the float on the other side of s */
        bits = ((double)f < s) == !(bits >> 31) ? bits + 1u : bits - 1u;
        memcpy(&g, &bits, sizeof g);
        if ((double)f + (double)g == 2.0 * s && (lo > 0.0) == ((double)g > (double)f)) {
            f = g; /* s was a tie; the exact value lies beyond it, on g's side */
        }
    }
    return f;
#endif
}

void tc_onnx_add_s8(const tc_onnx_add_params_t *p, const int8_t *a, const int8_t *b,
                    int8_t *out)
{
    const int32_t off = p->in_off;
    int32_t i, j = 0;
    for (i = 0; i < p->size; i++) {
        const float t = tc_onnx_fma_small(b[j] + off, p->ratio_b, p->fixed);
        const float v = tc_onnx_fma_small(a[i] + off, p->ratio_a, t);
        out[i] = (int8_t)(tc_onnx_round_clamp(v, p->lo, p->hi) + p->out_off);
        if (++j == p->b_size) {
            j = 0;
        }
    }
}

void tc_onnx_mul_s8(const tc_onnx_mul_params_t *p, const int8_t *a, const int8_t *b,
                    int8_t *out)
{
    int32_t i, j = 0;
    for (i = 0; i < p->size; i++) {
        const int32_t prod = ((int32_t)a[i] - p->a_zp) * ((int32_t)b[j] - p->b_zp);
#if TC_FPU_SP
        /* MLAS: the zero point added in float32 before the rounding (two float32 roundings:
         * -std=c99 contracts nothing into a fused multiply-add) */
        const float v = (float)prod * p->scale + p->out_zp;
        out[i] = (int8_t)(tc_onnx_round_clamp(v, p->lo, p->hi) + p->out_off);
#else
        /* the same, tabulated: the output rises with the product; its 255 thresholds */
        const int32_t *t = p->thresholds;
        int32_t k = 0, step;
        for (step = 128; step > 0; step >>= 1) {
            k += prod >= t[k + step - 1] ? step : 0;
        }
        out[i] = (int8_t)(k - 128);
#endif
        if (++j == p->b_size) {
            j = 0;
        }
    }
}

void tc_onnx_avgpool_s8(const tc_onnx_avgpool_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t b, oy, ox, c, y, x;
    for (b = 0; b < p->batches; b++) {
        const int8_t *img = in + (int32_t)b * p->in_h * p->in_w * p->channels;
        for (oy = 0; oy < p->out_h; oy++) {
            int32_t y0 = oy * p->stride_h - p->pad_t;
            int32_t y1 = y0 + p->k_h < p->in_h ? y0 + p->k_h : p->in_h;
            y0 = y0 > 0 ? y0 : 0;
            for (ox = 0; ox < p->out_w; ox++) {
                int32_t x0 = ox * p->stride_w - p->pad_l;
                int32_t x1 = x0 + p->k_w < p->in_w ? x0 + p->k_w : p->in_w;
                int32_t count;
                x0 = x0 > 0 ? x0 : 0;
                count = p->include_pad ? p->k_h * p->k_w : (y1 - y0) * (x1 - x0);
                for (c = 0; c < p->channels; c++) {
                    float sum = 0.0f, v;
                    for (y = y0; y < y1; y++) {
                        for (x = x0; x < x1; x++) {
                            sum += p->deq[(uint8_t)img[(y * p->in_w + x) * p->channels + c]];
                        }
                    }
                    sum /= (float)count;
                    v = sum / p->y_scale + (float)p->out_zp;
                    *out++ = (int8_t)(tc_onnx_round_clamp(v, p->lo, p->hi) + p->out_off);
                }
            }
        }
    }
}

/* round_half_even(float(((double)e * inv) / sum)) (onnxruntime 1.32's quotient, the product
 * exact in double), saturated to [lo, hi] (lo <= 0 <= hi), given r = float(inv / sum). Most
 * outputs are decided from a = float(e * r) alone: a = Q (1 + d1) (1 + d2) with Q the exact
 * quotient and |d1|, |d2| <= 2^-24 (r and a are normal: r >= 148 / FLT_MAX since sum <= FLT_MAX
 * / 148, and a below 2^-126 returns 0), and onnxruntime's w = float(double(Q)) is within
 * Q 2^-23.9 of Q, so |a - w| < a 2^-22. With A = floor(a 2^22) (a < 512), when A lies farther
 * than 4a + 1 units from every half-integer (2^21 mod 2^22), a and w are on the same side of
 * each and round to the same integer, (A + 2^21) >> 22. Otherwise (a few outputs in 10^4, and
 * exact ties such as two equal maxima at an odd floor(1 / y_scale)) the double arithmetic itself:
 * libgcc's soft-float routines on Cortex-M (IEEE-exact), the FPU on the host. */
static int32_t tc_onnx_softmax_q(float e, float r, double inv, double sum, int32_t lo, int32_t hi)
{
    const float a = e * r;
    uint32_t bits, fx, frac, dist;
    int32_t ex;
    memcpy(&bits, &a, sizeof bits);
    ex = (int32_t)(bits >> 23); /* a >= 0 */
    if (ex < 125) {
        return 0; /* a < 1/4 (or subnormal): Q < 1/2 */
    }
    if (ex >= 136) {
        return hi; /* a >= 512: Q > 511, saturates */
    }
    fx = (bits & 0x7FFFFFu) | 0x800000u;
    fx = ex >= 128 ? fx << (ex - 128) : fx >> (128 - ex); /* A = floor(a 2^22) < 2^31 */
    frac = fx & 0x3FFFFFu;
    dist = frac >= 0x200000u ? frac - 0x200000u : 0x200000u - frac;
    if (dist > (fx >> 20) + 2u) {
        const int32_t q = (int32_t)((fx + 0x200000u) >> 22);
        return q > hi ? hi : q;
    }
    return tc_onnx_round_clamp((float)(((double)e * inv) / sum), lo, hi);
}

void tc_onnx_softmax_s8(const tc_onnx_softmax_params_t *p, const int8_t *in, int8_t *out)
{
    const double inv = (double)p->y_scale;
    int32_t r, i;
    for (r = 0; r < p->rows; r++) {
        const int8_t *x = in + (int32_t)r * p->depth;
        int8_t *y = out + (int32_t)r * p->depth;
        int32_t mx = -128;
        float sum = 0.0f, rcp;
        for (i = 0; i < p->depth; i++) {
            mx = x[i] > mx ? x[i] : mx;
        }
        for (i = 0; i < p->depth; i++) {
            sum += p->exp_table[mx - x[i]];
        }
        rcp = p->y_scale / sum; /* sum >= exp_table[0] >= 1 */
        for (i = 0; i < p->depth; i++) {
            const int32_t q = tc_onnx_softmax_q(p->exp_table[mx - x[i]], rcp, inv, (double)sum,
                                                p->lo, p->hi);
            y[i] = (int8_t)(q + p->out_off);
        }
    }
}
