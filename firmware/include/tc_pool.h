/* tinycompile runtime: int8 pooling (AVERAGE_POOL_2D, MAX_POOL_2D), portable C99.
 *
 * Semantics of TensorFlow Lite Micro's reference int8 kernels: the window is clipped to the
 * image (padding is never counted), average pooling rounds the sum half away from zero with a
 * truncating integer division by the number of taps inside the image, max pooling starts from
 * -128; both clamp to the fused activation's range. Input and output share one quantization.
 */
#ifndef TC_POOL_H
#define TC_POOL_H

#include <stdint.h>

typedef struct {
    int32_t batches;
    int32_t in_h, in_w, channels;
    int32_t out_h, out_w;
    int32_t f_h, f_w;           /* window size */
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;       /* top / left padding */
    int32_t act_min, act_max;
} tc_pool_params_t;

void tc_avgpool_s8(const tc_pool_params_t *p, const int8_t *in, int8_t *out);
void tc_maxpool_s8(const tc_pool_params_t *p, const int8_t *in, int8_t *out);
/* 16x8: int16 activations (max pooling starts from -32768). */
void tc_avgpool_s16(const tc_pool_params_t *p, const int16_t *in, int16_t *out);
void tc_maxpool_s16(const tc_pool_params_t *p, const int16_t *in, int16_t *out);

#endif /* TC_POOL_H */
