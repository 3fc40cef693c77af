/* tinycompile runtime: activations, softmax, quantize/dequantize (portable C99).
 *
 * Bit-exact with TensorFlow Lite Micro's int8 kernels. Everything that depends only on the
 * quantization parameters is computed at compile time (tinycompile/ops/activations.py):
 * - int8 -> int8 elementwise ops (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, int8
 *   requantizing QUANTIZE) are one 256-entry table indexed by the input's bit pattern;
 * - DEQUANTIZE is a 256-entry table of float bit patterns;
 * - SOFTMAX gets the Q0.31 exp() of every possible (max - x) difference; the row sum,
 *   reciprocal and output scaling run here with gemmlowp's fixed-point arithmetic.
 * Every kernel may run in place (out == in); the float QUANTIZE writes its narrower output
 * over its input's first bytes (it walks forwards), DEQUANTIZE its wider output from its
 * input's first byte on (it walks backwards).
 */
#ifndef TC_ACTIVATIONS_H
#define TC_ACTIVATIONS_H

#include <stdint.h>

typedef struct {
    uint32_t size;      /* number of elements */
    const int8_t *lut;  /* 256 entries, lut[(uint8_t)x] */
} tc_lut_params_t;

/* out[i] = lut[(uint8_t)in[i]] */
void tc_lut_s8(const tc_lut_params_t *p, const int8_t *in, int8_t *out);

typedef struct {
    uint32_t size;      /* number of elements */
    const int8_t *lut;  /* 256 entries, lut[(uint8_t)x] */
    int32_t min_input;  /* inputs below it are refused (RSQRT: the zero point) */
} tc_lut_checked_params_t;

/* As tc_lut_s8, for an op TFLM refuses some inputs of (RSQRT below its zero point: TFLM's Invoke
 * fails). Returns 0, or 1 at the first refused input, leaving the rest of out unwritten. */
int tc_lut_checked_s8(const tc_lut_checked_params_t *p, const int8_t *in, int8_t *out);

typedef struct {
    uint32_t size;
    const uint32_t *lut_bits; /* 256 IEEE-754 float32 bit patterns, indexed by (uint8_t)x */
} tc_dequantize_params_t;

/* out[i] = scale * (in[i] - zero_point), float32, through the table. Not in place. */
void tc_dequantize_s8_f32(const tc_dequantize_params_t *p, const int8_t *in, float *out);

typedef struct {
    uint32_t size;
    uint32_t scale_bits; /* float32 bit pattern of the output scale */
    int32_t zero_point;
} tc_quantize_params_t;

/* out[i] = clamp(round_half_away(in[i] / scale) + zero_point), division in float32. */
void tc_quantize_f32_s8(const tc_quantize_params_t *p, const float *in, int8_t *out);

/* 16x8 interface: float32 -> int16 as tc_quantize_f32_s8 with the int16 range; int16 ->
 * float32 as scale * (q - zero_point) in float32 (TFLM's result; not in place). */
void tc_quantize_f32_s16(const tc_quantize_params_t *p, const float *in, int16_t *out);
void tc_dequantize_s16_f32(const tc_quantize_params_t *p, const int16_t *in, float *out);

typedef struct {
    uint32_t rows;          /* product of all dimensions but the last */
    uint32_t depth;         /* last dimension: softmax runs over it */
    const int32_t *exp_lut; /* 256 entries: exp(beta*scale*(x-max)) in Q0.31 for d = max-x,
                               0 where TFLM skips the difference (d > -diff_min) */
} tc_softmax_params_t;

/* int8 softmax over the last axis; output scale 1/256, zero point -128. */
void tc_softmax_s8(const tc_softmax_params_t *p, const int8_t *in, int8_t *out);
/* The same with an int16 output (scale 1/65536, zero point -32768), as TFLM's keyword models. */
void tc_softmax_s8_s16(const tc_softmax_params_t *p, const int8_t *in, int16_t *out);

/* ---- int16 (16x8) paths, firmware/kernels/tc_activations_int16.c */

typedef struct {
    uint32_t rows;              /* product of all dimensions but the last */
    uint32_t depth;             /* last dimension: softmax runs over it */
    int32_t mult, shift;        /* the difference to the max rescaled so -65535 is -10.0 */
    const int16_t *exp_lut;     /* 513 entries: exp(x) on [-10, 0], TFLM's LUTPopulate */
    const int16_t *recip_lut;   /* 513 entries: 1 / (1 + x) on [0, 1] */
} tc_softmax_s16_params_t;

/* int16 softmax over the last axis (reference_ops::SoftmaxInt16); output scale 1/32768,
 * zero point 0. May run in place. */
void tc_softmax_s16(const tc_softmax_s16_params_t *p, const int16_t *in, int16_t *out);

typedef struct {
    uint32_t size;
    int32_t mult, shift;        /* input: (x * mult + round) >> shift, TFLM's int16 scaling */
    const uint16_t *lut;        /* 256 entries: sigmoid(i / 24) in 0.16 */
} tc_sigmoid16_params_t;

/* int16 LOGISTIC (output 2^-15, reference_integer_ops::Logistic) and TANH (output 2^-15,
 * reference_integer_ops::Tanh); zero points 0. May run in place. */
void tc_logistic_s16(const tc_sigmoid16_params_t *p, const int16_t *in, int16_t *out);
void tc_tanh_s16(const tc_sigmoid16_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_ACTIVATIONS_H */
