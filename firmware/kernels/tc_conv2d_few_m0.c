/* tinycompile runtime: CONV_2D over few input channels on ARMv6-M (Cortex-M0/M0+):
 * tc_conv_few_s8_m0, the whole layer of tc_conv_few_s8 (tc_conv2d_few.c, tc_conv2d.h).
 *
 * ARMv6-M has no SIMD: a MAC is a MULS and an ADD at best, so the work is in feeding a
 * four-channel dot product (one input load for four weights, accumulators in r8-r11) long runs
 * and copying the input as little as possible. Per output row, the k_h input rows its pixels
 * read are copied once into a band on the stack, the input zero point in the padding (in runs
 * of as many pixels as 512 bytes hold, for wide inputs); then each four output channels of a
 * pixel take one tc_few_m0_dot14r over its window's k_h rows where they lie in the band.
 * The input is copied k_h / stride_h times, not k_h * k_w / (stride_h * stride_w) times as a
 * window per pixel would (the previous way: the speech layer's 10x8 stride-2 windows 16%
 * slower). The price is a band row's end, 11 instructions every four output channels: past
 * about 32 output channels a window copy per pixel would cost less (48 channels over 10x8:
 * 3% more instructions through bands); one path is kept for its code (1 KB of flash less)
 * and its stack (the buffer in one frame).
 * Taps outside the image hold the zero point: they add w * (zero_point + in_offset) = 0 to
 * bias_eff, as the reference's skipped tap. Outputs are requantized one tc_m0_outn call per
 * block of up to sixteen channels.
 *
 * The band is at most 512 bytes, within every board's stack reserve: a band of one pixel is
 * k_h rows of 4 * ceil(k_w * in_c / 4) bytes at most, which ops/few.py keeps within it.
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if defined(__ARM_ARCH_6M__)

#define TC_FEW_M0_BAND 512

/* ------------------------------------------------------------------- band of rows */

/* a[k] += sum_{r < rows} sum_{i < n} x[r * xs + i] * w[k * ws + r * n + i], k = 0..3 (n >= 1,
 * rows >= 1): tc_m0_dot14 over a window whose rows lie xs apart (the band below) instead of
 * one run. Same element step (14.5 instructions per element, 4 MACs); a row's end costs 11: x and
 * the four weight pointers moved to the next row's end, the index reset to -n. Naked (AAPCS:
 * x, w, ws, n in r0-r3; a, rows, xs on the stack, rows' slot then holding x's last end). */
__attribute__((naked, noinline)) static void
tc_few_m0_dot14r(const int8_t *x TC_M0_ARG, const int8_t *w TC_M0_ARG, int32_t ws TC_M0_ARG,
                 int32_t n TC_M0_ARG, int32_t *a TC_M0_ARG, int32_t rows TC_M0_ARG,
                 int32_t xs TC_M0_ARG)
{
    __asm__(".syntax unified\n\t"
            TC_M0_ENTER
            TC_M0_A_LOAD
            "adds r0, r0, r3\n\t" /* x and the weight rows at their first row's end */
            "adds r1, r1, r3\n\t"
            "adds r5, r1, r2\n\t"
            "adds r6, r5, r2\n\t"
            "adds r7, r6, r2\n\t"
            "ldr r4, [sp, #44]\n\t" /* xs */
            "mov r12, r4\n\t"
            "ldr r2, [sp, #40]\n\t" /* rows: x's end after the last row */
            "muls r2, r4\n\t"
            "adds r2, r0, r2\n\t"
            "str r2, [sp, #40]\n\t"
            "negs r3, r3\n\t"
            "mov lr, r3\n"
            "4:\n\t"
            TC_M0_DOT14_RUN
            "add r0, r12\n\t" /* next row */
            "mov r3, lr\n\t"
            "subs r1, r1, r3\n\t"
            "subs r5, r5, r3\n\t"
            "subs r6, r6, r3\n\t"
            "subs r7, r7, r3\n\t"
            "ldr r2, [sp, #40]\n\t"
            "cmp r0, r2\n\t"
            "bne 4b\n\t"
            TC_M0_A_STORE
            TC_M0_LEAVE
            ".syntax divided");
}

/* n bytes from src to dst (a band row): dst is brought to a word boundary a byte at a time,
 * then words, copied as they are where src shares that alignment, else each built from two
 * aligned source words with shifts (ARMv6-M traps an unaligned LDR; little-endian). The
 * shifted copy reads only aligned words holding some byte of src[0..n): memory is
 * word-granular, so nothing outside the tensor's own words is read. */
