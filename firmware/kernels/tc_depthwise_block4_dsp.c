/* tinycompile runtime: DEPTHWISE_CONV_2D, int8: four channels of one interior pixel on the
 * Cortex-M4/M7 (tc_dwconv_block4_dsp, declared in tc_kernel_util.h): any filter size, depth
 * multiplier 1, one word of input and one of weights per tap (the compiler's [k_h][k_w][4]
 * weight blocks), unpacked by SXTB16 into (channel 0, 2) and (1, 3) lanes and multiplied by
 * SMLABB / SMLATT. The portable kernel (tc_depthwise.c) calls it for the layers the whole-layer
 * paths (tc_depthwise_dsp.c, tc_depthwise_kxk_dsp.c) refuse. Identical results to the portable
 * loops (TFLM's reference DepthwiseConvPerChannel).
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"

#if TC_DSP

/* One tap of four channels (depth multiplier 1): a[c] += x[c] * w[c], c = 0..3. */
#define TC_DW_TAP(xp, wp)                                                                   \
    do {                                                                                    \
        uint32_t xv_ = tc_ld32(xp), wv_ = tc_ld32(wp);                                      \
        uint32_t xe_ = tc_sxtb16_lo(xv_), we_ = tc_sxtb16_lo(wv_);                          \
        uint32_t xo_ = tc_sxtb16_hi(xv_), wo_ = tc_sxtb16_hi(wv_);                          \
        a0 = __smlabb(xe_, we_, a0);                                                        \
        a2 = __smlatt(xe_, we_, a2);                                                        \
        a1 = __smlabb(xo_, wo_, a1);                                                        \
        a3 = __smlatt(xo_, wo_, a3);                                                        \
    } while (0)

/* Four channels oc .. oc + 3 of an interior pixel, depth multiplier 1: one word of input and
 * one of weights per tap, stored at dst[0 .. 3] (declared in tc_kernel_util.h). */
void tc_dwconv_block4_dsp(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                          int32_t oc, int32_t xs, int32_t rs, int8_t *dst)
{
    const int32_t KH = p->k_h, KW = p->k_w;
    int32_t a0 = p->bias_eff[oc], a1 = p->bias_eff[oc + 1];
    int32_t a2 = p->bias_eff[oc + 2], a3 = p->bias_eff[oc + 3];
    int32_t ky, kx;
    if (KH == 3 && KW == 3) {
        for (ky = 0; ky < 3; ky++) {
            TC_DW_TAP(x, w);
            TC_DW_TAP(x + xs, w + 4);
            TC_DW_TAP(x + 2 * xs, w + 8);
            x += rs;
            w += 12;
        }
    } else {
        for (ky = 0; ky < KH; ky++) {
            const int8_t *xp = x;
            for (kx = 0; kx < KW; kx++) {
                TC_DW_TAP(xp, w);
                xp += xs;
                w += 4;
            }
            x += rs;
        }
    }
    { /* requantized, then stored */
        const int32_t *mult = p->mult + oc, *shift = p->shift + oc;
        const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
        int8_t r0 = tc_out_s8(a0, mult[0], shift[0], oo, lo, hi);
        int8_t r1 = tc_out_s8(a1, mult[1], shift[1], oo, lo, hi);
        int8_t r2 = tc_out_s8(a2, mult[2], shift[2], oo, lo, hi);
        int8_t r3 = tc_out_s8(a3, mult[3], shift[3], oo, lo, hi);
        dst[0] = r0, dst[1] = r1, dst[2] = r2, dst[3] = r3;
    }
}

#else

/* Nothing to compile without DSP (ISO C wants a declaration in every translation unit). */
typedef int tc_depthwise_block4_dsp_unused_t;

#endif /* TC_DSP */
