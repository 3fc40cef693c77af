/* tinycompile runtime: DEPTHWISE_CONV_2D, int8, ARMv6-M (Cortex-M0/M0+): depth multipliers in
 * fours (tc_dwconv_dm4_m0, tried by tc_dwconv_s8_kxk in tc_depthwise.c). A block's four output
 * channels share one input channel: its input rows are copied once into a zero-point-padded
 * stack ring, and each input byte meets four weights (tc_m0_dw1x4, Thumb-1): no border case.
 * Same arithmetic as tc_depthwise_m0.c (TFLM's DepthwiseConvPerChannel; tc_m0_out4).
 */
#include <stdint.h>
#include <string.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"
#include "tc_m0.h"

#if defined(__ARM_ARCH_6M__)
#endif

/* ------------------------------------------- depth multipliers in fours: one shared input */

/* Depth multiplier a multiple of 4 (and dilation 1): a block's four output channels read one
 * input channel, so each input value is loaded once for four MACs. Per block, the input rows
 * of that channel are copied to a stack band (a ring of k_h rows), one byte per column, the
 * input zero point outside the image (adds w * (zero_point + in_offset) = 0 with bias_eff,
 * like TFLM's skipped taps): borders cost what the interior does, no per-tap test. The block's
 * weights are transposed once to [4][k_h][k_w] (TC_DW_M0_TAPS), so that tc_m0_dw1x4 indexes
 * input and the four weight rows with one register, as tc_m0_dot14. The band holds
 * TC_DW_M0_BAND bytes (2 k_h rows); wider layers run in column tiles. Stack: 0.5 KB. */
#define TC_DW_M0_BAND 256
#define TC_DW_M0_TAPS 50

/* a[k] += sum over ky < g[1], kx < g[0] of x[ky * g[2] + kx] * w[k * g[3] + ky * g[0] + kx],
 * k = 0..3: g = {k_w, k_h, band row pitch, k_h * k_w}. Per tap one LDRSB of the input, four of
 * weights, four MULS, four ADDs into r8-r11 (14 instructions per 4 MACs), 12 per window row. */
#if defined(__ARM_ARCH_6M__)
#define TC_DW1X4_ELEM(wr, acc)                                                                  \
    "ldrsb r4, [" wr ", r3]\n\t"                                                                \
    "muls r4, r2\n\t"                                                                           \
    "add " acc ", r4\n\t"
__attribute__((naked)) static void tc_m0_dw1x4(const int8_t *x TC_M0_ARG,
                                               const int8_t *w TC_M0_ARG,
                                               const int32_t *g TC_M0_ARG,
                                               int32_t *a TC_M0_ARG)
{
    __asm__(".syntax unified\n\t"
            TC_M0_ENTER
            "sub sp, #8\n\t"
            "str r3, [sp, #4]\n\t" /* a */
            "ldr r4, [r3, #0]\n\t"
            "mov r8, r4\n\t"
            "ldr r4, [r3, #4]\n\t"
            "mov r9, r4\n\t"
            "ldr r4, [r3, #8]\n\t"
            "mov r10, r4\n\t"
            "ldr r4, [r3, #12]\n\t"
            "mov r11, r4\n\t"
            "ldr r3, [r2, #0]\n\t" /* k_w */
            "mov lr, r3\n\t"
            "ldr r4, [r2, #8]\n\t" /* row pitch */
            "mov r12, r4\n\t"
            "ldr r4, [r2, #12]\n\t" /* weight rows' pitch */
            "adds r0, r0, r3\n\t"   /* x and the four weight rows at the end of a row */
            "adds r1, r1, r3\n\t"
            "adds r5, r1, r4\n\t"
            "adds r6, r5, r4\n\t"
            "adds r7, r6, r4\n\t"
            "ldr r4, [r2, #4]\n\t" /* rows left */
            "str r4, [sp, #0]\n"
            "1:\n\t"
            "mov r3, lr\n\t"
            "negs r3, r3\n"
            "2:\n\t"
            "ldrsb r2, [r0, r3]\n\t"
            TC_DW1X4_ELEM("r1", "r8")
            TC_DW1X4_ELEM("r5", "r9")
            TC_DW1X4_ELEM("r6", "r10")
            TC_DW1X4_ELEM("r7", "r11")
            "adds r3, #1\n\t"
            "bne 2b\n\t"
            "add r0, r12\n\t"
            "mov r4, lr\n\t"
            "adds r1, r1, r4\n\t"
            "adds r5, r5, r4\n\t"
            "adds r6, r6, r4\n\t"
            "adds r7, r7, r4\n\t"
            "ldr r4, [sp, #0]\n\t"
            "subs r4, #1\n\t"
            "str r4, [sp, #0]\n\t"
            "bne 1b\n\t"
            "ldr r3, [sp, #4]\n\t"
            "mov r4, r8\n\t"
            "str r4, [r3, #0]\n\t"
            "mov r4, r9\n\t"
            "str r4, [r3, #4]\n\t"
            "mov r4, r10\n\t"
            "str r4, [r3, #8]\n\t"
            "mov r4, r11\n\t"
            "str r4, [r3, #12]\n\t"
            "add sp, #8\n\t"
            TC_M0_LEAVE
            ".syntax divided");
}
#else
static void tc_m0_dw1x4(const int8_t *x, const int8_t *w, const int32_t *g, int32_t *a)
{
    int32_t ky, kx, k;
    for (ky = 0; ky < g[1]; ky++) {
        for (kx = 0; kx < g[0]; kx++) {
            const int32_t v = x[ky * g[2] + kx];
            for (k = 0; k < 4; k++) {
                a[k] += v * w[k * g[3] + ky * g[0] + kx];
            }
        }
    }
}
#endif

