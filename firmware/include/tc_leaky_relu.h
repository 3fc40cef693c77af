/* tinycompile runtime: LEAKY_RELU with int16 activations (16x8), TFLM's QuantizeLeakyRelu
 * (reference leaky_relu.h, leaky_relu_common.cc): zero points 0, a non-negative input scaled by
 * the identity multiplier, a negative one by the alpha multiplier (both TFLM's int32
 * MultiplyByQuantizedMultiplier, computed at compile time from float32 scale ratios), clamped to
 * int16. The int8 LEAKY_RELU is a 256-entry table (tc_lut_s8, tc_activations.h). */
#ifndef TC_LEAKY_RELU_H
#define TC_LEAKY_RELU_H

#include <stdint.h>

typedef struct {
    uint32_t size;      /* number of elements */
    int32_t m_identity; /* input_scale / output_scale: Q31 multiplier and shift */
    int32_t s_identity;
    int32_t m_alpha;    /* input_scale * |alpha| / output_scale */
    int32_t s_alpha;
    int32_t alpha_sign; /* 1, or -1 for a negative alpha (the scaled value is negated) */
} tc_leaky_relu_params_t;

/* May run in place (out == in). */
void tc_leaky_relu_s16(const tc_leaky_relu_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_LEAKY_RELU_H */
