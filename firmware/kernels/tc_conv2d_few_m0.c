/* tinycompile runtime: CONV_2D over few input channels on ARMv6-M (Cortex-M0/M0+):
 * tc_conv_few_s8_m0, the whole layer of tc_conv_few_s8 (tc_conv2d_few.c, tc_conv2d.h).
 *
 * ARMv6-M has no SIMD: a MAC is a MULS and an ADD at best, so the work is in feeding
 * tc_m0_dot14 (tc_conv2d_m0.c: four output channels per input load, accumulators in r8-r11)
 * long runs. Every output pixel's window (k_h * k_w * in_c values) is copied once to a stack
 * buffer, contiguous in the model's weight layout ([k_h][k_w][in_c]), the input zero point at
 * taps outside the image (they then add w * (zero_point + in_offset) = 0 to bias_eff, as the
 * reference's skipped tap); then each four output channels take one dot product over the
 * whole window, and the outputs one tc_m0_outn call per block of up to sixteen. Window rows
 * inside the image are copied a word at a time where source and buffer share their alignment
 * (ARMv6-M traps unaligned words), else bytes.
 *
 * The window buffer is the layer's k_h * 4 * ceil(k_w * in_c / 4) <= 512 bytes at most
 * (ops/few.py), within every board's stack reserve.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if defined(__ARM_ARCH_6M__)

#define TC_FEW_M0_WIN 512

/* n bytes from src to dst (n small: a window row). */
static void tc_few_m0_copy(int8_t *dst, const int8_t *src, int32_t n)
{
    if ((((uintptr_t)dst ^ (uintptr_t)src) & 3) == 0) {
        for (; n > 0 && ((uintptr_t)src & 3); n--) {
            *dst++ = *src++;
        }
        for (; n >= 4; n -= 4, src += 4, dst += 4) {
            *(uint32_t *)(void *)dst = *(const uint32_t *)(const void *)src;
        }
    }
    for (; n > 0; n--) {
        *dst++ = *src++;
    }
}

/* The window of the output whose top-left tap is (iy0, ix0) into win as [k_h][k_w * in_c]. */
static void tc_few_m0_window(const tc_conv_params_t *p, const int8_t *img, int32_t iy0,
                             int32_t ix0, int8_t *win)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, R = p->k_w * C;
    const int zp = (int)(-p->in_offset);
    int32_t ky, kx0, kx1;
    tc_tap_range(ix0, 1, p->k_w, W, &kx0, &kx1);
    for (ky = 0; ky < p->k_h; ky++, win += R) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= H) {
            memset(win, zp, (size_t)R);
            continue;
        }
        if (kx0 > 0 || kx1 < p->k_w) {
            memset(win, zp, (size_t)R);
        }
        tc_few_m0_copy(win + kx0 * C, img + (iy * W + ix0 + kx0) * C, (kx1 - kx0) * C);
    }
}

void tc_conv_few_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c;
    const int32_t K = p->k_h * p->k_w * C;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    uint32_t buf[TC_FEW_M0_WIN / 4];
    int8_t *win = (int8_t *)buf;
    int32_t acc[TC_M0_OUTN], n, oy, ox, oc, i, k;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            const int32_t iy0 = oy * p->stride_h - p->pad_h;
            for (ox = 0; ox < p->out_w; ox++, out += OC) {
                tc_few_m0_window(p, img, iy0, ox * p->stride_w - p->pad_w, win);
                for (oc = 0, k = 0; oc + 3 < OC; oc += 4) {
                    int32_t *const a = acc + k;
                    a[0] = p->bias_eff[oc];
                    a[1] = p->bias_eff[oc + 1];
                    a[2] = p->bias_eff[oc + 2];
                    a[3] = p->bias_eff[oc + 3];
                    tc_m0_dot14(win, p->weights + oc * K, K, K, a);
                    k += 4;
                    if (k == TC_M0_OUTN || oc + 7 >= OC) { /* one requantization call a block */
                        const int32_t c0 = oc + 4 - k;
                        tc_m0_outn(acc, p->mult + c0, p->shift + c0, oo, lo, hi, out + c0, k);
                        k = 0;
                    }
                }
                for (; oc < OC; oc++) {
                    const int8_t *w = p->weights + oc * K;
                    int32_t acc = p->bias_eff[oc];
                    for (i = 0; i < K; i++) {
                        acc += win[i] * w[i];
                    }
                    out[oc] = tc_m0_out1(acc, p->mult[oc], p->shift[oc], oo, lo, hi);
                }
            }
        }
    }
}

#endif /* __ARM_ARCH_6M__ */
