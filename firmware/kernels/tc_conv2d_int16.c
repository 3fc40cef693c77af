/* tinycompile runtime: CONV_2D, 16x8 (tc_conv_s16: int16 activations, int8 weights, int64 bias;
 * parameters in tc_conv2d.h).
 *
 * TFLM's int16 ConvPerChannel (reference/integer_ops/conv.h). Per output pixel the valid tap
 * range is computed once (tc_tap_range), then per channel an int64 sum over the taps inside the
 * image (padding contributes nothing) of int16 x int8 products (tc_dot_s16_s8: exact, in int32
 * blocks), plus the int64 bias, requantized by tc_requant64 and clamped (tc_out_s16). One
 * portable path on every core; the int8 kernel is tc_conv2d.c.
 */
#include <stdint.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

void tc_conv_s16(const tc_conv_s16_params_t *p, const int16_t *in, int16_t *out)
{
    const int32_t kc = p->in_c / p->groups, ocg = p->out_c / p->groups;
    const int32_t wstride = p->k_h * p->k_w * kc;
    int32_t b, oy, ox, g, oc, ky, kx;
    for (b = 0; b < p->batches; b++) {
        const int16_t *img = in + b * p->in_h * p->in_w * p->in_c;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            tc_tap_range(y0, p->dil_h, p->k_h, p->in_h, &ky0, &ky1);
            for (ox = 0; ox < p->out_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                tc_tap_range(x0, p->dil_w, p->k_w, p->in_w, &kx0, &kx1);
                for (g = 0; g < p->groups; g++) {
                    for (oc = g * ocg; oc < (g + 1) * ocg; oc++) {
                        const int8_t *w = p->weights + oc * wstride;
                        int64_t acc = p->bias[oc];
                        for (ky = ky0; ky < ky1; ky++) {
                            const int16_t *row =
                                img + ((y0 + ky * p->dil_h) * p->in_w) * p->in_c + g * kc;
                            for (kx = kx0; kx < kx1; kx++) {
                                acc += tc_dot_s16_s8(row + (x0 + kx * p->dil_w) * p->in_c,
                                                     w + (ky * p->k_w + kx) * kc, kc, 1);
                            }
                        }
                        *out++ = tc_out_s16(acc, p->rm[oc], p->ts[oc], p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
