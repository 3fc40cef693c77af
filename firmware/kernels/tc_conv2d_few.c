/* tinycompile runtime: CONV_2D over few input channels (tc_conv_few_s8; parameters, the
 * weight layout wfew and when the compiler chooses it: tc_conv2d.h, tinycompile/ops/few.py):
 * the entry point and the portable path.
 *
 * Matches TensorFlow Lite Micro's reference ConvPerChannel (reference/integer_ops/conv.h), as
 * tc_conv_s8 does: int32 accumulation of filter * (input - input_zero_point) over the taps
 * inside the image, plus bias, then tc_requant_conv, output zero point, activation clamp.
 * The portable path below is that formula, one output at a time, reading the weights from
 * wfew (so that host builds check the layout the fast paths read); windows inside the image
 * start from bias_eff and add pure products.
 *
 * Fast paths: Cortex-M4/M7 (TC_DSP) tc_conv2d_few_dsp.c: window rows read in place as words,
 * SXTB16 + SMLAD against the int16 weight pairs of wfew, four output channels per pass;
 * ARMv6-M tc_conv2d_few_m0.c. Both are entered from here.
 */
#include <stdint.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if !TC_DSP && !defined(__ARM_ARCH_6M__)
/* Position in wfew of value e (= kx * in_c + c) of filter row ky, channel k of block b. */
static int32_t tc_few_at(int32_t b, int32_t ky, int32_t e, int32_t k, int32_t kh, int32_t g)
{
    static const uint8_t pos[4] = {0, 2, 1, 3};
    return ((b * kh + ky) * g + (e >> 2)) * 16 + 4 * k + pos[e & 3];
}

static void tc_conv_few_portable(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t KH = p->k_h, KW = p->k_w, G = (KW * C + 3) / 4;
    int32_t n, oy, ox, oc;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            int32_t ky0, ky1;
            tc_tap_range(iy0, p->dil_h, KH, H, &ky0, &ky1);
            for (ox = 0; ox < p->out_w; ox++, out += OC) {
                const int32_t ix0 = ox * p->stride_w - p->pad_w;
                int32_t kx0, kx1;
                tc_tap_range(ix0, 1, KW, W, &kx0, &kx1);
                {
                    const int full = ky0 == 0 && ky1 == KH && kx0 == 0 && kx1 == KW;
                    const int32_t off = full ? 0 : p->in_offset;
                    for (oc = 0; oc < OC; oc++) {
                        int32_t acc = full ? p->bias_eff[oc] : p->bias ? p->bias[oc] : 0;
                        int32_t ky, e;
                        for (ky = ky0; ky < ky1; ky++) {
                            const int8_t *row = img + ((iy0 + ky * p->dil_h) * W + ix0) * C;
                            for (e = kx0 * C; e < kx1 * C; e++) {
                                acc += (row[e] + off) *
                                       p->wfew[tc_few_at(oc >> 2, ky, e, oc & 3, KH, G)];
                            }
                        }
                        out[oc] = tc_out_s8(acc, p->mult[oc], p->shift[oc], p->out_offset,
                                            p->act_min, p->act_max);
                    }
                }
            }
        }
    }
}
#endif

void tc_conv_few_s8(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
#if defined(__ARM_ARCH_6M__)
    tc_conv_few_s8_m0(p, in, out); /* tc_conv2d_few_m0.c */
#elif TC_DSP
#if TC_MVE
    if (tc_conv_s8_mve(p, in, out)) { /* tc_conv2d_mve.c: the Helium GEMM */
        return;
    }
#endif
    tc_conv_few_s8_dsp(p, in, out); /* tc_conv2d_few_dsp.c */
#else
    tc_conv_few_portable(p, in, out);
#endif
}
