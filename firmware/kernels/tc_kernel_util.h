/* tinycompile runtime, internal: helpers shared by the kernel files (not part of the public
 * API; lives beside the kernels, so generated code never includes it).
 *
 * Everything here is static inline, so every kernel file stays self-contained:
 *   - TC_DSP: 1 where the core has the DSP extension (__ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55),
 *     else 0; TC_MVE: 1 where it has Helium (Cortex-M55), else 0;
 *     TC_ASM_LOOPS: 0 at -O0, where the register-hungry assembly loops give way to C;
 *     then the DSP building blocks of tc_dsp.h (word loads, SXTB16, the DSP requantizations);
 *   - tc_out_s8: requantize (tc_qmath.h's tc_requant_conv: TFLite's tc_requant, or its ONNX
 *     variant for ONNX layers) + output offset + activation clamp; tc_out_s16 for 16x8 ops;
 *   - the int8 dot products for CONV_2D and FULLY_CONNECTED (tc_dot.h, portable, and
 *     tc_dot_dsp.h, DSP: identical results). They are shared by both operators and must inline
 *     into their loops, which is why these fast paths live in headers rather than in a
 *     tc_*_dsp.c file;
 *   - tc_clz32 (the softmax kernels' count of leading zeros);
 *   - convolution window geometry (valid taps, interior output range), shared by CONV_2D and
 *     DEPTHWISE_CONV_2D, and the in-place pointwise walks;
 *   - declarations of the out-of-line fast paths defined in tc_*_dsp.c.
 * The ARMv6-M helpers are in tc_m0.h.
 */
#ifndef TC_KERNEL_UTIL_H
#define TC_KERNEL_UTIL_H

#include <stdint.h>
#include <string.h>

#include "tc_qmath.h"

/* TC_PORTABLE (the benchmark's baseline, `portable=True` builds): every kernel takes its portable
 * C path on any core: TC_DSP is 0 and the ARMv6-M special paths are off (the compiler's
 * __ARM_ARCH_6M__ is undefined below, in every kernel file, which includes this header before
 * testing it); kernels test TC_DSP or __ARM_ARCH_6M__ only after including this header. */
#if defined(TC_PORTABLE)
#undef __ARM_ARCH_6M__
#define TC_DSP 0
#elif defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define TC_DSP 1
#else
#define TC_DSP 0
#endif

/* TC_MVE: 1 where the core has Helium (M-profile Vector Extension, integer at least:
 * __ARM_FEATURE_MVE bit 0; the Cortex-M55 of qemu-m55), else 0, and 0 in TC_PORTABLE builds.
 * Such a core has the DSP extension too (TC_DSP 1): a kernel with a Helium path tests TC_MVE
 * first; one without keeps its DSP path there. The Helium paths use the ACLE intrinsics of
 * <arm_mve.h> (compiled at every optimization level, -O0 included) and give the portable
 * code's results, byte for byte. */
#if !defined(TC_PORTABLE) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define TC_MVE 1
#include <arm_mve.h>
#else
#define TC_MVE 0
#endif

/* TC_ASM_LOOPS: 1 when GCC optimizes (__OPTIMIZE__: every level but -O0). The DSP loops in
 * inline assembly that hold eight or more values in registers (tc_dot_dsp.h's dot products,
 * tc_depthwise_dsp.c's line steps, tc_conv2d_few_dsp.c's window rows) are compiled only then:
 * at -O0 (STM32CubeIDE's Debug default) GCC keeps every variable on the stack and (GCC 12)
 * loads at most seven asm inputs into registers with an FPU, thirteen operands without one, so
 * those statements fail with "'asm' operand has impossible constraints". At -O0 they take
 * C loops with the ACLE intrinsics instead: the same products, summed in int32 in another
 * order (the additions wrap), so the results are identical. */
#if defined(__OPTIMIZE__)
#define TC_ASM_LOOPS 1
#else
#define TC_ASM_LOOPS 0
#endif

/* Count of leading zero bits (32 for 0): the softmax kernels' CountLeadingZeros. */
TC_INLINE int tc_clz32(uint32_t x)
{
    int n = 0;
    if (x == 0) {
        return 32;
    }
#if defined(__GNUC__)
    n = __builtin_clz(x);
#else
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
#endif
    return n;
}

