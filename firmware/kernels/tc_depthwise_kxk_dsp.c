/* tinycompile runtime: DEPTHWISE_CONV_2D, int8: the DSP whole-layer path for any window up to
 * 7x7 (tc_dwconv_kxk_dsp, Cortex-M4/M7), beside tc_depthwise_dsp.c's 3x3 path, which
 * tc_dwconv_s8 tries first; this one takes what that one hands back and every other window:
 * any depth multiplier and channel count, dilation 1, stride 1 or 2 along the output lines
 * (any stride across them), any padding, in place or not. Identical results to the portable
 * kernel (TFLM's reference DepthwiseConvPerChannel).
 *
 * As the 3x3 path, outputs run in lines along the longer output axis; per block of four output
 * channels:
 *   - input lines are unpacked once into a stack buffer (a ring of KX line slots, KX the
 *     window's extent across lines), per channel 16-bit values, word m = columns (2m, 2m + 1);
 *     columns and lines outside the image hold the input zero point, which contributes nothing
 *     once the zero point is folded into bias_eff (like TFLM's skipped taps): no border case.
 *     Output channels reading the same input channel (depth multiplier > 1) share one line;
 *   - per channel and window line, the taps along the line as doubled 16-bit pairs: stride 1,
 *     even outputs (w0, w1), (w2, w3), ..; odd outputs (0, w0), (w1, w2), ..; stride 2,
 *     (w0, w1), (w2, w3), .. (zero past the window), so that output 2m (stride 1) is
 *     SMLAD(A[m + j], We[j]) over j < NW and output 2m + 1 SMLAD(A[m + j], Wo[j]), and output
 *     k (stride 2) SMLAD(A[k + j], We[j]): NW = KA / 2 + 1 (stride 1) or (KA + 1) / 2 words;
 *   - passes of four outputs of one channel, the accumulators in registers, NW a compile-time
 *     constant (instances for NW 1..4, both strides); a last pass of one or two outputs runs
 *     two accumulators only (a small layer's lines are a few outputs long);
 *   - requantization of the doubled accumulator with SMMLAR (tc_dsp.h's tc_rq2_s8), then the
 *     fused activation's clamp.
 * Conditions, checked on entry (else it returns 0, nothing written): |bias_eff| < 2^29 and
 * TFLite's requantization with 1 <= -shift <= 23 per channel (tc_rq2_s8's bounds; at most 49
 * taps add less than 2^20 to the accumulator); in place, a whole line in one buffer tile.
 * In place (out == in: stride 1, same size, depth multiplier 1) output line l is stored over
 * input line l once input lines up to l + KX - 1 - pad are in the buffer; later lines never
 * read input line l again from memory (as in the 3x3 path).
 * Stack: about 2.8 KB (the line buffer 1.8 KB, the block's weights 0.9 KB).
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"

#if TC_DSP

#define TC_DWK_MAXK 7                  /* window extent, either way */
#define TC_DWK_MAXNW 4                 /* words of tap pairs per window line */
#define TC_DWK_WORDS 448               /* line buffer: KX slots x 4 channels x LW words */

/* One output channel of a block, set up once per block. */
typedef struct {
    uint32_t w[TC_DWK_MAXK][TC_DWK_MAXNW][2]; /* [t][j]: (We, Wo), doubled 16-bit pairs */
    int32_t bias;                             /* 2 * bias_eff */
    int32_t mult;                             /* the multiplier */
    int32_t rnd;                              /* 2^(r-1) + out_offset * 2^r */
    int32_t rsh;                              /* r = -shift */
    int32_t line;                             /* its input channel's line, words into a slot */
} tc_dwk_chan_t;

/* What the line functions share. */
typedef struct {
    const uint32_t *ln[TC_DWK_MAXK]; /* the KX line slots, in window order */
    int32_t kx;                      /* KX */
    int32_t ostep;                   /* output step along a line */
} tc_dwk_line_t;

/* tc_dsp.h's tc_rq2_s8 (TFLite), the channel's constants from ch. */
TC_INLINE int8_t tc_dwk_out(int32_t acc2, const tc_dwk_chan_t *ch)
{
    return (int8_t)tc_rq2_s8(acc2, ch->mult, ch->rnd, ch->rsh, 0);
}

