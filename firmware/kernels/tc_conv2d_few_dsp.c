/* tinycompile runtime: CONV_2D over few input channels on Cortex-M4/M7 (DSP extension):
 * tc_conv_few_s8_dsp, the whole layer of tc_conv_few_s8 (tc_conv2d_few.c; the weight layout
 * wfew: tc_conv2d.h).
 *
 * A window row of R = k_w * in_c input values is contiguous in NHWC (dil_w == 1), and is read
 * in place as G = ceil(R / 4) words; SXTB16 splits a word into [x0 x2] and [x1 x3], and wfew
 * holds each output channel's weights for that word as the two matching int16 pairs, so one
 * SMLAD adds x0 w0 + x2 w2, the next x1 w1 + x3 w3. Four output channels share each word: per
 * word 1 LDR + 2 SXTB16 + 4 LDRD + 8 SMLAD for 16 MACs. Values past R in the last word (the
 * next pixels' inputs) meet zero weights.
 *
 * Loop order, per output row: blocks of four channels outside, the row's pixels inside, so
 * a block's requantization constants are formed once per layer (tc_requant_rs_dsp's: six
 * instructions an output; a block with a channel whose shift is not negative takes
 * tc_out_s8_dsp). The row loop is instantiated for G = 1..4 (constant trip counts).
 *
 * Borders, exactly as the reference: filter rows outside the image are skipped, and the
 * accumulator then starts from bias + in_offset * (sum of the weights of the rows inside),
 * which is bias_eff when all rows are inside; columns outside the image are copied as the
 * input zero point (w * (zero_point + in_offset) = 0) into a stack window (at most 512 bytes:
 * k_h * 4 * G), together with pixels whose last word would read past the input. The int32
 * sums are the reference's in another order (wrapping addition commutes).
 */
#include <stdint.h>
#include <string.h>

#include "tc_conv2d.h"
#include "tc_kernel_util.h"

#if TC_DSP

#define TC_FEW_CHUNK 16 /* output channels whose constants are held at once */
#define TC_FEW_WIN 512  /* bytes of a border window (k_h * 4 * G; ops/few.py MAX_WIN) */

/* One block of four output channels over one run of pixels. */
typedef struct {
    const uint32_t *w; /* the block's weights from the first filter row read */
    int32_t nr, rs;    /* filter rows read, input step between them */
    int32_t init[4];   /* start sums */
    int32_t m[4];      /* multipliers */
    uint32_t r1[4];    /* ~shift (fast) */
    uint32_t t[4];     /* 1 << r1 */
    uint32_t lo4, hi4; /* the clamp range in four bytes */
    const int32_t *mult, *shift;
    int32_t n;         /* channels of the block that exist (1..4) */
    int32_t fast;      /* n == 4 and every shift < 0: tc_requant_rs_dsp, one word stored */
    int32_t oo, lo, hi;
} tc_few_blk_t;

/* Output k of the block before the clamp, saturated to int8, in byte k of a word. */
TC_INLINE uint32_t tc_few_q(const tc_few_blk_t *bk, int32_t a, int32_t k)
{
    const int32_t y = tc_requant_rs_dsp(a, bk->m[k], bk->r1[k], bk->t[k]) + bk->oo;
    return ((uint32_t)__ssat(y, 8) & 0xFFu) << (8 * k);
}

/* max(v, lo4) and min(v, hi4), four signed bytes at once. */
TC_INLINE uint32_t tc_few_clamp4(uint32_t v, uint32_t lo4, uint32_t hi4)
{
    uint32_t r, s;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(v), "r"(lo4) : "cc");
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(s) : "r"(r), "r"(hi4) : "cc");
    return s;
}

static void tc_few_store_slow(const tc_few_blk_t *bk, const int32_t *a, int8_t *o)
{
    int32_t k;
    for (k = 0; k < bk->n; k++) {
        o[k] = tc_out_s8_dsp(a[k], bk->mult[k], bk->shift[k], bk->oo, bk->lo, bk->hi);
    }
}

