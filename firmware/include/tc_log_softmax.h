/* tinycompile runtime: LOG_SOFTMAX, int8 (tc_log_softmax_s8; firmware/kernels/tc_log_softmax.c).
 *
 * Semantics follow TensorFlow Lite Micro's log_softmax.cc with reference/log_softmax.h
 * (LogSoftmaxQuantized): per row of `depth` elements, with d = max - x, the sum of exp(-d) in
 * Q12.19, its logarithm in Q5.26 (gemmlowp fixed point, on the device), then
 * out = clamp(RoundingDivideByPOT(diff_q5[d] - log_sum, 22) + 127) for d above the row's
 * adjusted minimum difference, -128 below it. Output scale 16/256, zero point 127. What
 * depends on d alone (exp and the rescaled difference) is tabulated by tinycompile/ops/
 * log_softmax.py.
 */
#ifndef TC_LOG_SOFTMAX_H
#define TC_LOG_SOFTMAX_H

#include <stdint.h>

typedef struct {
    int32_t rows;
    int32_t depth;
    int32_t diff_min;           /* -CalculateInputRadius(5, input left shift) */
    int32_t reverse_multiplier; /* reverse scaling divisor (Q0.31) */
    int32_t reverse_shift;      /* its signed shift (<= 0) */
    const int32_t *exp_lut;     /* [256] by d = max - x: Rescale<12>(exp(diff)), 0 below diff_min */
    const int32_t *diff_lut;    /* [256] by d: the difference in Q5.26, 0 below diff_min */
} tc_log_softmax_params_t;

void tc_log_softmax_s8(const tc_log_softmax_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_LOG_SOFTMAX_H */
