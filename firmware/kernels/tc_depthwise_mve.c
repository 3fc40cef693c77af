/* tinycompile runtime: DEPTHWISE_CONV_2D, int8: the Helium (MVE) whole-layer 3x3 path of the
 * Cortex-M55 (tc_dwconv3x3_mve, TC_MVE), which tc_dwconv_s8, tc_dwconv_s8_3x3n and
 * tc_dwconv_s8_kxk try first there instead of the M4/M7 3x3 DSP paths: 3x3 filters, depth
 * multiplier 1, no dilation, any channel count, stride 1 or 2 along the output lines (any stride
 * across them), any padding, in place or not. Identical results to the portable kernel (TFLM's
 * reference DepthwiseConvPerChannel).
 *
 * Why float: Helium has no integer vector x vector multiply-accumulate (VMLA takes a scalar), so
 * an int32 MAC over channel lanes costs a VMUL, a VADD and a temporary register; with eight
 * Q registers that leaves room for three accumulators. Its single-precision VFMA is one
 * instruction and accumulates in place, and it is exact here: int8 x int8 products and their
 * sums are integers of magnitude at most 9 * 128 * 128 < 2^18, far below float32's 2^24, so no
 * partial sum ever rounds, whatever the order, and VCVT gives back the int32 sum. Four float
 * accumulators, the window line's three weight vectors and the input column fill the eight
 * Q registers: passes of four outputs along a line, one window line at a time. Per pass and
 * block of four channels: 9 weight loads, 18 input loads and 18 VCVT (stride 2: 27 and 27),
 * 36 VFMA/VMUL, 39 instructions of requantization and stores: about 7.6 instructions per output
 * at stride 1. On the VWW and DS-CNN models' layers that is 2.2 to 3.1 times fewer instructions
 * than the DSP paths on the same core.
 *
 * As the DSP path (tc_depthwise_dsp.c), outputs run in lines along the longer output axis (rows,
 * or columns for tall layers such as the DS-CNN's 25 x 5), and a line reads three input lines.
 * Per slice of up to 16 channels:
 *   - set-up, once per slice: per block of four channels its nine weight vectors as float32
 *     ([window line t][tap u along the line]), its bias_eff, multipliers and shifts, and the
 *     byte offsets of its output scatter;
 *   - input lines are copied once into a stack buffer, a ring of three line slots of
 *     TC_DWM_COLS columns x 16 bytes (one VLDRB and one VSTRB per column); columns and lines
 *     outside the image hold the input zero point, which contributes nothing once the zero
 *     point is folded into bias_eff (like TFLM's skipped taps), so borders cost nothing extra;
 *   - per output line, passes of four outputs, each over every block of the slice in one loop
 *     (assembly, tc_depthwise_mve_asm.h: GCC 12 spills the intrinsics' accumulators; the line
 *     slots, weights and block constants post-increment to the next block): per window line the three weight vectors,
 *     the input columns (VLDRB.S32 + VCVT, each feeding up to three outputs) and the VFMAs; then
 *     VCVT to int32, + bias_eff, TFLM's requantization per lane (tc_mve.h's, with every shift
 *     a right shift, as the DSP path requires too: VQRDMULH, the accumulator's sign added,
 *     VRSHL), the lanes of two outputs narrowed together (VQMOVNB/VQMOVNT to int16, + output
 *     zero point with VQADD, VQMOVNB to int8) and stored by one VSTRB scatter. A line's last
 *     one to three outputs: a pass of four ending at the line's end (three: it repeats an output
 *     the previous pass stored, the same bytes), of two or of one (lines of one to three
 *     outputs: two and one). The slice's last block when it holds one to three channels: passes
 *     of four, their stores predicated. A fused activation narrower than int8 is clamped after
 *     the line (the passes saturate to int8);
 *   - in C with the intrinsics instead, one pass of up to four outputs at a time, channel lanes
 *     predicated: layers with a shift that is not a right shift (tc_mve_requant), the ONNX
 *     variant (shift > 31: tc_out_s8 lane by lane), and every layer at -O0 (TC_ASM_LOOPS,
 *     tc_kernel_util.h).
 * In place (out == in) output line l is written over input line l only once input lines up to
 * l + 1 are in the buffer, which holds everything later lines read (as in the DSP path): that
 * needs a whole line in one buffer tile (30 outputs at stride 1), else it returns 0. It returns
 * 0 (nothing written) for strides along the line other than 1 and 2 too. The scatter's byte
 * offsets are 16-bit, up to 3 output steps along a line + 3: lines down the columns only where
 * that fits (3 * out_w * C + 3 < 2^16), else along the rows.
 * Stack: about 2.8 KB (the line buffer 1.6 KB, the slice's float weights 576 B).
 */