/* ------------------------------------------------------------------ 16x8 dot product */

/* sum(x[i] * w[i * stride]) of int16 activations and int8 weights, exactly, as TFLM's int64
 * accumulator: each product is below 2^22 in magnitude, so blocks of 256 sum in int32 without
 * overflow and only the block sums are added in 64 bits (cheap on cores without 64-bit adds). */
TC_INLINE int64_t tc_dot_s16_s8(const int16_t *x, const int8_t *w, int32_t n, int32_t stride)
{
    int64_t acc = 0;
    while (n > 0) {
        const int32_t m = n < 256 ? n : 256;
        int32_t part = 0, i;
        for (i = 0; i < m; i++) {
            part += (int32_t)x[i] * w[i * stride];
        }
        acc += part;
        x += m;
        w += m * stride;
        n -= m;
    }
    return acc;
}

/* One int16 output of a 16x8 op: 64-bit requantization, clamp (zero points are 0). */
TC_INLINE int16_t tc_out_s16(int64_t acc, int32_t rm, int32_t ts, int32_t lo, int32_t hi)
{
    return (int16_t)tc_clamp(tc_requant64(acc, rm, ts), lo, hi);
}

/* ------------------------------------------------ DSP building blocks (tc_dsp.h) */

#include "tc_dsp.h"

/* --------------------------------------------------------------------------- output */

/* One int8 output from an int32 accumulator: requantize (TFLite's, or the ONNX variant where
 * shift > 31: tc_requant_conv), add the output zero point, clamp to the fused activation's
 * range (int8's for an ONNX layer). */
TC_INLINE int8_t tc_out_s8(int32_t acc, int32_t mult, int32_t shift, int32_t off, int32_t lo,
                           int32_t hi)
{
    return (int8_t)tc_clamp(tc_requant_conv(acc, mult, shift) + off, lo, hi);
}

/* ------------------------------------------------------ dot products (tc_dot.h) */

#include "tc_dot.h"

/* ------------------------------------------------------------------- window geometry */

/* Range [*lo, *hi) of filter taps t with 0 <= origin + dil * t < size. */
static inline void tc_tap_range(int32_t origin, int32_t dil, int32_t k, int32_t size,
                                int32_t *lo, int32_t *hi)
{
    int32_t a = 0, b = k;
    if (origin < 0) {
        a = (-origin + dil - 1) / dil;
    }
    if (origin + (k - 1) * dil >= size) {
        b = size - origin > 0 ? (size - origin - 1) / dil + 1 : 0;
    }
    if (b < a) {
        b = a;
    }
    *lo = a;
    *hi = b;
}

/* Outputs o in [*lo, *hi) whose whole window o * stride - pad + [0, (k - 1) * dil] is inside
 * [0, size); *hi >= *lo. */
static inline void tc_interior(int32_t n_out, int32_t stride, int32_t pad, int32_t k,
                               int32_t dil, int32_t size, int32_t *lo, int32_t *hi)
{
    int32_t a = pad > 0 ? (pad + stride - 1) / stride : 0;
    int32_t last = size - 1 - (k - 1) * dil + pad; /* largest o * stride allowed */
    int32_t b = last < 0 ? 0 : last / stride + 1;
    if (b > n_out) {
        b = n_out;
    }
    if (a > b) {
        a = b;
    }
    *lo = a;
    *hi = b;
}

/* ----------------------------------------------------- in-place pointwise walks */

/* A 1x1 CONV_2D (stride 1, no groups) in place over n pixels of c input and oc output
 * channels, its input d = in - out bytes from its output (tc_conv2d.h: 0 when both start
 * together, n * (oc - c) when an expanding layer's output ends where its input ends). Pixels
 * run forwards when no output ever reaches input still unread, else backwards. */
TC_INLINE int tc_pw_forward(int32_t d, int32_t n, int32_t c, int32_t oc)
{
    return d >= 0 && (oc <= c || d >= (n - 1) * (oc - c));
}

/* Whether the outputs of pixels [i0, i1) miss those pixels' own input (they are then written
 * in place while it is read). */