/* One word of a window row (byte offset o): 1 LDR + 2 SXTB16 + 4 LDRD + 8 SMLAD, 16 MACs. */
#define TC_FEW_WORD(o)                                                                          \
    "ldr %[v], [%[x], #" #o "]\n\t"                                                             \
    "sxtb16 %[lo], %[v]\n\t"                                                                    \
    "sxtb16 %[v], %[v], ror #8\n\t"                                                             \
    "ldrd %[wa], %[wb], [%[w]], #8\n\t"                                                         \
    "smlad %[a0], %[lo], %[wa], %[a0]\n\t"                                                      \
    "smlad %[a0], %[v], %[wb], %[a0]\n\t"                                                       \
    "ldrd %[wa], %[wb], [%[w]], #8\n\t"                                                         \
    "smlad %[a1], %[lo], %[wa], %[a1]\n\t"                                                      \
    "smlad %[a1], %[v], %[wb], %[a1]\n\t"                                                       \
    "ldrd %[wa], %[wb], [%[w]], #8\n\t"                                                         \
    "smlad %[a2], %[lo], %[wa], %[a2]\n\t"                                                      \
    "smlad %[a2], %[v], %[wb], %[a2]\n\t"                                                       \
    "ldrd %[wa], %[wb], [%[w]], #8\n\t"                                                         \
    "smlad %[a3], %[lo], %[wa], %[a3]\n\t"                                                      \
    "smlad %[a3], %[v], %[wb], %[a3]\n\t"
/* The window's rows (r of them, rs apart from xr), the words of a row unrolled. */
#define TC_FEW_ROWS(words)                                                                      \
    "1:\n\t" words "add %[x], %[x], %[rs]\n\t"                                                 \
    "subs %[r], %[r], #1\n\t"                                                                    \
    "bne 1b\n\t"
#define TC_FEW_OUTS                                                                             \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xr), [w] "+r"(w),    \
        [r] "+r"(r), [lo] "=&r"(lo), [v] "=&r"(v), [wa] "=&r"(wa), [wb] "=&r"(wb)

/* npix pixels of one block: x at the first pixel's window (first row read), pixels pstep
 * apart in the input and ostep apart in the output. */
TC_INLINE void tc_few_run(const tc_few_blk_t *bk, const int8_t *x, int32_t pstep, int32_t npix,
                          int8_t *o, int32_t ostep, const int32_t G)
{
    const int32_t rs = bk->rs, nr = bk->nr;
    for (; npix > 0; npix--, x += pstep, o += ostep) {
        int32_t a0 = bk->init[0], a1 = bk->init[1], a2 = bk->init[2], a3 = bk->init[3];
        const uint32_t *w = bk->w;
        const int8_t *xr = x;
        int32_t r = nr;
#if TC_ASM_LOOPS
        uint32_t lo, v, wa, wb;
        if (G == 1) {
            __asm__(TC_FEW_ROWS(TC_FEW_WORD(0))
                    : TC_FEW_OUTS : [rs] "r"(rs) : "cc", "memory");
        } else if (G == 2) {
            __asm__(TC_FEW_ROWS(TC_FEW_WORD(0) TC_FEW_WORD(4))
                    : TC_FEW_OUTS : [rs] "r"(rs) : "cc", "memory");
        } else if (G == 3) {
            __asm__(TC_FEW_ROWS(TC_FEW_WORD(0) TC_FEW_WORD(4) TC_FEW_WORD(8))
                    : TC_FEW_OUTS : [rs] "r"(rs) : "cc", "memory");
        } else {
            __asm__(TC_FEW_ROWS(TC_FEW_WORD(0) TC_FEW_WORD(4) TC_FEW_WORD(8) TC_FEW_WORD(12))
                    : TC_FEW_OUTS : [rs] "r"(rs) : "cc", "memory");
        }
#else
        /* -O0: GCC cannot give the asm its registers (TC_ASM_LOOPS); the same words in C */
        for (; r > 0; r--, xr += rs) {
            int32_t g;
            for (g = 0; g < G; g++, w += 8) {
                const uint32_t v = tc_ld32(xr + 4 * g);
                const uint32_t lo = tc_sxtb16_lo(v), hi = tc_sxtb16_hi(v);
                a0 = __smlad(hi, w[1], __smlad(lo, w[0], a0));
                a1 = __smlad(hi, w[3], __smlad(lo, w[2], a1));
                a2 = __smlad(hi, w[5], __smlad(lo, w[4], a2));
                a3 = __smlad(hi, w[7], __smlad(lo, w[6], a3));
            }
        }
#endif
        if (bk->fast) {
            uint32_t v = tc_few_q(bk, a0, 0) | tc_few_q(bk, a1, 1) | tc_few_q(bk, a2, 2) |
                         tc_few_q(bk, a3, 3);
            v = tc_few_clamp4(v, bk->lo4, bk->hi4);
            memcpy(o, &v, 4); /* unaligned STR: allowed on M4/M7 */
        } else {
            const int32_t a[4] = {a0, a1, a2, a3};
            tc_few_store_slow(bk, a, o);
        }
    }
}