#include <stdint.h>

#include "tc_depthwise.h"
#include "tc_kernel_util.h"
#include "tc_mve.h"

#if TC_MVE

/* Buffer columns per line slot, 16 bytes each (stack: 3 x TC_DWM_COLS x 16 bytes). A tile of
 * a line holds (TC_DWM_COLS - 3) / S + 1 outputs at stride S (30 and 15: at least the DSP
 * path's 29 and 15, which ops/depthwise.py's in-place rule counts with). */
#define TC_DWM_COLS 32

/* A block of four channels of the slice: its constants (zero past the layer's channels). */
typedef struct {
    int32_t bias[4];     /* bias_eff */
    int32_t mult[4];     /* multipliers */
    int32_t shift[4];    /* shifts (TFLite sign) */
    uint16_t offs[2][8]; /* the scatter's byte offsets of output pairs (0, 1) and (2, 3) */
} tc_dwm_blk_t;
#define TC_DWM_BLK_T /* for tc_depthwise_mve_asm.h */

/* One output line of a slice (what the line functions share). */
typedef struct {
    int8_t *ln[3];          /* the three line slots, in window order, the tile's column 0 */
    const float32x4_t *w;   /* the slice's weights, [block][t * 3 + u] */
    const tc_dwm_blk_t *k;  /* the slice's blocks */
    int8_t *o;              /* the line's first output, the slice's first channel */
    int32_t os;             /* output step along the line */
    int32_t na;             /* outputs */
    int32_t cs;             /* channels in the slice */
    int32_t off, lo, hi;    /* output zero point, the activation's clamp */
    int scalar;             /* the ONNX variant: tc_out_s8 lane by lane */
} tc_dwm_line_t;

/* ------------------------------------------------------------------- one pass, in C */

/* The n (1..4) accumulators of a pass at stride S, the first window at column 0 of the three
 * line slots l0..l2 (16 bytes per column, the block's four channels at offset 0): a[j] = sum
 * over lines t and taps u of x[t][j S + u] * w[3 t + u], exactly (see above). */
TC_INLINE void tc_dwm_acc_c(const int8_t *l0, const int8_t *l1, const int8_t *l2,
                            const float32x4_t *w, float32x4_t *a, int32_t n, const int S)
{
    int32_t t, u, j;
    for (j = 0; j < n; j++) {
        a[j] = vdupq_n_f32(0.0f);
    }
    for (t = 0; t < 3; t++) {
        const int8_t *L = t == 0 ? l0 : (t == 1 ? l1 : l2);
        for (j = 0; j < n; j++) {
            for (u = 0; u < 3; u++) {
                const float32x4_t x = vcvtq_f32_s32(vldrbq_s32(L + 16 * (j * S + u)));
                a[j] = vfmaq_f32(a[j], x, w[3 * t + u]);
            }
        }
    }
}

/* n (1..4) outputs of a block of cn (1..4) channels from a pass's accumulators, stored at
 * o, o + os, ..: TFLM's requantization per lane (tc_mve_requant, any shift up to 31), or lane
 * by lane with tc_out_s8 (the ONNX variant). */