TC_INLINE int tc_pw_apart(int32_t d, int32_t i0, int32_t i1, int32_t c, int32_t oc)
{
    return i1 * oc <= d + i0 * c || d + i1 * c <= i0 * oc;
}

/* Whether an in-place pointwise layer's input and output share bytes (else the planner gave
 * them separate buffers and the ordinary path runs). */
TC_INLINE int tc_pw_overlap(const int8_t *in, const int8_t *out, int32_t n, int32_t c,
                            int32_t oc)
{
    return out < in + n * c && in < out + n * oc;
}

/* ------------------------------------------------------- out-of-line fast paths (DSP) */

#if TC_DSP
#include "tc_depthwise.h"

/* tc_depthwise_dsp.c: channels oc .. oc + 3 of an interior DEPTHWISE_CONV_2D pixel, depth
 * multiplier 1, x at the window's first tap of channel oc, w at the channels' weight block;
 * stored at dst[0 .. 3]. */
void tc_dwconv_block4_dsp(const tc_conv_params_t *p, const int8_t *x, const int8_t *w,
                          int32_t oc, int32_t xs, int32_t rs, int8_t *dst);

/* tc_conv2d_dsp.c: CONV_2D's int16 column GEMM (layout described there). tc_col16_window: the
 * window of the output whose top-left tap is input (iy0, ix0) into pixel slot 0 or 1;
 * tc_col16_pixels: c values from x (a 1x1 window read in place) into a slot;
 * tc_conv_col16_pair: every output channel of the two pixels in col (o1 == 0: slot 1 unused). */
void tc_col16_window(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                     int16_t *col, int32_t slot);
/* The column buffer's bytes for windows of k values over in_c channels (the compiler's
 * col16_bytes). */
TC_INLINE int32_t tc_col16_bytes(int32_t k, int32_t in_c)
{
    const int32_t k4 = (k + 3) / 4;
    return k4 * 16 + (in_c % 4 ? k4 * 4 : 0);
}
void tc_col16_pixels(const int8_t *x, int32_t c, int16_t *col, int32_t slot);
/* tc_col16_part: values [k0, k0 + n) of a window (in_c % 4 == 0) into a slot of col's first
 * groups (for tc_conv2d_chunk_dsp.c's chunks); tc_gemm2n_col16: for np channel pairs j,
 * a[4 j .. 4 j + 3] (pixel 0 x channels 0, 1; pixel 1 the same) += ng groups of col against
 * the weights w + 2 j kd (channel 0) and w + (2 j + 1) kd (channel 1). */
void tc_col16_part(const tc_conv_params_t *p, const int8_t *img, int32_t iy0, int32_t ix0,
                   int32_t k0, int32_t n, int16_t *col, int32_t slot);
void tc_gemm2n_col16(const int16_t *col, const int8_t *w, int32_t kd, int32_t ng, int32_t *a,
                     int32_t np);
/* tc_conv2d_dsp.c: a[0] and a[2] (one channel, pixels 0 and 1) += ng groups of col against
 * the weights w. */
void tc_gemm1_col16(const int16_t *col, const int8_t *w, int32_t ng, int32_t *a);
/* The sums of output channels [ob, oe) of a pixel pair, laid out for tc_gemm2n_col16 from
 * channel ob (a lone last channel's pair holds it twice), set to bias_eff. */
TC_INLINE void tc_col16_sums(const tc_conv_params_t *p, int32_t ob, int32_t oe, int32_t *a)
{
    const int32_t *const be = p->bias_eff;
    int32_t oc;
    for (oc = ob; oc < oe; oc += 2, a += 4) {
        a[0] = a[2] = be[oc];
        a[1] = a[3] = oc + 1 < oe ? be[oc + 1] : be[oc];
    }
}
/* a (tc_col16_sums' layout, nc channels from the one whose weights start at w, kd apart) += ng
 * groups of col: the pairs in one call, a lone last channel by itself. */
