/* tinycompile runtime: ARG_MAX and ARG_MIN, int8 in, int32 indices out (tc_argminmax_s8;
 * firmware/kernels/tc_argminmax.c).
 *
 * Semantics follow TensorFlow Lite Micro's arg_min_max.cc (reference/arg_min_max.h): the input
 * is viewed as [outer][axis_size][inner]; out[o][i] is the index along the axis of the first
 * largest (is_max) or smallest value, ties going to the lowest index. Parameters from
 * tinycompile/ops/argminmax.py.
 */
#ifndef TC_ARGMINMAX_H
#define TC_ARGMINMAX_H

#include <stdint.h>

typedef struct {
    int32_t outer;
    int32_t axis_size;
    int32_t inner;
    int32_t is_max; /* 1: ARG_MAX, 0: ARG_MIN */
} tc_argminmax_params_t;

void tc_argminmax_s8(const tc_argminmax_params_t *p, const int8_t *in, int32_t *out);

#endif /* TC_ARGMINMAX_H */
