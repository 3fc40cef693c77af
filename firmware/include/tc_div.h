/* tinycompile runtime: int8 DIV with broadcasting (kernel: firmware/kernels/tc_div.c).
 *
 * Semantics of TensorFlow Lite Micro's div.cc (reference/div.h). The compiler
 * (tinycompile/ops/div.py) computes the output multiplier and shift and, for every divisor
 * byte, GetReciprocal's multiplier and exponent of |divisor - zero point|. Broadcasting as in
 * tc_elementwise.h: `rank` merged loops (0: flat) with per-input element strides.
 */
#ifndef TC_DIV_H
#define TC_DIV_H

#include <stdint.h>

typedef struct {
    int32_t size;
    int32_t rank;
    const int32_t *dims;
    const int32_t *stride1;
    const int32_t *stride2;
    int32_t in1_offset;       /* -zero_point of the dividend */
    int32_t in2_offset;       /* -zero_point of the divisor */
    int32_t out_multiplier;   /* input1_scale / (input2_scale * output_scale) */
    int32_t out_shift;        /* its exponent (<= 22) */
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    const int32_t *inv;       /* 256, by the divisor's byte: 1/|divisor| in Q0.31 */
    const int8_t *inv_shift;  /* 256: its exponent */
} tc_div_params_t;

void tc_div_s8(const tc_div_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out);

/* Unquantized int32 DIV (TFLM's EvalDiv<int32_t>): in1 / in2 truncating toward zero, clamped.
 * A zero divisor gives 0 and INT32_MIN / -1 gives INT32_MIN (TFLM's x86 build traps on both). */
typedef struct {
    int32_t size;
    int32_t rank;             /* 0: flat; else merged broadcast loops as tc_div_params_t */
    const int32_t *dims;
    const int32_t *stride1;
    const int32_t *stride2;
    int32_t act_min;
    int32_t act_max;
} tc_div_s32_params_t;

void tc_div_s32(const tc_div_s32_params_t *p, const int32_t *in1, const int32_t *in2,
                int32_t *out);

#endif /* TC_DIV_H */