TC_INLINE void tc_col16_gemm(const int16_t *col, const int8_t *w, int32_t kd, int32_t ng,
                             int32_t nc, int32_t *a)
{
    const int32_t np = nc / 2;
    if (np > 0) {
        tc_gemm2n_col16(col, w, kd, ng, a, np);
    }
    if (nc & 1) {
        tc_gemm1_col16(col, w + 2 * np * kd, ng, a + 4 * np);
    }
}
/* Channels [ob, oe) of a pixel pair from their sums a (tc_col16_sums' layout) to o0 / o1
 * (o1 == o0 for a lone pixel: o0's stored last): tc_rq_smmlar_s8 where the compiler allows
 * (TC_CONV_RQ_SMMLAR), else tc_out2_s8_dsp. */
void tc_col16_out(const tc_conv_params_t *p, const int32_t *a, int32_t ob, int32_t oe, int8_t *o0,
                  int8_t *o1);
/* The in-place ring walk of the column paths (a stride-1 same-size k x k layer with out_c <=
 * in_c, tc_conv2d_inplace.c's ring of R = min(D, H * W) slots, D = pad_h * W + pad_w + 1): per
 * pair of outputs i, i + 1 (two == 0: i alone), load reads every input byte they need (into
 * ctx); then the pending outputs of their slots (i - D and i + 1 - D, whose bytes cover input
 * those windows read) are stored, and emit writes the pair into the slots (o1 == 0: i alone).
 * Inlined into each caller with its own load and emit (tc_conv2d_col_dsp.c: a granted column;
 * tc_conv2d_chunk_dsp.c: chunks), so they become direct calls: a call through a pointer would
 * make the firmware's stack bound count every function whose address it holds. */
typedef void (*tc_ring_load_t)(const tc_conv_params_t *p, const int8_t *img, int32_t i,
                               int two, void *ctx);
typedef void (*tc_ring_emit_t)(const tc_conv_params_t *p, void *ctx, int8_t *o0, int8_t *o1);
TC_INLINE void tc_conv_ring_walk(const tc_conv_params_t *p, int8_t *buf, tc_ring_load_t load,
                                 tc_ring_emit_t emit, void *ctx)
{
    const int32_t H = p->in_h, W = p->in_w, C = p->in_c, OC = p->out_c, HW = H * W;
    const int32_t D = p->pad_h * W + p->pad_w + 1, R = D < HW ? D : HW;
    int8_t *const ring = p->tmp;
    int32_t n, i, k;
    for (n = 0; n < p->batches; n++) {
        const int8_t *const img = buf + n * HW * C;
        int8_t *const dst = buf + n * HW * OC;
        int32_t s0 = 0;
        for (i = 0; i < HW; i += 2) {
            const int two = i + 1 < HW;
            const int32_t s1 = s0 + 1 == R ? 0 : s0 + 1;
            load(p, img, i, two, ctx);
            if (i >= D) {
                memcpy(dst + (i - D) * OC, ring + s0 * OC, (size_t)OC);
            }
            if (two && s1 == s0) {
                /* one slot (D = 1: no padding above or left, a 1x2 or 2x1 window): output i
                 * straight to its place (its bytes cover input pixels <= i, which no later
                 * window reads), i + 1 to the slot */
                emit(p, ctx, dst + i * OC, ring + s0 * OC);
            } else {
                if (two && i + 1 >= D) {
                    memcpy(dst + (i + 1 - D) * OC, ring + s1 * OC, (size_t)OC);
                }
                emit(p, ctx, ring + s0 * OC, two ? ring + s1 * OC : 0);
            }
            s0 = !two ? s1 : (s1 + 1 == R ? 0 : s1 + 1);
        }
        for (k = HW - R; k < HW; k++) {
            memcpy(dst + k * OC, ring + (k % R) * OC, (size_t)OC);
        }
    }
}
/* tc_conv2d_chunk_dsp.c: the column GEMM with its column in chunks on the stack.
 * tc_conv_chunk_ok: whether a layer qualifies (groups 1, k x k, in_c % 4 == 0, at most 32
 * output channels, SMMLAR exact); tc_conv_chunk_range: output pixels [i0, i1) out of place
 * (counted over batches, rows and columns); tc_conv_ring_chunk: in place, through the ring. */
