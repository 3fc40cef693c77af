/* tinycompile runtime: TRANSPOSE_CONV, int8 (tc_transpose_conv_s8) and 16x8
 * (tc_transpose_conv_s16); see tc_transpose_conv.h.
 *
 * Matches TensorFlow Lite Micro's reference int8 TransposeConv
 * (reference/integer_ops/transpose_conv.h). TFLM scatters each input pixel into an int32
 * scratch buffer the size of the output; here each output element gathers the same products
 * instead (the taps fy, fx whose input row (oy + pad_h - fy) / stride_h and column are whole
 * and inside the input), so the int32 sums are the same integers, no scratch buffer is needed
 * and the output is written once. Then bias, per-channel requantization (tc_requant), output
 * zero point and clamp, as TFLM.
 *
 * The 16x8 kernel gathers the same way into an int64 sum (TFLM's int64 scratch), adds the int64
 * bias and requantizes with tc_requant64 (TFLM's 64-bit MultiplyByQuantizedMultiplier).
 *
 * Fast path: tc_dot_off_s8 (tc_kernel_util.h) has a DSP variant (same int32 sums).
 */
#include <stdint.h>

#include "tc_kernel_util.h"
#include "tc_qmath.h"
#include "tc_transpose_conv.h"

/* First tap t (0 <= t < k) with o + pad - t a non-negative multiple of stride whose quotient
 * is below n, or k when none; taps then advance by stride. *first gets that input index. */
static int32_t tc_first_tap(int32_t o, int32_t pad, int32_t stride, int32_t k, int32_t n,
                            int32_t *first)
{
    const int32_t pos = o + pad; /* input index i contributes through tap pos - i * stride */
    int32_t i = pos / stride;    /* largest i with tap >= 0 (pos >= 0) */
    if (pos < 0) {
        return k;
    }
    if (i > n - 1) {
        i = n - 1;
    }
    *first = i;
    return pos - i * stride;
}

void tc_transpose_conv_s8(const tc_transpose_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, KW = p->k_w;
    const int32_t row = p->in_w * C, img = p->in_h * row, wtap = KW * C;
    int32_t b, oy, ox, oc;
    for (b = 0; b < p->batches; b++) {
        const int8_t *x = in + b * img;
        for (oy = 0; oy < p->out_h; oy++) {
            int32_t iy0 = 0;
            const int32_t fy0 =
                tc_first_tap(oy, p->pad_h, p->stride_h, p->k_h, p->in_h, &iy0);
            for (ox = 0; ox < p->out_w; ox++) {
                int32_t ix0 = 0;
                const int32_t fx0 =
                    tc_first_tap(ox, p->pad_w, p->stride_w, KW, p->in_w, &ix0);
                for (oc = 0; oc < OC; oc++) {
                    const int8_t *w = p->weights + oc * p->k_h * wtap;
                    int32_t acc = 0, fy, iy, fx, ix;
                    for (fy = fy0, iy = iy0; fy < p->k_h && iy >= 0; fy += p->stride_h, iy--) {
                        for (fx = fx0, ix = ix0; fx < KW && ix >= 0; fx += p->stride_w, ix--) {
                            acc = tc_dot_off_s8(x + iy * row + ix * C, w + fy * wtap + fx * C, C,
                                                p->in_offset, acc);
                        }
                    }
                    if (p->bias) {
                        acc += p->bias[oc];
                    }
                    *out++ = tc_out_s8(acc, p->mult[oc], p->shift[oc], p->out_offset,
                                       p->act_min, p->act_max);
                }
            }
        }
    }
}

void tc_transpose_conv_s16(const tc_transpose_conv_s16_params_t *p, const int16_t *in,
                           int16_t *out)
{
    const int32_t C = p->in_c, OC = p->out_c, KW = p->k_w;
    const int32_t row = p->in_w * C, img = p->in_h * row, wtap = KW * C;
    int32_t b, oy, ox, oc, c;
    for (b = 0; b < p->batches; b++) {
        const int16_t *x = in + b * img;
        for (oy = 0; oy < p->out_h; oy++) {
            int32_t iy0 = 0;
            const int32_t fy0 =
                tc_first_tap(oy, p->pad_h, p->stride_h, p->k_h, p->in_h, &iy0);
            for (ox = 0; ox < p->out_w; ox++) {
                int32_t ix0 = 0;
                const int32_t fx0 =
                    tc_first_tap(ox, p->pad_w, p->stride_w, KW, p->in_w, &ix0);
                for (oc = 0; oc < OC; oc++) {
                    const int8_t *w = p->weights + oc * p->k_h * wtap;
                    int64_t acc = 0;
                    int32_t fy, iy, fx, ix, y;
                    for (fy = fy0, iy = iy0; fy < p->k_h && iy >= 0; fy += p->stride_h, iy--) {
                        for (fx = fx0, ix = ix0; fx < KW && ix >= 0; fx += p->stride_w, ix--) {
                            const int16_t *xi = x + iy * row + ix * C;
                            const int8_t *wi = w + fy * wtap + fx * C;
                            for (c = 0; c < C; c++) {
                                acc += (int32_t)xi[c] * wi[c];
                            }
                        }
                    }
                    if (p->bias) {
                        acc += p->bias[oc];
                    }
                    y = tc_requant64(acc, p->rm[oc], p->ts[oc]);
                    *out++ = (int16_t)tc_clamp(y, p->act_min, p->act_max);
                }
            }
        }
    }
}
