/* tinycompile runtime: LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT on bool tensors (one byte, 0 or 1)
 * and SELECT_V2 (a bool condition choosing between int8 or int16 values), with broadcasting.
 * Kernel: firmware/kernels/tc_logic.c.
 *
 * Semantics of TensorFlow Lite Micro's logical.cc / logical_common.cc, elementwise.cc
 * (LOGICAL_NOT) and select.cc (reference_ops::Select / BroadcastSelect5DSlow: the chosen
 * value's bytes copied, no requantization). The broadcast loops are computed at compile time
 * by tinycompile/ops/logic.py. Written from the documented semantics, not copied.
 */
#ifndef TC_LOGIC_H
#define TC_LOGIC_H

#include <stdint.h>

typedef struct {
    int32_t size;           /* output elements */
    int32_t rank;           /* merged loops (>= 1) */
    const int32_t *dims;
    const int32_t *stride1; /* element strides per loop (0: broadcast) */
    const int32_t *stride2;
    int32_t is_or;          /* 0: AND, 1: OR */
} tc_logical_params_t;

void tc_logical_b(const tc_logical_params_t *p, const uint8_t *in1, const uint8_t *in2,
                  uint8_t *out);
void tc_logical_not_b(int32_t size, const uint8_t *in, uint8_t *out);

typedef struct {
    int32_t size;
    int32_t rank;
    const int32_t *dims;
    const int32_t *stride1; /* condition */
    const int32_t *stride2; /* x (taken where the condition holds) */
    const int32_t *stride3; /* y */
} tc_select_params_t;

void tc_select_s8(const tc_select_params_t *p, const uint8_t *cond, const int8_t *x,
                  const int8_t *y, int8_t *out);
void tc_select_s16(const tc_select_params_t *p, const uint8_t *cond, const int16_t *x,
                   const int16_t *y, int16_t *out);

#endif /* TC_LOGIC_H */