static void tc_few_run1(const tc_few_blk_t *bk, const int8_t *x, int32_t ps, int32_t np,
                        int8_t *o, int32_t os)
{
    tc_few_run(bk, x, ps, np, o, os, 1);
}

static void tc_few_run2(const tc_few_blk_t *bk, const int8_t *x, int32_t ps, int32_t np,
                        int8_t *o, int32_t os)
{
    tc_few_run(bk, x, ps, np, o, os, 2);
}

static void tc_few_run3(const tc_few_blk_t *bk, const int8_t *x, int32_t ps, int32_t np,
                        int8_t *o, int32_t os)
{
    tc_few_run(bk, x, ps, np, o, os, 3);
}

static void tc_few_run4(const tc_few_blk_t *bk, const int8_t *x, int32_t ps, int32_t np,
                        int8_t *o, int32_t os)
{
    tc_few_run(bk, x, ps, np, o, os, 4);
}

typedef void (*tc_few_run_fn)(const tc_few_blk_t *, const int8_t *, int32_t, int32_t, int8_t *,
                              int32_t);

/* The window rows [ky0, ky0 + nr) of the pixel whose first column is ix0, row points at the
 * first of them (column 0), copied to buf (rows 4 G bytes apart) with the input zero point in
 * the columns outside the image. */
static void tc_few_window(const tc_conv_params_t *p, const int8_t *row, int32_t nr, int32_t rs,
                          int32_t ix0, int32_t G, int8_t *buf)
{
    const int32_t C = p->in_c, W = p->in_w;
    int32_t kx0, kx1, r, i;
    tc_tap_range(ix0, 1, p->k_w, W, &kx0, &kx1);
    memset(buf, (int)(-p->in_offset), (size_t)(nr * 4 * G));
    for (r = 0; r < nr; r++, row += rs, buf += 4 * G) {
        const int8_t *src = row + (ix0 + kx0) * C;
        for (i = 0; i < (kx1 - kx0) * C; i++) {
            buf[kx0 * C + i] = src[i];
        }
    }
}

/* The constants of block b (channels c0 + 4 b ..) of a chunk of cn channels. */
static void tc_few_block(const tc_conv_params_t *p, int32_t c0, int32_t b, int32_t cn,
                         tc_few_blk_t *bk)
{
    const int32_t oc = c0 + 4 * b;
    int32_t k, fast = 1;
    bk->n = cn - 4 * b < 4 ? cn - 4 * b : 4;
    bk->mult = p->mult + oc;
    bk->shift = p->shift + oc;
    bk->oo = p->out_offset;
    bk->lo = p->act_min;
    bk->hi = p->act_max;
    bk->lo4 = ((uint32_t)p->act_min & 0xFFu) * 0x01010101u;
    bk->hi4 = ((uint32_t)p->act_max & 0xFFu) * 0x01010101u;
    for (k = 0; k < 4; k++) {
        const int32_t s = k < bk->n ? p->shift[oc + k] : -1;
        bk->m[k] = k < bk->n ? p->mult[oc + k] : 0;
        bk->r1[k] = ~(uint32_t)s;
        bk->t[k] = 1u << (bk->r1[k] & 31);
        fast &= s < 0;
    }
    bk->fast = fast && bk->n == 4;
}

/* The start sums of block bk (channel oc on) for filter rows [ky0, ky1): bias_eff when all
 * rows are inside, else bias + in_offset * the weights of the rows inside. */