int tc_conv_chunk_ok(const tc_conv_params_t *p);
void tc_conv_chunk_range(const tc_conv_params_t *p, const int8_t *in, int8_t *out, int32_t i0,
                         int32_t i1);
void tc_conv_ring_chunk(const tc_conv_params_t *p, int8_t *buf);
/* tc_conv2d_dsp.c: an in-place pointwise layer without a granted column through the column
 * GEMM with one on the stack, where that pays and fits; 0 (nothing done) elsewhere. */
int tc_conv_pw_inplace_stack(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
/* tc_conv2d_pw_dsp.c: tc_conv_s8's in-place pointwise walk (tc_conv2d.h) on DSP cores when no
 * column buffer was granted. */
void tc_conv_pw_inplace_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
void tc_conv_col16_pair(const tc_conv_params_t *p, const int16_t *col, int32_t k, int8_t *o0,
                        int8_t *o1);

#if TC_MVE
/* tc_conv2d_mve.c: the Helium column GEMM, tried first by every CONV_2D entry on the Cortex-M55
 * (tc_conv_s8, _col, _chunk, tc_conv_few_s8); 1 when it computed the layer, 0 when the layer is
 * not its (grouped, or no room for its column): the DSP paths then run. */
int tc_conv_s8_mve(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#define TC_CONV_MVE tc_conv_s8_mve
#else
#define TC_CONV_MVE(p, in, out) 0
#endif

/* tc_conv2d_dsp.c: the DSP paths tc_conv_s8 tries first; returns how many output pixels it
 * computed, from the first (0: none of its paths applies). */
int32_t tc_conv_s8_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);

/* tc_conv2d_pw_dsp.c: CONV_2D's int8 loops over windows read in place. tc_conv_window_dsp:
 * every output channel of one pixel from its k contiguous window values at x; tc_conv_pw_run:
 * 1x1, stride 1, npix consecutive pixels; tc_conv_pw_strided_row: 1x1, stride_w >= 2, one
 * output row of nx pixels from x. */
void tc_conv_window_dsp(const tc_conv_params_t *p, const int8_t *x, int32_t k, int8_t *out);
void tc_conv_pw_run(const tc_conv_params_t *p, const int8_t *in, int32_t npix, int8_t *out);
void tc_conv_pw_strided_row(const tc_conv_params_t *p, const int8_t *x, int32_t nx,
                            int8_t *out);
/* tc_conv2d_pw_dsp.c: two interior pixels whose windows are k_h rows of seg contiguous values
 * (rows rstep apart, the second window xd bytes after the first; no groups), every output
 * channel, to o0 and o1 (tc_conv2d.c's direct loops and ring). */
void tc_conv_pair_dsp(const tc_conv_params_t *p, const int8_t *x, int32_t xd, int32_t rstep,
                      int32_t seg, int8_t *o0, int8_t *o1);

/* tc_conv2d_few_dsp.c: tc_conv_few_s8 on DSP cores (the whole layer). */
void tc_conv_few_s8_dsp(const tc_conv_params_t *p, const int8_t *in, int8_t *out);
#endif

/* ------------------------------------------------------------ depthwise window taps */

/* One channel of a depthwise window (weights in blocks of four channels, tc_depthwise.h):
 * acc + sum((x + off) * w) over nky x nkx taps, x at the first tap of its channel (taps xstep
 * apart, rows rstep), w at that tap's weight (taps 4 bytes apart, rows wrs). off is the input
 * offset on border windows, 0 where it is folded into the bias. Shared by the portable and the
 * ARMv6-M depthwise kernels. */
TC_INLINE int32_t tc_dw_taps_sum(const int8_t *x, const int8_t *w, int32_t nky, int32_t nkx,
                                 int32_t xstep, int32_t rstep, int32_t wrs, int32_t off,
                                 int32_t acc)
{
    int32_t ky, kx;
    for (ky = 0; ky < nky; ky++) {
        const int8_t *xp = x, *wp = w;
        for (kx = 0; kx < nkx; kx++) {
            acc += (*xp + off) * *wp;
            xp += xstep;
            wp += 4;
        }
        x += rstep;
        w += wrs;
    }
    return acc;
}

#endif /* TC_KERNEL_UTIL_H */