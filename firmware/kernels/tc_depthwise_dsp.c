/* tinycompile runtime: DEPTHWISE_CONV_2D, int8: the DSP fast paths (Cortex-M4/M7).
 *
 * Beside the portable kernel tc_depthwise.c (which matches TFLM's reference
 * DepthwiseConvPerChannel and calls these where they apply). Both give results identical to
 * the portable loops; they compile to nothing on cores without __ARM_FEATURE_DSP.
 *
 * 1. tc_dwconv3x3_dsp: the whole layer for 3x3 filters, depth multiplier 1, no dilation,
 *    horizontal stride 1 or 2, in_c a multiple of 4 (any padding, any vertical stride, in place
 *    or not). Per block of four channels:
 *    - set-up, once per block: the filter taps split into two words of 16-bit lanes, channels
 *      (0, 2) and (1, 3) (SXTB16), doubled; the requantization constants of the four channels;
 *    - input rows are unpacked once into a small stack buffer (a ring of three rows, one word
 *      of channels (0, 2) and one of (1, 3) per column, in 16-bit lanes); columns and rows
 *      outside the image hold the input zero point (folded into bias_eff, the zero point
 *      contributes nothing, like TFLM's skipped taps), so borders need no special case;
 *    - outputs are computed in passes of up to four horizontally adjacent pixels for one pair
 *      of channels, SMLABB / SMLATT accumulating both channels of a pair per buffer word, so
 *      the columns a pass loads serve every window that covers them;
 *    - requantization without 64-bit arithmetic: with the accumulator doubled (the doubled
 *      weights and bias give 2 * acc at no cost), SMMLAR(2 * acc, m, R) = R + h, h =
 *      SaturatingRoundingDoublingHighMul(acc, m) exactly; with R = 2^(r-1) + out_offset * 2^r
 *      (r = -shift >= 1) and the sign of acc added, one arithmetic shift by r is TFLM's
 *      RoundingDivideByPOT(h, r) + out_offset (see tc_requant in tc_qmath.h for why the sign
 *      of acc can stand for the sign of h); SSAT then clamps to int8.
 *    The conditions (|bias_eff| < 2^29 so that 2 * acc cannot overflow, 1 <= r <= 20 so that
 *    R + h cannot) are checked on entry; it returns 0 (nothing written) when they fail.
 *    In place (out == in) the output row y is written over input row y only once rows up to
 *    y + 1 are in the buffer, which holds everything later rows read: no ring is needed. It
 *    needs the row in one buffer tile (else it returns 0).
 * 2. tc_dwconv_block4_dsp: four channels of one interior pixel (any filter size, depth
 *    multiplier 1), one word of input and weights per tap; used for the layers 1. refuses.
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"

#if TC_DSP

/* ------------------------------------------------------------- 3x3, whole layer */

/* Buffer columns per row (stack: 2 lanes x 3 rows x TC_DW3_COLS words). */
#define TC_DW3_COLS 40

TC_INLINE int32_t tc_smmlar(int32_t a, int32_t b, int32_t acc)
{
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
}

/* Doubled accumulator -> int8: SMMLAR, the sign of acc, shift, saturate (see above). */
TC_INLINE int32_t tc_dw3_rq(int32_t acc2, int32_t m, int32_t rr, int32_t r)
{
    int32_t v = tc_smmlar(acc2, m, rr) + (acc2 >> 31);
    return __ssat(v >> r, 8);
}

typedef struct {
    uint32_t w[2][9];    /* [lane pair][tap]: taps of channels (0, 2) / (1, 3), doubled */
    int32_t bias[2][2];  /* [pair][lane]: 2 * bias_eff */
    int32_t mult[2][2];
    int32_t rnd[2][2];   /* 2^(r-1) + out_offset * 2^r */
    int32_t rsh[2][2];   /* r = -shift */
} tc_dw3_block_t;

/* One MAC step of output k (pair of lanes): a[k] += x * w, both lanes. */
#define TC_DW3_MAC(k, x, w)                                                                 \
    do {                                                                                    \
        a##k##0 = __smlabb((x), (w), a##k##0);                                              \
        a##k##1 = __smlatt((x), (w), a##k##1);                                              \
    } while (0)

/* x (one buffer word) feeds output k's tap kx when 0 <= k < N. */
#define TC_DW3_USE(k, x, w)                                                                 \
    do {                                                                                    \
        if ((k) >= 0 && (k) < N) {                                                          \
            TC_DW3_MAC_K(k, x, w);                                                          \
        }                                                                                   \
    } while (0)