static void tc_dwm_out_c(const tc_dwm_line_t *L, const tc_dwm_blk_t *k, const float32x4_t *a,
                         int8_t *o, int32_t n, int32_t cn)
{
    const int32x4_t b = vld1q_s32(k->bias), m = vld1q_s32(k->mult), sh = vld1q_s32(k->shift);
    const mve_pred16_t pc = vctp32q((uint32_t)cn);
    int32_t j, i;
    for (j = 0; j < n; j++, o += L->os) {
        int32x4_t v = vaddq_s32(vcvtq_s32_f32(a[j]), b);
        if (L->scalar) {
            int32_t acc[4];
            vst1q_s32(acc, v);
            for (i = 0; i < cn; i++) {
                o[i] = tc_out_s8(acc[i], k->mult[i], k->shift[i], L->off, L->lo, L->hi);
            }
        } else {
            v = tc_mve_out(tc_mve_requant(v, m, sh), L->off, L->lo, L->hi);
            vstrbq_p_s32(o, v, pc);
        }
    }
}

/* A line through passes in C (any case): block by block, passes of up to four outputs. */
TC_INLINE void tc_dwm_line_c(const tc_dwm_line_t *L, const int S)
{
    int32_t b, k;
    for (b = 0; 4 * b < L->cs; b++) {
        const int32_t cn = L->cs - 4 * b < 4 ? L->cs - 4 * b : 4;
        for (k = 0; k < L->na; k += 4) {
            const int32_t n = L->na - k < 4 ? L->na - k : 4, x = 16 * S * k + 4 * b;
            float32x4_t a[4];
            if (S == 1) {
                tc_dwm_acc_c(L->ln[0] + x, L->ln[1] + x, L->ln[2] + x, L->w + 9 * b, a, n, 1);
            } else {
                tc_dwm_acc_c(L->ln[0] + x, L->ln[1] + x, L->ln[2] + x, L->w + 9 * b, a, n, 2);
            }
            tc_dwm_out_c(L, L->k + b, a, L->o + k * L->os + 4 * b, n, cn);
        }
    }
}

__attribute__((noinline)) static void tc_dwm_line_c1(const tc_dwm_line_t *L)
{
    tc_dwm_line_c(L, 1);
}

__attribute__((noinline)) static void tc_dwm_line_c2(const tc_dwm_line_t *L)
{
    tc_dwm_line_c(L, 2);
}

/* ------------------------------------------------------ whole passes, in assembly */

#if TC_ASM_LOOPS
#include "tc_depthwise_mve_asm.h"

/* A line of a slice through the assembly passes. The blocks of four channels: passes of four
 * outputs, each over every block, then the line's last one to three outputs: a pass of four
 * ending at the line's end (three: repeating an output the previous pass stored, the same
 * bytes), of two and of one (a line of one to three outputs). A last block of one to three
 * channels: passes of four, their stores predicated. */
