/* tinycompile runtime: SVDF (int8 input and output, int16 or int8 activation state).
 * Kernel: firmware/kernels/tc_svdf.c.
 *
 * Semantics of TensorFlow Lite Micro's EvalIntegerSvdfReference (svdf_common.cc): each call
 * shifts the state (the variable tensor, [batches][filters][memory]) one step to the left, writes
 * each filter's feature, requantize(weights_feature . (input - input_zp)) + state_zp clamped to
 * the state type, into the newest slot, then for each unit sums over its `rank` filters the
 * dot product of weights_time with (state - state_zp), adds the bias, requantizes, adds the
 * output zero point and clamps to int8 (TFLM applies no fused activation on this path).
 * The compiler folds the input offset into feat_bias[f] = -input_zp * sum(weights_feature[f]).
 */
#ifndef TC_SVDF_H
#define TC_SVDF_H

#include <stdint.h>

typedef struct {
    int32_t batches, input_size, filters, rank, memory; /* units = filters / rank */
    int32_t feat_mult, feat_shift;  /* input * weights_feature -> state scale */
    int32_t state_zp;
    int32_t out_mult, out_shift;    /* state * weights_time -> output scale */
    int32_t out_zp;
    const int8_t *weights_feature;  /* [filters][input_size] */
    const int32_t *feat_bias;       /* [filters] folded input offset */
    const void *weights_time;       /* [filters][memory], the state's type */
    const int32_t *bias;            /* [units] */
} tc_svdf_params_t;

void tc_svdf_s8_s16(const tc_svdf_params_t *p, const int8_t *in, int16_t *state, int8_t *out);
void tc_svdf_s8_s8(const tc_svdf_params_t *p, const int8_t *in, int8_t *state, int8_t *out);

#endif /* TC_SVDF_H */
