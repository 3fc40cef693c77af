/* tinycompile runtime: FULLY_CONNECTED (int8). Kernel: firmware/kernels/tc_fully_connected.c.
 *
 * Semantics of TensorFlow Lite Micro's reference FullyConnected / FullyConnectedPerChannel:
 * int32 accumulation of weights * (input - input_zero_point) plus bias, then
 * MultiplyByQuantizedMultiplier, + output zero point, clamp. As for the convolutions the
 * compiler folds the input offset into bias_eff[c] = bias[c] + in_offset * sum(weights[c]), so
 * each output is a pure int8 dot product.
 *
 * Weights (int8 kernel): not TFLite's [out_c][depth] but a copy re-laid out by the compiler
 * (tinycompile/ops/fully_connected.py, weight_quads), the same out_c * depth bytes: quads of
 * four output channels, quad c0 (n = min(4, out_c - c0) channels) at byte c0 * depth; in it,
 * for each group g < depth / 4 of four depth values, the four bytes [4g, 4g + 4) of each of
 * the n channels (4n bytes a group), then the depth % 4 last values of each channel. Every
 * byte is w + 128 (uint8); the kernel subtracts 128 * sum(input row). One load then reads 16
 * weights of a quad on Cortex-M4/M7, LDRB with immediate offsets reads them on ARMv6-M.
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
    int32_t per_channel;        /* 1: mult/shift hold out_c entries, 0: one entry (four
                                   copies of it for out_c >= 4: the ARMv6-M path reads
                                   them for each block of four channels) */
    int32_t rq_smmlar;          /* 1: the DSP kernel may requantize with SMMLAR (the compiler
                                   checked the ranges: fully_connected.py, smmlar_ok) */
    const uint8_t *weights;     /* w + 128 in quads (above); word-aligned */
    const int32_t *bias_eff;    /* [out_c] bias + in_offset * sum(weights[c]) */
    const int32_t *mult;
    const int32_t *shift;
} tc_fc_params_t;

void tc_fc_s8(const tc_fc_params_t *p, const int8_t *in, int8_t *out);

/* 16x8: int16 input and output (zero point 0), int8 weights, int64 bias; TFLM's int16
 * FullyConnected(PerChannel): int64 accumulator, tc_requant64 (one rounding), clamp. */
typedef struct {
    int32_t batches, depth, out_c;
    int32_t act_min, act_max;
    int32_t per_channel;        /* 1: rm/ts hold out_c entries, 0: one entry */
    const int32_t *rm;          /* reduced Q15 multipliers (tc_requant64) */
    const int32_t *ts;          /* total right shifts */
    const int8_t *weights;      /* [out_c][depth] (TFLite's) */
    const int64_t *bias;        /* [out_c] (zeros when the model has none) */
} tc_fc_s16_params_t;

void tc_fc_s16(const tc_fc_s16_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_FULLY_CONNECTED_H */