#define TC_DWM_LINE_FN(name, S)                                                             \
    __attribute__((noinline)) static void name(const tc_dwm_line_t *L)                     \
    {                                                                                       \
        const int32_t os = L->os, na = L->na, np = na >> 2, r = na & 3;                     \
        const int32_t nb = L->cs >> 2, ct = L->cs & 3, off = L->off;                        \
        const int8_t *const s0 = L->ln[0], *const s1 = L->ln[1], *const s2 = L->ln[2];      \
        int8_t *const o = L->o;                                                             \
        int32_t j, x;                                                                       \
        if (nb > 0) {                                                                       \
            const int32_t n4 = np + (r == 3 && np > 0); /* passes of four */                \
            for (j = 0; j < n4; j++) {                                                      \
                x = j < np ? 4 * j : na - 4; /* the pass's first output */                  \
                tc_dwm_run4_s##S(s0 + 16 * S * x, s1 + 16 * S * x, s2 + 16 * S * x, L->w,   \
                                 L->k, o + x * os, nb, off);                                \
            }                                                                               \
            x = 4 * np;                                                                     \
            if (n4 == np && r >= 2) {                                                       \
                tc_dwm_run2_s##S(s0 + 16 * S * x, s1 + 16 * S * x, s2 + 16 * S * x, L->w,   \
                                 L->k, o + x * os, nb, off);                                \
                x += 2;                                                                     \
            }                                                                               \
            if (n4 == np && (r & 1)) {                                                      \
                tc_dwm_run1(s0 + 16 * S * x, s1 + 16 * S * x, s2 + 16 * S * x, L->w, L->k,  \
                            o + x * os, nb, off);                                           \
            }                                                                               \
        }                                                                                   \
        if (ct > 0) {                                                                       \
            const uint32_t cm = (1u << (4 * ct)) - 1u;                                      \
            const float32x4_t *w = L->w + 9 * nb;                                           \
            const tc_dwm_blk_t *k = L->k + nb;                                              \
            for (x = 0; x < na; x += 4) {                                                   \
                const int32_t i = na - x, y = 16 * S * x + 4 * nb;                          \
                const uint32_t m0 = cm & (i >= 2 ? 0xFFFFu : 0x3333u);                      \
                const uint32_t m1 = cm & (i >= 4 ? 0xFFFFu : (i == 3 ? 0x3333u : 0u));      \
                tc_dwm_run4p_s##S(s0 + y, s1 + y, s2 + y, w, k, o + x * os + 4 * nb, off,   \
                                  m0, m1);                                                  \
            }                                                                               \
        }                                                                                   \
    }
TC_DWM_LINE_FN(tc_dwm_line_s1, 1)
TC_DWM_LINE_FN(tc_dwm_line_s2, 2)
#else
#define tc_dwm_line_s1 ((void (*)(const tc_dwm_line_t *))0) /* never taken: TC_ASM_LOOPS 0 */
#define tc_dwm_line_s2 tc_dwm_line_s1
#endif /* TC_ASM_LOOPS */

/* ------------------------------------------------------------------- line buffer */

/* Fill line slot d with ncols columns: columns jv0 .. jv1 - 1 from x, x + step, .. (cs
 * channels each, the rest of the column zero), the others the zero point (pad). */
static void tc_dwm_fill(const int8_t *x, int32_t step, int32_t ncols, int32_t jv0, int32_t jv1,
                        int32_t cs, int8x16_t pad, int8_t *d)
{
    int32_t j = 0;
    for (; j < jv0; j++, d += 16) {
        vst1q_s8(d, pad);
    }
    if (cs == 16) {
        for (; j < jv1; j++, d += 16, x += step) {
            vst1q_s8(d, vld1q_s8(x));
        }
    } else {
        const mve_pred16_t pc = vctp8q((uint32_t)cs);
        for (; j < jv1; j++, d += 16, x += step) {
            vst1q_s8(d, vldrbq_z_s8(x, pc));
        }
    }
    for (; j < ncols; j++, d += 16) {
        vst1q_s8(d, pad);
    }
}

/* ------------------------------------------------------------------------ the layer */

/* The fused activation's clamp where it is narrower than int8, after the assembly passes
 * (which saturate to int8): na outputs of cs channels at o, o + os, .. */
static void tc_dwm_clamp(int8_t *o, int32_t os, int32_t na, int32_t cs, int32_t lo, int32_t hi)
{
    const mve_pred16_t pc = vctp8q((uint32_t)cs);
    const int8x16_t vl = vdupq_n_s8((int8_t)lo), vh = vdupq_n_s8((int8_t)hi);
    for (; na > 0; na--, o += os) {
        vstrbq_p_s8(o, vminq_s8(vmaxq_s8(vldrbq_z_s8(o, pc), vl), vh), pc);
    }
}

/* A block's nine weight vectors (taps [ky][kx], four bytes each, from x) as float32 at d, in
 * window order: along rows [ky][kx], down columns [kx][ky] (optimized builds: in
 * tc_depthwise_mve_asm.h). */