/* Band row iy (input channel values x, x + step, .. of columns ix0 .. ix0 + n - 1, the zero
 * point zp outside the image) into d and d2 (its ring slot and the slot's twin). Byte loops:
 * GCC would make the short fills memset calls, which cost more here. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void tc_dw_m0_band_row(const int8_t *x, int32_t step, int32_t ix0, int32_t n, int32_t W,
                              int row_in, int8_t zp, int8_t *d, int8_t *d2)
{
    int32_t j = 0, a = -ix0, b = W - ix0; /* columns j in [a, b) are inside the image */
    if (!row_in) {
        a = b = n;
    }
    if (a > n) {
        a = n;
    }
    if (b > n) {
        b = n;
    }
    for (; j < a; j++) {
        d[j] = d2[j] = zp;
    }
    for (x += j * step; j < b; j++, x += step) {
        d[j] = d2[j] = *x;
    }
    for (; j < n; j++) {
        d[j] = d2[j] = zp;
    }
}

/* The whole layer when the depth multiplier is a multiple of 4 (see above); 0 where it does not
 * apply (nothing written). Entered from tc_dwconv_s8_kxk (tc_depthwise.c), which the compiler
 * calls for such layers only (ops/depthwise.py), so that other models do not link it.
 * The band is a ring of k_h row slots, each row stored twice (slots s and s + k_h), so that the
 * k_h rows of any output row are contiguous whatever slot they start at: each input row is
 * copied once per column tile. */
int tc_dwconv_dm4_m0(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, DM = p->depth_mult;
    const int32_t KH = p->k_h, KW = p->k_w, OH = p->out_h, OW = p->out_w, KK = KH * KW;
    const int32_t sh = p->stride_h, sw = p->stride_w;
    const int8_t zp = (int8_t)(-p->in_offset);
    int8_t band[TC_DW_M0_BAND], wt[4 * TC_DW_M0_TAPS];
    int32_t g[4], acc[4], T, c0, ic = 0, m = 0;
    if ((DM & 3) != 0 || p->dil_h != 1 || p->dil_w != 1 || KK > TC_DW_M0_TAPS ||
        TC_DW_M0_BAND / (2 * KH) < KW || (p->inplace && in == out)) {
        return 0;
    }
    T = (TC_DW_M0_BAND / (2 * KH) - KW) / sw + 1; /* outputs per column tile */
    if (T > OW) {
        T = OW;
    }
    g[0] = KW;
    g[1] = KH;
    g[3] = KK;
    for (c0 = 0; c0 < OC; c0 += 4) {
        const int8_t *const wb = p->weights + (c0 >> 2) * KK * 4;
        int32_t k, t, n;
        for (k = 0; k < 4; k++) {
            for (t = 0; t < KK; t++) {
                wt[k * KK + t] = wb[t * 4 + k];
            }
        }
        for (n = 0; n < p->batches; n++) {
            const int8_t *const img = in + n * H * W * C + ic;
            int8_t *const dst = out + n * OH * OW * OC + c0;
            int32_t ox0;
            for (ox0 = 0; ox0 < OW; ox0 += T) {
                const int32_t nt = OW - ox0 < T ? OW - ox0 : T, bw = (nt - 1) * sw + KW;
                const int32_t ix0 = ox0 * sw - p->pad_w;
                int32_t oy, s0 = 0, sn = 0, next = -p->pad_h; /* the next row to load, its slot */
                g[2] = bw;
                for (oy = 0; oy < OH; oy++) {
                    const int32_t iy0 = oy * sh - p->pad_h;
                    const int8_t *x;
                    int8_t *o = dst + (oy * OW + ox0) * OC;
                    for (; next < iy0 + KH; next++) {
                        if (next >= iy0) { /* rows a stride skips are never loaded */
                            tc_dw_m0_band_row(img + (next * W + ix0) * C, C, ix0, bw, W,
                                              next >= 0 && next < H, zp, band + sn * bw,
                                              band + (sn + KH) * bw);
                        }
                        if (++sn == KH) {
                            sn = 0;
                        }
                    }
                    x = band + s0 * bw; /* row iy0's slot */
                    for (t = 0; t < nt; t++, x += sw, o += OC) {
                        acc[0] = p->bias_eff[c0];
                        acc[1] = p->bias_eff[c0 + 1];
                        acc[2] = p->bias_eff[c0 + 2];
                        acc[3] = p->bias_eff[c0 + 3];
                        tc_m0_dw1x4(x, wt, g, acc);
                        tc_m0_out4(acc, p->mult + c0, p->shift + c0, p->out_offset, p->act_min,
                                   p->act_max, o);
                    }
                    for (k = 0; k < sh; k++) { /* row iy0 + sh's slot */
                        if (++s0 == KH) {
                            s0 = 0;
                        }
                    }
                }
            }
        }
        m += 4; /* the next block's input channel, by counting (no division) */
        if (m == DM) {
            m = 0;
            ic++;
        }
    }
    return 1;
}
