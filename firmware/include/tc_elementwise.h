/* tinycompile runtime: int8 binary elementwise operators (ADD, MUL, with broadcasting).
 * Kernels: firmware/kernels/tc_elementwise.c, the int8 MUL in tc_elementwise_mul.c (MEAN is in
 * tc_mean.h / tc_mean.c).
 *
 * Semantics follow TensorFlow Lite Micro's reference kernels (add_common.cc / integer_ops/add.h,
 * mul_common.cc / integer_ops/mul.h); every multiplier, shift and offset is computed at compile
 * time by tinycompile/ops/elementwise.py. Written from the documented semantics, not copied.
 *
 * Broadcasting: the compiler merges the output shape into at most TC_EW_MAX_DIMS loops
 * (outermost first) and gives, per loop, the element stride of each input (0 where that input
 * is broadcast). rank 0 means "no broadcasting": both inputs and the output are flat arrays of
 * `size` elements. The output is always contiguous, so ADD and MUL may run in place over the
 * first input when it is not broadcast (each element is read before it is written).
 */
#ifndef TC_ELEMENTWISE_H
#define TC_ELEMENTWISE_H

#include <stdint.h>

#define TC_EW_MAX_DIMS 6

typedef struct {
    int32_t size;            /* output elements */
    int32_t rank;            /* 0: flat, no broadcasting; else number of loops (<= 6) */
    const int32_t *dims;     /* rank loop extents, outermost first */
    const int32_t *stride1;  /* rank element strides of the first input (0: broadcast) */
    const int32_t *stride2;  /* rank element strides of the second input (0: broadcast) */
    int32_t in1_offset;      /* -zero_point of input 1 */
    int32_t in2_offset;      /* -zero_point of input 2 */
    int32_t left_shift;      /* 20 for int8, 15 for int16 */
    int32_t in1_multiplier;
    int32_t in1_shift;       /* <= 0 */
    int32_t in2_multiplier;
    int32_t in2_shift;       /* <= 0 */
    int32_t out_multiplier;
    int32_t out_shift;       /* <= 0 */
    int32_t out_offset;      /* zero_point of the output */
    int32_t act_min;
    int32_t act_max;
    const int32_t *in1_table; /* int8 ADD: [256] the rescaled input 1 of every int8 value v at
                                 [v + 128] (in1_offset, left_shift, in1 multiplier and shift
                                 applied at compile time), or 0: computed per element */
    const int32_t *in2_table; /* the same for input 2 */
    /* int8 ADD's exact linear forms (tinycompile/ops/elem_fast.py: found at compile time and
     * checked against TFLM's result for all 65,536 input pairs; 0 where none was found):
     * lin_k > 0: out = clamp((x * lin_p + y * lin_q + lin_r) >> lin_k), int32 sums wrapping;
     * dsp_ok: out = clamp((dsp_r + floor(dsp_p * x / 256) + floor(dsp_q * y / 256)) >> 16). */
    int32_t lin_k, lin_p, lin_q, lin_r;
    int32_t dsp_ok, dsp_p, dsp_q, dsp_r;
} tc_add_params_t;

typedef struct {
    int32_t size;
    int32_t rank;
    const int32_t *dims;
    const int32_t *stride1;
    const int32_t *stride2;
    int32_t in1_offset;      /* -zero_point of input 1 */
    int32_t in2_offset;      /* -zero_point of input 2 */
    int32_t out_multiplier;
    int32_t out_shift;       /* any sign */
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    /* int8 MUL's exact forms (tinycompile/ops/mul_fast.py: checked against TFLM's result for
     * all 65,536 input pairs; 0 where a form does not hold), fast paths of
     * tc_elementwise_mul.c: dsp_r > 0: Cortex-M4/M7, q = 2^(r-1) + out_offset * 2^r;
     * m0_r > 0: the 32-bit form of other cores, P = m0_ph * 2^15 + m0_pl ~ out_multiplier / 2,
     * out = clamp((((t * m0_ph + ((t * m0_pl) >> 15) + m0_rm) >> 15) + m0_rh + (t >> 31))
     * >> m0_r) with t the product of the offset inputs. */
    int32_t dsp_q, dsp_r;
    int32_t m0_ph, m0_pl, m0_rm, m0_rh, m0_r;
} tc_mul_params_t;

void tc_add_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out);
void tc_mul_s8(const tc_mul_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out);

/* 16x8 (int16, zero points 0): the same arithmetic on int16 elements; ADD with left_shift 15
 * (TFLM's general-scale int16 path), clamps in the int16 range. */
void tc_add_s16(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out);
void tc_mul_s16(const tc_mul_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out);

#endif /* TC_ELEMENTWISE_H */