#if !TC_ASM_LOOPS
TC_INLINE void tc_dwm_taps_rows(const int8_t *x, float32x4_t *d)
{
    int i;
    for (i = 0; i < 9; i++) {
        d[i] = vcvtq_f32_s32(vldrbq_s32(x + 4 * i));
    }
}
TC_INLINE void tc_dwm_taps_cols(const int8_t *x, float32x4_t *d)
{
    int i;
    for (i = 0; i < 9; i++) {
        d[i] = vcvtq_f32_s32(vldrbq_s32(x + 4 * ((i % 3) * 3 + i / 3)));
    }
}
#endif

/* A slice's set-up: per block, the nine weight vectors as float32 in window order (line t, tap
 * u along it) and the constants of its channels (zero past the slice's cs). */
static void tc_dwm_slice(const tc_conv_params_t *p, int32_t c0, int32_t cs, int vert,
                         float32x4_t *wf, tc_dwm_blk_t *blk)
{
    const int8_t *wb = p->weights + (c0 >> 2) * 36; /* blocks [ky][kx][4] */
    int32_t c;
    for (c = c0; c < c0 + cs; c += 4, wb += 36, wf += 9, blk++) {
        const mve_pred16_t pc = vctp32q((uint32_t)(c0 + cs - c));
        /* tap (ky, kx) of window line t, tap u: (t, u) along rows, (u, t) down columns */
        if (vert) {
            tc_dwm_taps_cols(wb, wf);
        } else {
            tc_dwm_taps_rows(wb, wf);
        }
        vst1q_s32(blk->bias, vldrwq_z_s32(p->bias_eff + c, pc));
        vst1q_s32(blk->mult, vldrwq_z_s32(p->mult + c, pc));
        vst1q_s32(blk->shift, vldrwq_z_s32(p->shift + c, pc));
    }
}