static void tc_few_init(const tc_conv_params_t *p, int32_t oc, int32_t ky0, int32_t ky1,
                        int32_t G, tc_few_blk_t *bk)
{
    int32_t k, i;
    for (k = 0; k < bk->n; k++) {
        if (ky0 == 0 && ky1 == p->k_h) {
            bk->init[k] = p->bias_eff[oc + k];
        } else {
            const int16_t *q = p->wfew + (oc / 4 * p->k_h + ky0) * G * 16 + 4 * k;
            int32_t s = 0;
            for (i = 0; i < (ky1 - ky0) * G; i++, q += 16) {
                s += q[0] + q[1] + q[2] + q[3];
            }
            bk->init[k] = (p->bias ? p->bias[oc + k] : 0) + p->in_offset * s;
        }
    }
    for (; k < 4; k++) {
        bk->init[k] = 0;
    }
}

void tc_conv_few_s8_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, OW = p->out_w;
    const int32_t KH = p->k_h, KW = p->k_w, G = (KW * C + 3) / 4;
    const int32_t sw = p->stride_w, pw = p->pad_w, rs = p->dil_h * W * C;
    const int32_t bw = KH * G * 8; /* words of a block's weights */
    const uint32_t *wf = (const uint32_t *)(const void *)p->wfew;
    static const tc_few_run_fn runs[4] = {tc_few_run1, tc_few_run2, tc_few_run3, tc_few_run4};
    const tc_few_run_fn run = runs[G - 1];
    uint32_t win[TC_FEW_WIN / 4];
    tc_few_blk_t bks[TC_FEW_CHUNK / 4];
    int32_t ox_lo, ox_hi, c0, n, oy, ox, b;
    tc_interior(OW, sw, pw, KW, 1, W, &ox_lo, &ox_hi);
    for (c0 = 0; c0 < OC; c0 += TC_FEW_CHUNK) {
        const int32_t cn = OC - c0 < TC_FEW_CHUNK ? OC - c0 : TC_FEW_CHUNK;
        const int32_t nb = (cn + 3) / 4;
        for (b = 0; b < nb; b++) {
            tc_few_block(p, c0, b, cn, &bks[b]);
        }
        for (n = 0; n < p->batches; n++) {
            const int8_t *img = in + n * H * W * C;
            for (oy = 0; oy < p->out_h; oy++) {
                const int32_t iy0 = oy * p->stride_h - p->pad_h;
                int32_t ky0, ky1, hi = ox_hi;
                const int8_t *xrow;
                int8_t *orow = out + ((n * p->out_h + oy) * OW) * OC + c0;
                tc_tap_range(iy0, p->dil_h, KH, H, &ky0, &ky1);
                xrow = img + (iy0 + ky0 * p->dil_h) * W * C;
                if (n == p->batches - 1 && iy0 + (ky1 - 1) * p->dil_h == H - 1) {
                    /* the last row's last word must not pass the input's end */
                    const int32_t lim = W * C - 4 * G;
                    const int32_t oxm = lim < 0 ? 0 : (lim / C + pw) / sw + 1;
                    hi = oxm < hi ? oxm : hi;
                    hi = hi < ox_lo ? ox_lo : hi;
                }
                for (b = 0; b < nb; b++) {
                    tc_few_blk_t *bk = &bks[b];
                    if (oy == 0 || ky0 != 0 || ky1 != KH || bk->nr != KH) {
                        tc_few_init(p, c0 + 4 * b, ky0, ky1, G, bk);
                    }
                    bk->nr = ky1 - ky0;
                    bk->rs = rs;
                    bk->w = wf + (c0 / 4 + b) * bw + ky0 * G * 8;
                    if (hi > ox_lo) {
                        run(bk, xrow + (ox_lo * sw - pw) * C, sw * C, hi - ox_lo,
                            orow + ox_lo * OC + 4 * b, OC);
                    }
                    bk->rs = 4 * G;
                }
                for (ox = 0; ox < OW; ox++) {
                    if (ox == ox_lo && hi > ox_lo) {
                        ox = hi - 1;
                        continue;
                    }
                    tc_few_window(p, xrow, ky1 - ky0, rs, ox * sw - pw, G, (int8_t *)win);
                    for (b = 0; b < nb; b++) {
                        run(&bks[b], (const int8_t *)win, 0, 1, orow + ox * OC + 4 * b, 0);
                    }
                }
            }
        }
    }
}

#endif /* TC_DSP */