#define TC_DW3_MAC_K(k, x, w)                                                               \
    do {                                                                                    \
        switch (k) {                                                                        \
        case 0: TC_DW3_MAC(0, x, w); break;                                                 \
        case 1: TC_DW3_MAC(1, x, w); break;                                                 \
        case 2: TC_DW3_MAC(2, x, w); break;                                                 \
        default: TC_DW3_MAC(3, x, w); break;                                                \
        }                                                                                   \
    } while (0)

/* Requantize output k (both lanes) and store it. */
#define TC_DW3_OUT(k)                                                                       \
    do {                                                                                    \
        if ((k) < N) {                                                                      \
            int32_t v0_ = tc_dw3_rq(a##k##0, m0, q0, s0);                                   \
            int32_t v1_ = tc_dw3_rq(a##k##1, m1, q1, s1);                                   \
            if (CLAMP) {                                                                    \
                v0_ = tc_clamp(v0_, lo, hi);                                                \
                v1_ = tc_clamp(v1_, lo, hi);                                                \
            }                                                                               \
            o[(k) * ostep] = (int8_t)v0_;                                                   \
            o[(k) * ostep + 2] = (int8_t)v1_;                                               \
        }                                                                                   \
    } while (0)

/* One pass: N (1..4) adjacent outputs of one pair of channels, whose windows start at buffer
 * columns 0, S, .., (N - 1) * S of the three rows; both lanes stored at o + k * ostep and
 * o + k * ostep + 2. Each row runs in two phases that keep only two weights live: S = 1:
 * taps 0 and 1 over columns 0 .. N, then tap 2 over columns 2 .. N + 1; S = 2: taps 0 and 2
 * over the even columns (shared by neighbouring windows), then tap 1 over the odd ones. */
TC_INLINE void tc_dw3_pass(const uint32_t *const *rows, const uint32_t *w,
                           const tc_dw3_block_t *bk, int pr, int8_t *o, int32_t ostep,
                           const int N, const int S, const int CLAMP, int32_t lo, int32_t hi)
{
    const int32_t b0 = bk->bias[pr][0], b1 = bk->bias[pr][1];
    int32_t a00 = b0, a01 = b1, a10 = b0, a11 = b1, a20 = b0, a21 = b1, a30 = b0, a31 = b1;
    int ky, j;
#pragma GCC unroll 3
    for (ky = 0; ky < 3; ky++) {
        const uint32_t *row = rows[ky];
        if (S == 1) {
            const uint32_t w0 = w[0], w1 = w[1];
#pragma GCC unroll 5
            for (j = 0; j <= N; j++) {
                const uint32_t x = row[j];
                TC_DW3_USE(j, x, w0);
                TC_DW3_USE(j - 1, x, w1);
            }
            {
                const uint32_t w2 = w[2];
#pragma GCC unroll 4
                for (j = 0; j < N; j++) {
                    const uint32_t x = row[j + 2];
                    TC_DW3_USE(j, x, w2);
                }
            }
        } else {
            const uint32_t w0 = w[0], w2 = w[2];
#pragma GCC unroll 5
            for (j = 0; j <= N; j++) {
                const uint32_t x = row[2 * j];
                TC_DW3_USE(j, x, w0);
                TC_DW3_USE(j - 1, x, w2);
            }
            {
                const uint32_t w1 = w[1];
#pragma GCC unroll 4
                for (j = 0; j < N; j++) {
                    const uint32_t x = row[2 * j + 1];
                    TC_DW3_USE(j, x, w1);
                }
            }
        }
        w += 3;
    }
    {
        const int32_t m0 = bk->mult[pr][0], q0 = bk->rnd[pr][0], s0 = bk->rsh[pr][0];
        const int32_t m1 = bk->mult[pr][1], q1 = bk->rnd[pr][1], s1 = bk->rsh[pr][1];
        TC_DW3_OUT(0);
        TC_DW3_OUT(1);
        TC_DW3_OUT(2);
        TC_DW3_OUT(3);
    }
}

/* One output line (n outputs) of one pair: passes of four, then the rest. rows[ky] point at
 * the buffer column of the first window's first tap. */
TC_INLINE void tc_dw3_line(const uint32_t *const *rows, const tc_dw3_block_t *bk, int pr,
                           int8_t *o, int32_t ostep, int32_t n, const int S, const int CLAMP,
                           int32_t lo, int32_t hi)
{
    const uint32_t *r[3];
    const uint32_t *w = bk->w[pr];
    r[0] = rows[0];
    r[1] = rows[1];
    r[2] = rows[2];
    for (; n >= 4; n -= 4) {
        tc_dw3_pass(r, w, bk, pr, o, ostep, 4, S, CLAMP, lo, hi);
        r[0] += 4 * S;
        r[1] += 4 * S;
        r[2] += 4 * S;
        o += 4 * ostep;
    }
    if (n == 3) {
        tc_dw3_pass(r, w, bk, pr, o, ostep, 3, S, CLAMP, lo, hi);
    } else if (n == 2) {
        tc_dw3_pass(r, w, bk, pr, o, ostep, 2, S, CLAMP, lo, hi);
    } else if (n == 1) {
        tc_dw3_pass(r, w, bk, pr, o, ostep, 1, S, CLAMP, lo, hi);
    }
}

typedef void (*tc_dw3_line_fn)(const uint32_t *const *rows, const tc_dw3_block_t *bk, int pr,
                               int8_t *o, int32_t ostep, int32_t n, int32_t lo, int32_t hi);

#define TC_DW3_LINE_FN(name, S, CLAMP)                                                      \
    __attribute__((noinline, optimize("no-schedule-insns"))) static void name(                 \
        const uint32_t *const *rows,                                                        \
                                               const tc_dw3_block_t *bk, int pr, int8_t *o, \
                                               int32_t ostep, int32_t n, int32_t lo,        \
                                               int32_t hi)                                  \
    {                                                                                       \
        tc_dw3_line(rows, bk, pr, o, ostep, n, S, CLAMP, lo, hi);                           \
    }

TC_DW3_LINE_FN(tc_dw3_line_s1, 1, 0)
TC_DW3_LINE_FN(tc_dw3_line_s2, 2, 0)
TC_DW3_LINE_FN(tc_dw3_line_s1c, 1, 1)
TC_DW3_LINE_FN(tc_dw3_line_s2c, 2, 1)

/* Fill buffer line (lanes e, o) of ncols columns: columns jv0 .. jv1 - 1 from the input
 * pixels x, x + step, .. (four channels each), the others with the zero point. */
static void tc_dw3_fill(const int8_t *x, int32_t step, int32_t ncols, int32_t jv0, int32_t jv1,
                        uint32_t pe, uint32_t po, uint32_t *e, uint32_t *o)
{
    int32_t j = 0;
    for (; j < jv0; j++) {
        e[j] = pe;
        o[j] = po;
    }
    for (; j < jv1; j++) {
        const uint32_t v = tc_ld32(x);
        x += step;
        e[j] = tc_sxtb16_lo(v);
        o[j] = tc_sxtb16_hi(v);
    }
    for (; j < ncols; j++) {
        e[j] = pe;
        o[j] = po;
    }
}

int tc_dwconv3x3_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OH = p->out_h, OW = p->out_w;
    const int32_t lo = p->act_min, hi = p->act_max;
    const int clamp = lo > -128 || hi < 127;
    const uint32_t zp = (uint32_t)(-p->in_offset) & 0xFFu;
    const uint32_t pad = zp * 0x01010101u;
    const uint32_t pe = tc_sxtb16_lo(pad), po = tc_sxtb16_hi(pad);
    /* Lines run along the longer output axis ("along"), one after the other across it: a line
     * of outputs reads three input lines, buffered. */
    const int vert = OH > OW;
    const int32_t LS = vert ? p->stride_h : p->stride_w; /* stride along a line */
    const int32_t XS = vert ? p->stride_w : p->stride_h; /* stride across lines */
    const int32_t NL = vert ? OW : OH, NA = vert ? OH : OW; /* lines, outputs per line */
    const int32_t IA = vert ? H : W, IX = vert ? W : H;   /* input size along / across */
    const int32_t PA = vert ? p->pad_h : p->pad_w, PX = vert ? p->pad_w : p->pad_h;
    const int32_t ia = vert ? W * C : C, ix = vert ? C : W * C; /* input steps */
    const int32_t oa = vert ? OW * C : C, ox = vert ? C : OW * C; /* output steps */
    const int32_t tile = (TC_DW3_COLS - 3) / LS + 1; /* outputs per buffer tile */
    tc_dw3_line_fn line;
    uint32_t be[3][TC_DW3_COLS], bo[3][TC_DW3_COLS];
    tc_dw3_block_t bk;
    int32_t c, n, c0;
    if (C % 4 != 0 || (LS != 1 && LS != 2) || XS < 1) {
        return 0;
    }
    if (in == out && NA > tile) {
        return 0;
    }
    for (c = 0; c < C; c++) {
        const int32_t b = p->bias_eff[c], r = -p->shift[c];
        if (b >= (1 << 29) || b <= -(1 << 29) || r < 1 || r > 20) {
            return 0;
        }
    }
    line = LS == 1 ? (clamp ? tc_dw3_line_s1c : tc_dw3_line_s1)
                   : (clamp ? tc_dw3_line_s2c : tc_dw3_line_s2);
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        int8_t *oimg = out + n * OH * OW * C;
        for (c0 = 0; c0 < C; c0 += 4) {
            int32_t t, i, ta;
            /* block set-up */
            for (t = 0; t < 9; t++) {
                /* weights [ky][kx]; a line's taps run along it, so across vertical lines
                 * the roles of ky and kx swap */
                const int32_t tt = vert ? (t % 3) * 3 + t / 3 : t;
                const uint32_t v = tc_ld32(p->weights + (c0 >> 2) * 36 + 4 * tt);
                const uint32_t ve = tc_sxtb16_lo(v), vo = tc_sxtb16_hi(v);
                bk.w[0][t] = (uint32_t)__sadd16(ve, ve);
                bk.w[1][t] = (uint32_t)__sadd16(vo, vo);
            }
            for (i = 0; i < 4; i++) {
                const int pr = i & 1, ln = i >> 1; /* channel i: pair i & 1, lane i >> 1 */
                const int32_t r = -p->shift[c0 + i];
                bk.bias[pr][ln] = 2 * p->bias_eff[c0 + i];
                bk.mult[pr][ln] = p->mult[c0 + i];
                bk.rsh[pr][ln] = r;
                bk.rnd[pr][ln] = (int32_t)((1u << (r - 1)) + ((uint32_t)p->out_offset << r));
            }
            for (ta = 0; ta < NA; ta += tile) {
                const int32_t na = NA - ta < tile ? NA - ta : tile;
                const int32_t a0 = ta * LS - PA, ncols = (na - 1) * LS + 3;
                int32_t jv0 = a0 < 0 ? -a0 : 0, jv1 = IA - a0 < ncols ? IA - a0 : ncols;
                int32_t have[3] = {INT32_MIN, INT32_MIN, INT32_MIN};
                int32_t l;
                if (jv0 > ncols) {
                    jv0 = ncols;
                }
                if (jv1 < jv0) {
                    jv1 = jv0;
                }
                for (l = 0; l < NL; l++) {
                    const int32_t x0 = l * XS - PX;
                    const uint32_t *re[3], *ro[3];
                    int8_t *o = oimg + l * ox + ta * oa + c0;
                    int k;
                    for (k = 0; k < 3; k++) {
                        const int32_t xx = x0 + k;
                        const int32_t s = ((xx % 3) + 3) % 3;
                        if (have[s] != xx) {
                            if (xx >= 0 && xx < IX) {
                                tc_dw3_fill(img + xx * ix + (a0 + jv0) * ia + c0, ia, ncols,
                                            jv0, jv1, pe, po, be[s], bo[s]);
                            } else {
                                tc_dw3_fill(img, 0, ncols, ncols, ncols, pe, po, be[s], bo[s]);
                            }
                            have[s] = xx;
                        }
                        re[k] = be[s];
                        ro[k] = bo[s];
                    }
                    line(re, &bk, 0, o, oa, na, lo, hi);
                    line(ro, &bk, 1, o + 1, oa, na, lo, hi);
                }
            }
        }
    }
    return 1;
}

