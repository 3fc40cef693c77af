/* tinycompile runtime: SVDF, int8 with int16 or int8 state (tc_svdf_s8_s16, tc_svdf_s8_s8; see
 * tc_svdf.h).
 *
 * Matches TensorFlow Lite Micro's EvalIntegerSvdfReference (svdf_common.cc). TFLM keeps the
 * per-filter time sums and the per-unit sums in two int32 arena scratch buffers; here each unit
 * sums its filters directly, the same int32 values in another order (sums wrap modulo 2^32 as
 * TFLM's do on every target, so the order cannot change them): no scratch. The state is updated
 * in place and kept by the caller across calls. No fast path.
 */
#include <stdint.h>

#include "tc_qmath.h"
#include "tc_svdf.h"

/* The shared body for one state type T with range [LO, HI]. */
#define TC_SVDF_BODY(T, LO, HI)                                                                   \
    const int32_t F = p->filters, M = p->memory, D = p->input_size, R = p->rank;                \
    const int32_t U = F / R;                                                                    \
    const T *wt = (const T *)p->weights_time;                                                   \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        T *sb = state + b * F * M;                                                              \
        const int8_t *x = in + b * D;                                                           \
        for (int32_t f = 0; f < F; f++) {                                                       \
            T *s = sb + f * M;                                                                  \
            for (int32_t j = 0; j + 1 < M; j++) {                                               \
                s[j] = s[j + 1];                                                                \
            }                                                                                   \
            const int8_t *w = p->weights_feature + f * D;                                       \
            uint32_t acc = (uint32_t)p->feat_bias[f];                                           \
            for (int32_t c = 0; c < D; c++) {                                                   \
                acc += (uint32_t)((int32_t)w[c] * (int32_t)x[c]);                               \
            }                                                                                   \
            int32_t v = tc_requant((int32_t)acc, p->feat_mult, p->feat_shift) + p->state_zp;    \
            s[M - 1] = (T)tc_clamp(v, LO, HI);                                                  \
        }                                                                                       \
        for (int32_t u = 0; u < U; u++) {                                                       \
            uint32_t acc = (uint32_t)p->bias[u];                                                \
            for (int32_t f = u * R; f < (u + 1) * R; f++) {                                     \
                const T *s = sb + f * M;                                                        \
                const T *w = wt + f * M;                                                        \
                for (int32_t j = 0; j < M; j++) {                                               \
                    acc += (uint32_t)((int32_t)w[j] * ((int32_t)s[j] - p->state_zp));           \
                }                                                                               \
            }                                                                                   \
            int32_t o = tc_requant((int32_t)acc, p->out_mult, p->out_shift) + p->out_zp;        \
            out[b * U + u] = (int8_t)tc_clamp(o, -128, 127);                                    \
        }                                                                                       \
    }

void tc_svdf_s8_s16(const tc_svdf_params_t *p, const int8_t *in, int16_t *state, int8_t *out)
{
    TC_SVDF_BODY(int16_t, -32768, 32767)
}

void tc_svdf_s8_s8(const tc_svdf_params_t *p, const int8_t *in, int8_t *state, int8_t *out)
{
    TC_SVDF_BODY(int8_t, -128, 127)
}