int tc_dwconv3x3_mve(const tc_conv_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OH = p->out_h, OW = p->out_w;
    const int8x16_t pad = vdupq_n_s8((int8_t)(-p->in_offset));
    /* Lines run along the longer output axis, one after the other across it: a line of
     * outputs reads three input lines, buffered. */
    const int vert = OH > OW && 3 * OW * C + 3 <= 65535; /* the scatter's offsets: see above */
    const int32_t LS = vert ? p->stride_h : p->stride_w; /* stride along a line */
    const int32_t XS = vert ? p->stride_w : p->stride_h; /* stride across lines */
    const int32_t NL = vert ? OW : OH, NA = vert ? OH : OW; /* lines, outputs per line */
    const int32_t IA = vert ? H : W, IX = vert ? W : H;   /* input size along / across */
    const int32_t PA = vert ? p->pad_h : p->pad_w, PX = vert ? p->pad_w : p->pad_h;
    const int32_t ia = vert ? W * C : C, ix = vert ? C : W * C;   /* input steps */
    const int32_t oa = vert ? OW * C : C, ox = vert ? C : OW * C; /* output steps */
    /* outputs per buffer tile (in fours when a line takes several: no short passes between) */
    const int32_t tile = NA <= (TC_DWM_COLS - 3) / LS + 1 ? NA : ((TC_DWM_COLS - 3) / LS + 1) & ~3;
    /* three line slots; a predicated pass near a tile's end reads up to 3 S columns past its
     * last one (outputs not stored): the slack keeps those reads inside the buffer */
    int8_t buf[3 * TC_DWM_COLS * 16 + 6 * 16];
    float32x4_t wf[4 * 9]; /* the slice's weights: [block][t * 3 + u] */
    tc_dwm_blk_t blk[4];
    tc_dwm_line_t L;
    void (*line)(const tc_dwm_line_t *L);
    int clamp = 0; /* the assembly passes saturate to int8: a narrower clamp afterwards */
    int32_t c, n, c0, i;
    if ((LS != 1 && LS != 2) || XS < 1 || 3 * oa + 3 > 65535) {
        return 0;
    }
    if (in == out && NA > tile) { /* in place: a whole line in one tile */
        return 0;
    }
    L.w = wf;
    L.k = blk;
    L.os = oa;
    L.off = p->out_offset;
    L.lo = p->act_min;
    L.hi = p->act_max;
    L.scalar = 0;
    /* the assembly passes: TFLite's requantization with right shifts, no clamp narrower than
     * int8, optimized builds; else the passes in C */
    line = TC_ASM_LOOPS ? (LS == 1 ? tc_dwm_line_s1 : tc_dwm_line_s2) : 0;
    for (c = 0; c < C; c++) {
        const int32_t s = p->shift[c];
        if (s > 31 && TC_ONNX_VARIANT) {
            L.scalar = 1;
        }
        if (s > -1 || s < -31) {
            line = 0;
        }
    }
    if (!line) {
        line = LS == 1 ? tc_dwm_line_c1 : tc_dwm_line_c2;
    } else {
        clamp = L.lo > -128 || L.hi < 127;
    }
    for (i = 0; i < 4; i++) { /* outputs 0, 1 of channel i; outputs 2, 3 */
        int32_t b;
        for (b = 0; b < 4; b++) {
            blk[b].offs[0][2 * i] = (uint16_t)i;
            blk[b].offs[0][2 * i + 1] = (uint16_t)(oa + i);
            blk[b].offs[1][2 * i] = (uint16_t)(2 * oa + i);
            blk[b].offs[1][2 * i + 1] = (uint16_t)(3 * oa + i);
        }
    }
    for (c0 = 0; c0 < C; c0 += 16) {
        const int32_t cs = C - c0 < 16 ? C - c0 : 16;
        tc_dwm_slice(p, c0, cs, vert, wf, blk);
        L.cs = cs;
        for (n = 0; n < p->batches; n++) {
            const int8_t *img = in + n * H * W * C;
            int8_t *oimg = out + n * OH * OW * C;
            int32_t ta;
            for (ta = 0; ta < NA; ta += tile) {
                const int32_t na = NA - ta < tile ? NA - ta : tile;
                const int32_t a0 = ta * LS - PA, ncols = (na - 1) * LS + 3;
                int32_t jv0 = a0 < 0 ? -a0 : 0, jv1 = IA - a0 < ncols ? IA - a0 : ncols;
                int32_t base = INT32_MIN / 2, l;
                if (jv0 > ncols) {
                    jv0 = ncols;
                }
                if (jv1 < jv0) {
                    jv1 = jv0;
                }
                L.ln[0] = buf;
                L.ln[1] = buf + TC_DWM_COLS * 16;
                L.ln[2] = buf + 2 * TC_DWM_COLS * 16;
                L.na = na;
                for (l = 0; l < NL; l++) {
                    const int32_t x0 = l * XS - PX;
                    int32_t d = x0 - base;
                    if (d > 3) {
                        d = 3;
                    }
                    for (; d > 0; d--) { /* lines x0 + 3 - d: rotate one slot */
                        int8_t *f = L.ln[0];
                        const int32_t xx = x0 + 3 - d;
                        L.ln[0] = L.ln[1];
                        L.ln[1] = L.ln[2];
                        L.ln[2] = f;
                        if (xx >= 0 && xx < IX) {
                            tc_dwm_fill(img + xx * ix + (a0 + jv0) * ia + c0, ia, ncols, jv0,
                                        jv1, cs, pad, f);
                        } else {
                            tc_dwm_fill(img, 0, ncols, 0, 0, cs, pad, f);
                        }
                    }
                    base = x0;
                    L.o = oimg + l * ox + ta * oa + c0;
                    line(&L);
                    if (clamp) {
                        tc_dwm_clamp(L.o, oa, na, cs, L.lo, L.hi);
                    }
                }
            }
        }
    }
    return 1;
}

#else

/* Nothing to compile without Helium (ISO C wants a declaration in every translation unit). */
typedef int tc_depthwise_mve_unused_t;

#endif /* TC_MVE */
