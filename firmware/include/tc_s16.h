/* tinycompile runtime: the 16x8 fast kernels (int16 activations, int8 weights) of CONV_2D,
 * FULLY_CONNECTED, DEPTHWISE_CONV_2D, ADD and the pools. Kernels: firmware/kernels/
 * tc_conv2d_int16_fast.c (CONV_2D, FULLY_CONNECTED), tc_depthwise_int16.c,
 * tc_elementwise_int16.c (ADD), tc_pool_int16.c.
 *
 * Same results as TFLM's int16 kernels (and tc_conv_s16 & co., which stay for the layers these
 * do not take): the compiler (tinycompile/ops/s16_fast.py) gives a layer to them only where
 * int32 sums and the 32-bit requantization are exact, and lays the weights out for them:
 *   - CONV_2D / FULLY_CONNECTED: quads of four output channels interleaved by groups of four
 *     taps, each channel's four bytes in tap order 0, 2, 1, 3, stored as w + 128 (uint8); a
 *     convolution's window rows (k_w * in_c taps each) padded to seg_p taps (a multiple of 4);
 *   - DEPTHWISE_CONV_2D: [k_h][k_w][ceil(out_c / 4)][4] int8, channels 0, 2, 1, 3 per block;
 *   - rq: per output channel {bias, m, 2^(sh - 1), sh} (int32): the output is
 *     clamp((floor((bias + x . w) * m / 2^32) + 2^(sh - 1)) >> sh).
 */
#ifndef TC_S16_H
#define TC_S16_H

#include <stdint.h>

#include "tc_elementwise.h"
#include "tc_pool.h"

typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
    int32_t seg_p;              /* a window row's taps (k_w * in_c; FC: depth) padded to 4 */
    int32_t depth_mult;         /* DEPTHWISE_CONV_2D */
    int32_t act_min, act_max;
    const void *weights;        /* the layout above (uint8 quads, or int8 depthwise blocks) */
    const int32_t *rq;          /* [out_c][4] */
} tc_s16q_params_t;

void tc_conv_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out);
/* FULLY_CONNECTED: batches rows of in_c (the depth) values; in_h = in_w = k_h = k_w = 1. */
void tc_fc_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out);
void tc_dwconv_s16q(const tc_s16q_params_t *p, const int16_t *in, int16_t *out);

/* ADD (tc_elementwise_int16.c): tc_add_s16's results for zero points 0 and shifts <= 0. */
void tc_add_s16q(const tc_add_params_t *p, const int16_t *in1, const int16_t *in2, int16_t *out);
/* Pools (tc_pool_int16.c): tc_avgpool_s16 / tc_maxpool_s16's results. */
void tc_avgpool_s16q(const tc_pool_params_t *p, const int16_t *in, int16_t *out);
void tc_maxpool_s16q(const tc_pool_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_S16_H */
