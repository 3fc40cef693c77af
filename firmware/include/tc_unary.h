/* tinycompile runtime: elementwise unary operators beyond the int8 lookup table (kernels:
 * firmware/kernels/tc_unary.c). int8 ABS and ELU run as 256-entry tables through tc_lut_s8
 * (tc_activations.h); int16 inputs have too many values for a table.
 */
#ifndef TC_UNARY_H
#define TC_UNARY_H

#include <stdint.h>

typedef struct {
    int32_t size;
    int32_t rescale;     /* 0: input and output scales equal, no requantization */
    int32_t multiplier;  /* input_scale / output_scale (QuantizeMultiplier) */
    int32_t shift;
} tc_abs_s16_params_t;

/* 16x8 ABS (zero points 0): |x| requantized, clamped to int16. May run in place. */
void tc_abs_s16(const tc_abs_s16_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_UNARY_H */