/* n (1..) outputs of one channel along a line (the first window at word 0 of each line slot,
 * plus the channel's line), stored at o, o + ostep, ..; passes of four (a last one of three
 * computes a fourth from the buffer's padding, not stored), a last pass of one or two outputs
 * with two accumulators. */
TC_INLINE void tc_dwk_chan(const tc_dwk_line_t *L, const tc_dwk_chan_t *ch, int8_t *o, int32_t n,
                           const int S, const int NW)
{
    const int32_t KX = L->kx, b = ch->bias, os = L->ostep;
    int32_t m = ch->line; /* word offset of the pass in every line */
    int32_t a0, a1, t, j;
    const uint32_t(*w)[TC_DWK_MAXNW][2];
    for (; n > 2; n -= 4, o += 4 * os, m += S == 1 ? 2 : 4) {
        int32_t a2 = b, a3 = b;
        a0 = a1 = b;
        w = ch->w;
        for (t = 0; t < KX; t++, w++) {
            const uint32_t *A = L->ln[t] + m;
            if (S == 1) { /* a0, a1: outputs 2m, 2m + 1; a2, a3: 2m + 2, 2m + 3 */
                uint32_t x = A[0];
#pragma GCC unroll 4
                for (j = 0; j < NW; j++) {
                    const uint32_t y = A[j + 1], we = (*w)[j][0], wo = (*w)[j][1];
                    a0 = __smlad(x, we, a0);
                    a1 = __smlad(x, wo, a1);
                    a2 = __smlad(y, we, a2);
                    a3 = __smlad(y, wo, a3);
                    x = y;
                }
            } else {
                uint32_t x0 = A[0], x1 = A[1], x2 = A[2];
#pragma GCC unroll 4
                for (j = 0; j < NW; j++) {
                    const uint32_t x3 = A[j + 3], we = (*w)[j][0];
                    a0 = __smlad(x0, we, a0);
                    a1 = __smlad(x1, we, a1);
                    a2 = __smlad(x2, we, a2);
                    a3 = __smlad(x3, we, a3);
                    x0 = x1;
                    x1 = x2;
                    x2 = x3;
                }
            }
        }
        o[0] = tc_dwk_out(a0, ch);
        o[os] = tc_dwk_out(a1, ch);
        o[2 * os] = tc_dwk_out(a2, ch);
        if (n == 3) { /* the last pass, one output short */
            return;
        }
        o[3 * os] = tc_dwk_out(a3, ch);
    }
    if (n <= 0) {
        return;
    }
    /* a last pass of one or two outputs: two accumulators */
    a0 = a1 = b;
    w = ch->w;
    for (t = 0; t < KX; t++, w++) {
        const uint32_t *A = L->ln[t] + m;
#pragma GCC unroll 4
        for (j = 0; j < NW; j++) {
            a0 = __smlad(A[j], (*w)[j][0], a0);
            a1 = __smlad(A[j + S - 1], (*w)[j][2 - S], a1); /* 2m + 1 or k + 1 */
        }
    }
    o[0] = tc_dwk_out(a0, ch);
    if (n == 2) {
        o[os] = tc_dwk_out(a1, ch);
    }
}

typedef void (*tc_dwk_fn)(const tc_dwk_line_t *L, const tc_dwk_chan_t *ch, int8_t *o,
                          int32_t n);

#define TC_DWK_FN(name, S, NW)                                                              \
    __attribute__((noinline)) static void name(const tc_dwk_line_t *L,                     \
        const tc_dwk_chan_t *ch, int8_t *o, int32_t n)                                      \
    { tc_dwk_chan(L, ch, o, n, S, NW); }
TC_DWK_FN(tc_dwk_s1_1, 1, 1)
TC_DWK_FN(tc_dwk_s1_2, 1, 2)
TC_DWK_FN(tc_dwk_s1_3, 1, 3)
TC_DWK_FN(tc_dwk_s1_4, 1, 4)
TC_DWK_FN(tc_dwk_s2_1, 2, 1)
TC_DWK_FN(tc_dwk_s2_2, 2, 2)
TC_DWK_FN(tc_dwk_s2_3, 2, 3)
TC_DWK_FN(tc_dwk_s2_4, 2, 4)