static void tc_few_m0_rowcopy(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n > 0 && ((uintptr_t)dst & 3); n--) {
        *dst++ = *src++;
    }
    if (n >= 4) {
        const uint32_t r = (uint32_t)((uintptr_t)src & 3) * 8u;
        const int32_t m = n >> 2;
        uint32_t *d = (uint32_t *)(void *)dst, *const e = d + m;
        if (r == 0) {
            const uint32_t *s = (const uint32_t *)(const void *)src;
            do {
                *d++ = *s++;
            } while (d != e);
        } else {
            const uint32_t *s = (const uint32_t *)(const void *)(src - r / 8u);
            const uint32_t l = 32u - r;
            uint32_t cur = *s++ >> r;
            do {
                const uint32_t nxt = *s++;
                *d++ = cur | (nxt << l);
                cur = nxt >> r;
            } while (d != e);
        }
        dst += 4 * m;
        src += 4 * m;
        n &= 3;
    }
    for (; n > 0; n--) {
        *dst++ = *src++;
    }
}

/* The band of one output row's pixels from one on: its k_h input rows (iy0 + ky * dil_h), each
 * over span columns from column ix0, the zero point outside the image, rows bs bytes apart. */
static void tc_few_m0_band(const tc_conv_params_t *p, const int8_t *img, int32_t iy0,
                           int32_t ix0, int32_t span, int32_t bs, int8_t *band)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c;
    const int32_t a = ix0 < 0 ? -ix0 : 0, b = ix0 + span > W ? W - ix0 : span; /* in the image */
    const int zp = (int)(-p->in_offset);
    int32_t ky;
    for (ky = 0; ky < p->k_h; ky++, band += bs) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= H || b <= a) {
            memset(band, zp, (size_t)(span * C));
            continue;
        }
        memset(band, zp, (size_t)(a * C));
        tc_few_m0_rowcopy(band + a * C, img + (iy * W + ix0 + a) * C, (b - a) * C);
        memset(band + b * C, zp, (size_t)((span - b) * C));
    }
}

/* The whole layer through bands: each output row's pixels in runs of nox, one band a run,
 * then per pixel each four output channels one tc_few_m0_dot14r over its k_h rows of it. */
static void tc_few_m0_banded(const tc_conv_params_t *p,
                                                       const int8_t *in, int8_t *out,
                                                       int32_t nox, int8_t *band)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, KH = p->k_h;
    const int32_t R = p->k_w * C, K = KH * R, xstep = p->stride_w * C;
    const int32_t oo = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t acc[TC_M0_OUTN], n, oy, ox, ox0, oc, ky, i, k;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        for (oy = 0; oy < p->out_h; oy++) {
            for (ox0 = 0; ox0 < p->out_w; ox0 += nox) {
                const int32_t m = p->out_w - ox0 < nox ? p->out_w - ox0 : nox;
                const int32_t span = (m - 1) * p->stride_w + p->k_w, bs = (span * C + 3) & ~3;
                tc_few_m0_band(p, img, oy * p->stride_h - p->pad_h,
                               ox0 * p->stride_w - p->pad_w, span, bs, band);
                for (ox = 0; ox < m; ox++, out += OC) {
                    const int8_t *x = band + ox * xstep;
                    for (oc = 0, k = 0; oc + 3 < OC; oc += 4) {
                        int32_t *const a = acc + k;
                        a[0] = p->bias_eff[oc];
                        a[1] = p->bias_eff[oc + 1];
                        a[2] = p->bias_eff[oc + 2];
                        a[3] = p->bias_eff[oc + 3];
                        tc_few_m0_dot14r(x, p->weights + oc * K, K, R, a, KH, bs);
                        k += 4;
                        if (k == TC_M0_OUTN || oc + 7 >= OC) { /* one requantization a block */
                            const int32_t c0 = oc + 4 - k;
                            tc_m0_outn(acc, p->mult + c0, p->shift + c0, oo, lo, hi, out + c0, k);
                            k = 0;
                        }
                    }
                    for (; oc < OC; oc++) {
                        const int8_t *w = p->weights + oc * K;
                        int32_t s = p->bias_eff[oc];
                        for (ky = 0; ky < KH; ky++, w += R) {
                            for (i = 0; i < R; i++) {
                                s += x[ky * bs + i] * w[i];
                            }
                        }
                        out[oc] = tc_m0_out1(s, p->mult[oc], p->shift[oc], oo, lo, hi);
                    }
                }
            }
        }
    }
}

void tc_conv_few_s8_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    uint32_t buf[TC_FEW_M0_BAND / 4];
    const int32_t row = TC_FEW_M0_BAND / p->k_h / 4 * 4 / p->in_c; /* columns a band row holds */
    tc_few_m0_banded(p, in, out, (row - p->k_w) / p->stride_w + 1, (int8_t *)buf);
}

#endif /* __ARM_ARCH_6M__ */
