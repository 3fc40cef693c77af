/* tinycompile runtime: ONNX quantized operators with onnxruntime's CPU arithmetic, portable C99.
 *
 * onnxruntime (MLAS) requantizes an int32 accumulator with a float32 scale:
 *     y = saturate(round_half_even(float(acc) * scale) + zero_point)
 * where float(acc) and the product are IEEE single-precision operations rounded to nearest
 * even (tc_onnx_requant). Cores with a single-precision FPU do them in hardware; others in
 * libgcc's soft-float routines, which are correctly rounded as well. The final rounding to an
 * integer is done on the float's bits (no FPU rounding mode, no libm). The builds use -std=c99,
 * so no multiply-add is contracted into a fused one. See docs/onnx.md.
 */
#ifndef TC_ONNX_H
#define TC_ONNX_H

#include <stdint.h>

/* round_half_even(float(acc) * scale) + zp, saturated to int8. */
int32_t tc_onnx_requant(int32_t acc, float scale, int32_t zp);
/* round_half_even(v) for |v| < 2^23, saturated to [lo, hi]; v finite. */
int32_t tc_onnx_round_clamp(float v, int32_t lo, int32_t hi);

/* round_half_even(float(float(acc) * s)) for the float32 s of IEEE bits `bits` (positive and
 * finite), limited to +-2^15, in integer arithmetic only: tc_qmath.h's ONNX variant of
 * tc_requant falls back on it (declared there too). Defined in tc_onnx.c. */
int32_t tc_onnx_requant_exact(int32_t acc, int32_t bits);

/* QLinearConv (grouped and depthwise too): NHWC int8 activations, weights
 * [out_c][k_h][k_w][in_c / groups], explicit padding (padded taps count as the input zero
 * point: they add nothing), int32 bias, one float32 scale per output channel. The real weights
 * are w - w_zp[oc] when w_zp is given (uint8 weights with zero point 255, int8 ones with a
 * nonzero one): the accumulator is then sum((x - in_zp) * w) - w_zp[oc] * sum(x - in_zp) over
 * the taps inside the image. Layers with w_zp 0, groups 1 or depthwise run on tc_conv_s8 /
 * tc_dwconv_s8 instead (tinycompile/ops/onnx_conv.py). */
typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t dil_h, dil_w;
    int32_t pad_t, pad_l;
    int32_t groups;
    int32_t in_zp, out_zp;
    const int8_t *weights;
    const int32_t *bias; /* 0: none */
    const float *scale;  /* out_c entries */
    const int32_t *w_zp; /* out_c weight zero points, or 0: all 0 */
} tc_onnx_conv_params_t;

void tc_onnx_conv_s8(const tc_onnx_conv_params_t *p, const int8_t *in, int8_t *out);

/* QLinearMatMul / QGemm with a constant B: rows x depth times [units][depth]^T (real weights
 * w - w_zp[u] when w_zp is given, as for the convolution). */
typedef struct {
    int32_t rows, depth, units;
    int32_t in_zp, out_zp;
    const int8_t *weights; /* [units][depth] */
    const int32_t *bias;   /* 0: none */
    const float *scale;    /* units entries */
    const int32_t *w_zp;   /* units weight zero points, or 0: all 0 */
} tc_onnx_gemm_params_t;

void tc_onnx_gemm_s8(const tc_onnx_gemm_params_t *p, const int8_t *in, int8_t *out);

/* QLinearGlobalAveragePool on NHWC: the sum minus zp * pixels, requantized with
 * scale = x_scale / (y_scale * pixels). */
typedef struct {
    int32_t batches, pixels, channels;
    int32_t in_zp, out_zp;
    float scale;
} tc_onnx_gap_params_t;

void tc_onnx_gap_s8(const tc_onnx_gap_params_t *p, const int8_t *in, int8_t *out);

/* QLinearAdd as MLAS's x86-64 AVX2 kernel: fma(A, ratio_a, fma(B, ratio_b, fixed)), each a
 * fused multiply-add rounded once, then rounded half to even and saturated (fixed = zp_c -
 * fma(ratio_a, zp_a, ratio_b * zp_b), computed at compile time). A one-element B (b_size 1) or
 * one repeating every b_size elements (a trailing broadcast) takes the same formula, as MLAS
 * does for a B that is scalar over a span. A = a + in_off, B = b + in_off: the model's values
 * (uint8 models are stored as int8 minus 128: in_off 128); the result is clamped to [lo, hi]
 * (the model's type) and out_off added (-128 for uint8). */
typedef struct {
    int32_t size, b_size;
    float ratio_a, ratio_b, fixed;
    int32_t in_off, lo, hi, out_off;
} tc_onnx_add_params_t;

void tc_onnx_add_s8(const tc_onnx_add_params_t *p, const int8_t *a, const int8_t *b,
                    int8_t *out);

/* QLinearMul as MLAS's x86-64 kernel: round_half_even(float((a - zp_a) * (b - zp_b)) * scale +
 * float(zp_c)), the product and the sum each rounded to float32, saturated to [lo, hi] (the
 * model's type), then out_off added (-128 for uint8 models, stored as int8 - 128); scale =
 * (a_scale * b_scale) / c_scale, out_zp the model's zero point zp_c (uint8: 0..255). Cores
 * without a single-precision FPU (TC_FPU_SP 0: Cortex-M0+, the host) look the result up
 * instead: it rises with the integer product, and thresholds[k] is the least product whose
 * stored output is at least k - 127 (computed at compile time with the same float32 steps), so
 * the output is -128 plus the count of thresholds <= the product (a binary search). b repeats
 * every b_size elements. */
typedef struct {
    int32_t size, b_size;
    int32_t a_zp, b_zp;
    int32_t lo, hi, out_off;
    float scale, out_zp;
    const int32_t *thresholds; /* 255 entries, nondecreasing */
} tc_onnx_mul_params_t;

void tc_onnx_mul_s8(const tc_onnx_mul_params_t *p, const int8_t *a, const int8_t *b,
                    int8_t *out);

/* QLinearAveragePool on NHWC: per window, in float32, the sum (rows, then columns) of
 * x_scale * (q - zp) (the 256 values tabulated), divided by the tap count (the window clipped to
 * the image, or the whole window with count_include_pad), then round_half_even(y / y_scale +
 * y_zp), saturated. */
typedef struct {
    int32_t batches, in_h, in_w, channels, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, pad_t, pad_l;
    int32_t include_pad, out_zp; /* the model's zero point */
    int32_t lo, hi, out_off;      /* the model's type range; what is added to store it */
    float y_scale;
    const float *deq; /* 256 entries, indexed by the input byte */
} tc_onnx_avgpool_params_t;

void tc_onnx_avgpool_s8(const tc_onnx_avgpool_params_t *p, const int8_t *in, int8_t *out);

/* QLinearSoftmax along the last axis as onnxruntime 1.32: exp_table[d] = float(exp(...)) for
 * d = max - x; per row the float32 sum in order, then round_half_even(float((e * y_scale) / sum))
 * with the product and the quotient in double (libgcc's soft-float routines on Cortex-M, exact),
 * saturated to [lo, hi] (the model's type range minus its zero point), plus out_off (the zero
 * point, minus 128 for uint8 models stored as int8 - 128). */
typedef struct {
    int32_t rows, depth, lo, hi, out_off;
    float y_scale; /* floor(1 / output scale) */
    const float *exp_table; /* 256 entries */
} tc_onnx_softmax_params_t;

void tc_onnx_softmax_s8(const tc_onnx_softmax_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_ONNX_H */