static const tc_dwk_fn tc_dwk_fns[2][TC_DWK_MAXNW] = {
    {tc_dwk_s1_1, tc_dwk_s1_2, tc_dwk_s1_3, tc_dwk_s1_4},
    {tc_dwk_s2_1, tc_dwk_s2_2, tc_dwk_s2_3, tc_dwk_s2_4},
};

/* Two columns (raw words v0, v1: four channels each) into word d[0] of four channel lines
 * lw words apart: channel i's column pair in 16-bit lanes. */
TC_INLINE void tc_dwk_put2(uint32_t v0, uint32_t v1, uint32_t *d, int32_t lw)
{
    const uint32_t e0 = tc_sxtb16_lo(v0), e1 = tc_sxtb16_lo(v1);
    const uint32_t o0 = tc_sxtb16_hi(v0), o1 = tc_sxtb16_hi(v1);
    d[0] = tc_pkhbt16(e0, e1);
    d[lw] = tc_pkhbt16(o0, o1);
    d[2 * lw] = tc_pkhtb16(e0, e1);
    d[3 * lw] = tc_pkhtb16(o0, o1);
}

/* Four adjacent input channels' lines (lw words apart) of nw words: columns jv0 .. jv1 - 1 from
 * x, x + step, .., the others the zero point pad (four bytes); pairs straddling the image's
 * first or last column mix both (tc_depthwise_dsp.c's tc_dw3_fill). */
static void tc_dwk_fill4(const int8_t *x, int32_t step, int32_t nw, int32_t jv0, int32_t jv1,
                         uint32_t pad, uint32_t *d, int32_t lw)
{
    const uint32_t pp = tc_pkhbt16(tc_sxtb16_lo(pad), tc_sxtb16_lo(pad));
    int32_t j = 0;
    for (; j + 1 < jv0; j += 2, d++) {
        d[0] = d[lw] = d[2 * lw] = d[3 * lw] = pp;
    }
    if (j < jv0) { /* j = jv0 - 1 */
        tc_dwk_put2(pad, j + 1 < jv1 ? tc_ld32(x) : pad, d++, lw);
        j += 2;
        x += step;
    }
    for (; j + 1 < jv1; j += 2, d++) {
        const uint32_t v0 = tc_ld32(x), v1 = tc_ld32(x + step);
        x += 2 * step;
        tc_dwk_put2(v0, v1, d, lw);
    }
    if (j < jv1) {
        tc_dwk_put2(tc_ld32(x), pad, d++, lw);
        j += 2;
    }
    for (; j < 2 * nw; j += 2, d++) {
        d[0] = d[lw] = d[2 * lw] = d[3 * lw] = pp;
    }
}

/* One channel's line of nw words, value by value (the other layouts): columns jv0 .. jv1 - 1
 * from x, x + step, .., the others the zero point zp. */
static void tc_dwk_fill1(const int8_t *x, int32_t step, int32_t nw, int32_t jv0, int32_t jv1,
                         int32_t zp, uint32_t *d)
{
    int16_t *h = (int16_t *)d;
    const uint32_t zz = ((uint32_t)zp & 0xFFFFu) * 0x10001u;
    int32_t j = 0;
    for (; j + 1 < jv0; j += 2) {
        d[j >> 1] = zz;
    }
    if (j < jv0) { /* j = jv0 - 1: a pair straddling the first column */
        h[j++] = (int16_t)zp;
        if (j < jv1) {
            h[j++] = *x;
            x += step;
        } else {
            h[j++] = (int16_t)zp;
        }
    }
    for (; j + 1 < jv1; j += 2, x += 2 * step) { /* j even */
        d[j >> 1] = (uint32_t)(uint16_t)x[0] | (uint32_t)x[step] << 16;
    }
    if (j < jv1) {
        h[j++] = *x;
    }
    if (j & 1) {
        h[j++] = (int16_t)zp;
    }
    for (; j < 2 * nw; j += 2) {
        d[j >> 1] = zz;
    }
}

/* The fused activation's clamp, when narrower than int8, over n outputs of cn channels. */
static void tc_dwk_clamp(int8_t *o, int32_t ostep, int32_t n, int32_t cn, int32_t lo, int32_t hi)
{
    for (; n > 0; n--, o += ostep) {
        int32_t i;
        for (i = 0; i < cn; i++) {
            o[i] = (int8_t)tc_clamp(o[i], lo, hi);
        }
    }
}

