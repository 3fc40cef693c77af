/* tinycompile runtime: ONNX quantized operators with onnxruntime's arithmetic (see tc_onnx.h).
 * Plain loops, no fast paths: the accumulators are exact int32 sums, as MLAS's are. */
#include <stdint.h>
#include <string.h>

#include "tc_onnx.h"

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
                    int32_t acc = p->bias ? p->bias[oc] : 0;
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
                                acc += ((int32_t)px[c] - p->in_zp) * (int32_t)wk[c];
                            }
                        }
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
        for (u = 0; u < p->units; u++) {
            const int8_t *w = p->weights + (int32_t)u * p->depth;
            int32_t acc = p->bias ? p->bias[u] : 0;
            for (k = 0; k < p->depth; k++) {
                acc += ((int32_t)x[k] - p->in_zp) * (int32_t)w[k];
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
        out[i] = (int8_t)tc_onnx_requant(prod, p->scale, p->out_zp);
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

void tc_onnx_softmax_s8(const tc_onnx_softmax_params_t *p, const int8_t *in, int8_t *out)
{
    int32_t r, i;
    for (r = 0; r < p->rows; r++) {
        const int8_t *x = in + (int32_t)r * p->depth;
        int8_t *y = out + (int32_t)r * p->depth;
        int32_t mx = -128, q;
        float sum = 0.0f;
        for (i = 0; i < p->depth; i++) {
            mx = x[i] > mx ? x[i] : mx;
        }
        for (i = 0; i < p->depth; i++) {
            sum += p->exp_table[mx - x[i]];
        }
        if (sum == 0.0f) {
            return; /* as onnxruntime: the rest of the output is left as it was */
        }
        for (i = 0; i < p->depth; i++) {
            const float e = p->exp_table[mx - x[i]];
            q = tc_onnx_round_clamp((e * p->y_scale) / sum, -0x40000000, 0x40000000) + p->out_zp;
            q = q > 255 ? 255 : q;
            y[i] = p->uint8 ? (int8_t)(q - 128) : (int8_t)(uint8_t)(q & 0xFF);
        }
    }
}