/* ------------------------------------------------- four channels of one interior pixel */

/* Requantize channels oc .. oc + 3 and store them at dst[0 .. 3]. */
TC_INLINE void tc_dw_store4(const tc_conv_params_t *p, int32_t oc, int32_t a0, int32_t a1,
                            int32_t a2, int32_t a3, int8_t *dst)
{
    const int32_t *mult = p->mult + oc, *shift = p->shift + oc;
    const int32_t lo = p->act_min, hi = p->act_max, oo = p->out_offset;
    int8_t r0 = tc_out_s8(a0, mult[0], shift[0], oo, lo, hi);
    int8_t r1 = tc_out_s8(a1, mult[1], shift[1], oo, lo, hi);
    int8_t r2 = tc_out_s8(a2, mult[2], shift[2], oo, lo, hi);
    int8_t r3 = tc_out_s8(a3, mult[3], shift[3], oo, lo, hi);
    dst[0] = r0;
    dst[1] = r1;
    dst[2] = r2;
    dst[3] = r3;
}

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
    tc_dw_store4(p, oc, a0, a1, a2, a3, dst);
}

#else

/* Nothing to compile without DSP (ISO C wants a declaration in every translation unit). */
typedef int tc_depthwise_dsp_unused_t;

#endif /* TC_DSP */