/* GCC turns the small zeroing and slot-rotation loops below into memset / memmove calls, which
 * cost more than the loops on the few bytes they move (a tiny layer's fixed overhead). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
int tc_dwconv_kxk_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OH = p->out_h, OW = p->out_w;
    const int32_t OC = p->out_c, DM = p->depth_mult;
    const int32_t zp = -p->in_offset;
    const int clamp = p->act_min > -128 || p->act_max < 127;
    const uint32_t pad = ((uint32_t)zp & 0xFFu) * 0x01010101u;
    const int vert = OH > OW; /* lines along the longer output axis */
    const int32_t LS = vert ? p->stride_h : p->stride_w, XS = vert ? p->stride_w : p->stride_h;
    const int32_t KA = vert ? p->k_h : p->k_w, KX = vert ? p->k_w : p->k_h;
    const int32_t NL = vert ? OW : OH, NA = vert ? OH : OW;
    const int32_t IA = vert ? H : W, IX = vert ? W : H;
    const int32_t PA = vert ? p->pad_h : p->pad_w, PX = vert ? p->pad_w : p->pad_h;
    const int32_t ia = vert ? W * C : C, ix = vert ? C : W * C;
    const int32_t oa = vert ? OW * OC : OC, ox = vert ? OC : OW * OC;
    const int32_t NW = LS == 1 ? KA / 2 + 1 : (KA + 1) / 2;
    const int32_t LW = TC_DWK_WORDS / (4 * (KX > 0 ? KX : 1)); /* words per channel line */
    /* outputs per tile: passes of four read words up to (outputs / 2 or outputs) + NW */
    const int32_t tile = LS == 1 ? (2 * (LW - NW - 1)) & ~3 : (LW - NW - 3) & ~3;
    uint32_t buf[TC_DWK_WORDS];
    tc_dwk_chan_t ch[4];
    tc_dwk_line_t L;
    tc_dwk_fn fn;
    int32_t c, n, c0;
    if (p->dil_h != 1 || p->dil_w != 1 || KA < 1 || KA > TC_DWK_MAXK || KX < 1 ||
        KX > TC_DWK_MAXK || (LS != 1 && LS != 2) || XS < 1 || tile < 4 ||
        (in == out && NA > tile)) {
        return 0;
    }
    for (c = 0; c < OC; c++) {
        const int32_t b = p->bias_eff[c], r = -p->shift[c];
        if (b >= (1 << 29) || b <= -(1 << 29) || r < 1 || r > 23) {
            return 0; /* also the ONNX variant (shift > 31) */
        }
    }
    fn = tc_dwk_fns[LS - 1][NW - 1];
    L.kx = KX;
    L.ostep = oa;
    for (n = 0; n < p->batches; n++) {
        const int8_t *img = in + n * H * W * C;
        int8_t *oimg = out + n * OH * OW * OC;
        for (c0 = 0; c0 < OC; c0 += 4) {
            const int32_t cn = OC - c0 < 4 ? OC - c0 : 4;
            const int8_t *wb = p->weights + (c0 >> 2) * (p->k_h * p->k_w * 4);
            /* four adjacent input channels, read a word at a time */
            const int four = DM == 1 && cn == 4;
            int32_t icc[4], i, t, j, ta;
            for (i = 0; i < 4; i++) {
                const int32_t oc = c0 + (i < cn ? i : cn - 1);
                int32_t u;
                icc[i] = oc / DM;
                ch[i].line = i > 0 && icc[i] == icc[i - 1] ? ch[i - 1].line : i * LW;
                ch[i].bias = 2 * p->bias_eff[oc];
                ch[i].mult = p->mult[oc];
                ch[i].rsh = -p->shift[oc];
                ch[i].rnd = (int32_t)((1u << (ch[i].rsh - 1)) +
                                      ((uint32_t)p->out_offset << ch[i].rsh));
                for (t = 0; t < KX && i < cn; t++) { /* channels past cn: never computed */
                    /* tap u of window line t at wp[u * sa], as 16-bit lanes, doubled */
                    const int8_t *wp = wb + i + (vert ? t * 4 : t * p->k_w * 4);
                    const int32_t sa = vert ? p->k_w * 4 : 4;
                    uint32_t tw[TC_DWK_MAXNW * 2 + 2];
                    tw[0] = 0;
                    for (u = 0; u < KA; u++, wp += sa) { /* tw[u + 1]: tap u */
                        tw[u + 1] = (uint32_t)(2 * *wp) & 0xFFFFu;
                    }
                    tw[KA + 1] = tw[KA + 2] = 0;
                    for (j = 0; j < NW; j++) {
                        /* We[j] = (w[2j], w[2j + 1]), Wo[j] = (w[2j - 1], w[2j]) */
                        ch[i].w[t][j][0] = tw[2 * j + 1] | tw[2 * j + 2] << 16;
                        ch[i].w[t][j][1] = tw[2 * j] | tw[2 * j + 1] << 16;
                    }
                }
            }
            for (ta = 0; ta < NA; ta += tile) {
                const int32_t na = NA - ta < tile ? NA - ta : tile;
                const int32_t a0 = ta * LS - PA;
                /* words a line must hold: passes of four outputs read up to word m + NW
                 * (stride 1, m = 2 per pass) or m + NW + 2 (stride 2, m = 4 per pass), a last
                 * pass of one or two outputs m + NW - 1 or m + NW (tc_dwk_chan) */
                const int32_t nf = na >> 2, tl = na & 3;
                const int32_t nw = (LS == 1 ? 2 * nf : 4 * nf) + NW +
                                   (tl == 0 ? -1 : tl == 3 ? (LS == 1 ? 1 : 3) : LS - 1);
                int32_t jv0 = a0 < 0 ? -a0 : 0, jv1 = IA - a0 < 2 * nw ? IA - a0 : 2 * nw;
                int32_t base = INT32_MIN / 2, l, k;
                uint32_t *slot[TC_DWK_MAXK];
                if (jv0 > 2 * nw) {
                    jv0 = 2 * nw;
                }
                if (jv1 < jv0) {
                    jv1 = jv0;
                }
                for (k = 0; k < KX; k++) {
                    slot[k] = buf + k * 4 * LW;
                }
                for (l = 0; l < NL; l++) {
                    const int32_t x0 = l * XS - PX;
                    int8_t *o = oimg + l * ox + ta * oa + c0;
                    int32_t d = x0 - base;
                    if (d > KX) {
                        d = KX;
                    }
                    for (; d > 0; d--) { /* line x0 + KX - d into the oldest slot */
                        uint32_t *f = slot[0];
                        const int32_t xx = x0 + KX - d;
                        for (k = 0; k + 1 < KX; k++) {
                            slot[k] = slot[k + 1];
                        }
                        slot[KX - 1] = f;
                        if (xx < 0 || xx >= IX) {
                            tc_dwk_fill1(img, 0, nw, 0, 0, zp, f);
                            for (i = 1; i < 4; i++) {
                                if (ch[i].line != ch[i - 1].line) {
                                    tc_dwk_fill1(img, 0, nw, 0, 0, zp, f + ch[i].line);
                                }
                            }
                        } else if (four) {
                            tc_dwk_fill4(img + xx * ix + (a0 + jv0) * ia + c0, ia, nw, jv0, jv1,
                                         pad, f, LW);
                        } else {
                            for (i = 0; i < 4; i++) {
                                if (i == 0 || ch[i].line != ch[i - 1].line) {
                                    tc_dwk_fill1(img + xx * ix + (a0 + jv0) * ia + icc[i], ia,
                                                 nw, jv0, jv1, zp, f + ch[i].line);
                                }
                            }
                        }
                    }
                    base = x0;
                    for (k = 0; k < KX; k++) {
                        L.ln[k] = slot[k];
                    }
                    for (i = 0; i < cn; i++) {
                        fn(&L, &ch[i], o + i, na);
                    }
                    if (clamp) {
                        tc_dwk_clamp(o, oa, na, cn, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
    return 1;
}

#else

/* Nothing to compile without DSP (ISO C wants a declaration in every translation unit). */
typedef int tc_depthwise_kxk_dsp_unused_t;

#endif /* TC_DSP */
