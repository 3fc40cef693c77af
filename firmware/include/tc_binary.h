/* tinycompile runtime: more int8 binary elementwise operators, with broadcasting: SUB.
 * Kernels: firmware/kernels/tc_binary.c (ADD and MUL are in tc_elementwise.h).
 *
 * Semantics follow TensorFlow Lite Micro's reference kernels (sub.cc / sub_common.cc with
 * reference/sub.h). Every multiplier, shift and offset is computed at compile time by the
 * operator units in tinycompile/ops/. Broadcasting as in tc_elementwise.h: `rank` merged loops
 * (0: flat, no broadcasting) with per-input element strides (0 where broadcast).
 */
#ifndef TC_BINARY_H
#define TC_BINARY_H

#include <stdint.h>

#include "tc_elementwise.h"

/* SUB takes ADD's parameters (TFLM's CalculateOpDataSub computes the same ones). */
void tc_sub_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out);

#endif /* TC_BINARY_H */
