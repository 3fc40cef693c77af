/* tinycompile runtime: RESIZE_BILINEAR (int8). Kernel: firmware/kernels/tc_resize_bilinear.c.
 *
 * Semantics of TensorFlow Lite Micro's resize_bilinear.cc int8 path (reference
 * ResizeBilinearInteger, 10-bit fixed-point source coordinates): the compiler computes, per
 * output row and column, the two source indices and the fractional weight w (in 1/1024ths;
 * negative at half-pixel borders, exactly as TFLM); the kernel forms
 * v00 (1024-wy)(1024-wx) + v10 wy (1024-wx) + v01 (1024-wy) wx + v11 wy wx and rounds it
 * half away from zero by 2^20. No requantization (TFLM copies the input's quantization).
 */
#ifndef TC_RESIZE_BILINEAR_H
#define TC_RESIZE_BILINEAR_H

#include <stdint.h>

typedef struct {
    int32_t batches, in_h, in_w, depth, out_h, out_w;
    const int32_t *ys;   /* [out_h][3]: y0, y1, wy */
    const int32_t *xs;   /* [out_w][3]: x0, x1, wx */
} tc_resize_bilinear_params_t;

void tc_resize_bilinear_s8(const tc_resize_bilinear_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_RESIZE_BILINEAR_H */
