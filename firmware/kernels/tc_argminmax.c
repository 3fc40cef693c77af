/* tinycompile runtime: ARG_MAX and ARG_MIN, int8 (tc_argminmax_s8; see tc_argminmax.h).
 *
 * Matches TensorFlow Lite Micro's arg_min_max.cc with reference/arg_min_max.h: along the axis
 * the running best is replaced only by a strictly greater (ARG_MAX) or strictly smaller
 * (ARG_MIN) value, so the first of equal values wins. No fast paths.
 */
#include "tc_argminmax.h"

void tc_argminmax_s8(const tc_argminmax_params_t *p, const int8_t *in, int32_t *out)
{
    const int32_t n = p->axis_size;
    const int32_t inner = p->inner;
    int32_t o;
    int32_t i;
    int32_t k;

    for (o = 0; o < p->outer; ++o) {
        const int8_t *base = in + o * n * inner;
        for (i = 0; i < inner; ++i) {
            int32_t best = base[i];
            int32_t at = 0;
            for (k = 1; k < n; ++k) {
                const int32_t v = base[k * inner + i];
                if (p->is_max ? v > best : v < best) {
                    best = v;
                    at = k;
                }
            }
            out[o * inner + i] = at;
        }
    }
}
