/* tinycompile runtime: FULLY_CONNECTED (int8). Kernel: firmware/kernels/tc_fully_connected.c.
 *
 * Semantics of TensorFlow Lite Micro's reference FullyConnected / FullyConnectedPerChannel:
 * int32 accumulation of weights * (input - input_zero_point) plus bias, then
 * MultiplyByQuantizedMultiplier, + output zero point, clamp. As for the convolutions the
 * compiler folds the input offset into bias_eff[c] = bias[c] + in_offset * sum(weights[c]), so
 * each output is a pure int8 dot product. Weights [out_c][depth] (TFLite's).
 */
#ifndef TC_FULLY_CONNECTED_H
#define TC_FULLY_CONNECTED_H

#include <stdint.h>

typedef struct {
    int32_t batches;            /* rows of the flattened input */
    int32_t depth;              /* accumulation depth (weights' last dimension) */
    int32_t out_c;
    int32_t out_offset;
    int32_t act_min, act_max;
    int32_t per_channel;        /* 1: mult/shift hold out_c entries, 0: one entry */
    const int8_t *weights;      /* [out_c][depth] */
    const int32_t *bias_eff;    /* [out_c] bias + in_offset * sum(weights[c]) */
    const int32_t *mult;
    const int32_t *shift;
} tc_fc_params_t;

void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_FULLY_CONNECTED_H */
