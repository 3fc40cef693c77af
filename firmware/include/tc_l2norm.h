/* tinycompile runtime: L2_NORMALIZATION, int8 (tc_l2norm_s8; firmware/kernels/tc_l2norm.c).
 *
 * Semantics follow TensorFlow Lite Micro's l2norm.cc with reference/integer_ops/
 * l2normalization.h: per row of `depth` elements, the sum of squared offset inputs goes through
 * GetInvSqrtQuantizedMultiplierExp (gemmlowp Newton-Raphson) and every offset input is scaled
 * by it into the output scale 1/128 (zero point 0). Parameters from tinycompile/ops/l2norm.py.
 */
#ifndef TC_L2NORM_H
#define TC_L2NORM_H

#include <stdint.h>

typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t in_zero_point;
} tc_l2norm_params_t;

void tc_l2norm_s8(const tc_l2norm_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_L2NORM_H */
