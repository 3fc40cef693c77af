/* tinycompile runtime: EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL with
 * broadcasting, writing bool tensors (one byte, 0 or 1). Kernel: firmware/kernels/tc_compare.c.
 *
 * Semantics of TensorFlow Lite Micro's comparisons.cc with reference/comparisons.h: int8 inputs
 * are always rescaled (ComparisonWithScaling: (q + offset) << left_shift, times each input's
 * own scale as a multiplier below one), int32 and bool inputs are compared as they are. The
 * multipliers, shifts and broadcast loops are computed at compile time by
 * tinycompile/ops/compare.py. Written from the documented semantics, not copied.
 */
#ifndef TC_COMPARE_H
#define TC_COMPARE_H

#include <stdint.h>

enum { TC_CMP_EQ = 0, TC_CMP_NE = 1, TC_CMP_LT = 2, TC_CMP_LE = 3, TC_CMP_GT = 4, TC_CMP_GE = 5 };

typedef struct {
    int32_t size;           /* output elements */
    int32_t rank;           /* merged loops (>= 1) */
    const int32_t *dims;
    const int32_t *stride1; /* element strides of input 1 per loop (0: broadcast) */
    const int32_t *stride2;
    int32_t cmp;            /* TC_CMP_* */
    int32_t left_shift;     /* int8: TFLM's kLeftShift (8) */
    int32_t in1_offset;     /* int8: -zero point */
    int32_t in1_multiplier;
    int32_t in1_shift;      /* <= 0 */
    int32_t in2_offset;
    int32_t in2_multiplier;
    int32_t in2_shift;
} tc_compare_params_t;

void tc_compare_s8(const tc_compare_params_t *p, const int8_t *in1, const int8_t *in2,
                   uint8_t *out);
void tc_compare_s32(const tc_compare_params_t *p, const int32_t *in1, const int32_t *in2,
                    uint8_t *out);
/* bool (EQUAL, NOT_EQUAL) */
void tc_compare_b(const tc_compare_params_t *p, const uint8_t *in1, const uint8_t *in2,
                  uint8_t *out);

#endif /* TC_COMPARE_H */
