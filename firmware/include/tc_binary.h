/* tinycompile runtime: more int8 binary elementwise operators, with broadcasting: SUB, MAXIMUM,
 * MINIMUM, SQUARED_DIFFERENCE, PRELU.
 * Kernels: firmware/kernels/tc_binary.c (ADD and MUL are in tc_elementwise.h).
 *
 * Semantics follow TensorFlow Lite Micro's reference kernels (sub.cc / sub_common.cc with
 * reference/sub.h, maximum_minimum.cc, squared_difference.cc, prelu.cc / prelu_common.cc). Every multiplier, shift and offset is computed at compile time by the
 * operator units in tinycompile/ops/. Broadcasting as in tc_elementwise.h: `rank` merged loops
 * (0: flat, no broadcasting) with per-input element strides (0 where broadcast).
 */
#ifndef TC_BINARY_H
#define TC_BINARY_H

#include <stdint.h>

#include "tc_elementwise.h"

/* SUB takes ADD's parameters (TFLM's CalculateOpDataSub computes the same ones). */
void tc_sub_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out);
/* 16x8 SUB: the same on int16 elements, left_shift 15. */
void tc_sub_s16(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out);

/* MAXIMUM, MINIMUM: the raw int8 values compared, no requantization (as TFLM). */
typedef struct {
    int32_t size;
    int32_t rank;
    const int32_t *dims;
    const int32_t *stride1;
    const int32_t *stride2;
} tc_bcast_params_t;

void tc_maximum_s8(const tc_bcast_params_t *p, const int8_t *in1, const int8_t *in2,
                   int8_t *out);
void tc_minimum_s8(const tc_bcast_params_t *p, const int8_t *in1, const int8_t *in2,
                   int8_t *out);

/* SQUARED_DIFFERENCE takes ADD's parameters too: left_shift 7, the output multiplier of any
 * sign (TFLM's QuantizeMultiplier), act_min/act_max the int8 range. */
void tc_squared_difference_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2,
                              int8_t *out);

/* PRELU: input 1 is the input, input 2 alpha (broadcast against it). Non-negative offset inputs
 * are requantized by multiplier 1, negative ones times their offset alpha by multiplier 2. */
typedef struct {
    int32_t size;
    int32_t rank;
    const int32_t *dims;
    const int32_t *stride1;
    const int32_t *stride2;
    int32_t in_offset;       /* -zero_point of the input */
    int32_t alpha_offset;    /* -zero_point of alpha */
    int32_t multiplier1;     /* input_scale / output_scale */
    int32_t shift1;          /* any sign */
    int32_t multiplier2;     /* input_scale * alpha_scale / output_scale */
    int32_t shift2;          /* any sign */
    int32_t out_offset;
} tc_prelu_params_t;

void tc_prelu_s8(const tc_prelu_params_t *p, const int8_t *in, const int8_t *alpha, int8_t *out);

#endif /* TC_BINARY_H */
