/* tinycompile runtime: RESIZE_BILINEAR, int8 (tc_resize_bilinear_s8; see tc_resize_bilinear.h).
 *
 * Matches TensorFlow Lite Micro's reference ResizeBilinearInteger (built without
 * TFLITE_SINGLE_ROUNDING): the 2^20-scaled weighted sum of the four neighbours, + 2^19 (or
 * - 2^19 when not positive), divided by 2^20 truncating. Source indices and weights come from
 * the compiler's tables. TFLM sums in int64; int32 cannot overflow here: the weights are in
 * [-512, 1536) and sum to 2^20, so |sum| <= 128 * 2048^2 = 2^29.
 */
#include <stdint.h>

#include "tc_resize_bilinear.h"

void tc_resize_bilinear_s8(const tc_resize_bilinear_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth, row = p->in_w * D;
    int32_t b, y, x, c;
    for (b = 0; b < p->batches; b++) {
        const int8_t *img = in + b * p->in_h * row;
        for (y = 0; y < p->out_h; y++) {
            const int32_t *ty = p->ys + 3 * y;
            const int8_t *r0 = img + ty[0] * row, *r1 = img + ty[1] * row;
            const int32_t wy1 = ty[2], wy0 = 1024 - wy1;
            for (x = 0; x < p->out_w; x++) {
                const int32_t *tx = p->xs + 3 * x;
                const int32_t c0 = tx[0] * D, c1 = tx[1] * D;
                const int32_t wx1 = tx[2], wx0 = 1024 - wx1;
                for (c = 0; c < D; c++) {
                    const int32_t s = r0[c0 + c] * wy0 * wx0 + r1[c0 + c] * wy1 * wx0 +
                                      r0[c1 + c] * wy0 * wx1 + r1[c1 + c] * wy1 * wx1;
                    const int32_t round = s > 0 ? (1 << 19) : -(1 << 19);
                    *out++ = (int8_t)((s + round) / (1 << 20));
                }
            }
        }
    }
}
