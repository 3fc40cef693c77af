/* tinycompile runtime: SVDF, int8 with int16 or int8 state (tc_svdf_s8_s16, tc_svdf_s8_s8; see
 * tc_svdf.h).
 *
 * Matches TensorFlow Lite Micro's EvalIntegerSvdfReference (svdf_common.cc). TFLM keeps the
 * per-filter time sums and the per-unit sums in two int32 arena scratch buffers; here each unit
 * sums its filters directly, the same int32 values in another order (sums wrap modulo 2^32 as
 * TFLM's do on every target, so the order cannot change them): no scratch. The state is updated
 * in place and kept by the caller across calls. The feature products run four filters per pass
 * over the input (tc_dot14_s8: SXTB16 + SMLAD on Cortex-M4/M7, tc_m0_dot14 on ARMv6-M), and on
 * Cortex-M4/M7 an int16 state with zero point 0 (TFLM's) meets its int16 time weights two at a
 * time (SMLAD): the same int32 sums, wrapping alike.
 */
#include <stdint.h>
#include <string.h>

#include "tc_kernel_util.h"
#include "tc_m0.h"
#include "tc_qmath.h"
#include "tc_svdf.h"

/* The feature layer of one batch row: each filter's input product, requantized into the newest
 * slot of its state (after the state moved one step back). */
#define TC_SVDF_FEATURES(T, LO, HI)                                                             \
    for (int32_t f = 0; f < F; f++) {                                                           \
        T *s = sb + f * M;                                                                      \
        memmove(s, s + 1, (size_t)(M - 1) * sizeof(T));                                         \
    }                                                                                           \
    for (int32_t f = 0; f < F; f += 4) {                                                        \
        int32_t a[4] = {0, 0, 0, 0};                                                            \
        const int32_t n = F - f < 4 ? F - f : 4;                                                \
        for (int32_t k = 0; k < n; k++) {                                                       \
            a[k] = p->feat_bias[f + k];                                                         \
        }                                                                                       \
        if (n == 4) {                                                                           \
            TC_DOT14(x, p->weights_feature + f * D, D, D, a);                                   \
        } else {                                                                                \
            for (int32_t k = 0; k < n; k++) {                                                   \
                a[k] = tc_dot_s8(x, p->weights_feature + (f + k) * D, D, a[k]);               \
            }                                                                                   \
        }                                                                                       \
        for (int32_t k = 0; k < n; k++) {                                                       \
            int32_t v = tc_clamp(tc_requant(a[k], p->feat_mult, p->feat_shift), LO, HI);        \
            sb[(f + k) * M + M - 1] = (T)(v + p->state_zp); /* TFLM: clamp, then zp, wraps */ \
        }                                                                                       \
    }

/* sum over j < m of w[j] * (s[j] - zp), wrapping modulo 2^32 like TFLM's int32 sums. */
#define TC_SVDF_TIME_DOT(T)                                                                     \
    static uint32_t tc_svdf_time_##T(const T *w, const T *s, int32_t m, int32_t zp, uint32_t acc) \
    {                                                                                           \
        for (int32_t j = 0; j < m; j++) {                                                       \
            acc += (uint32_t)((int32_t)w[j] * ((int32_t)s[j] - zp));                            \
        }                                                                                       \
        return acc;                                                                             \
    }
TC_SVDF_TIME_DOT(int8_t)
TC_SVDF_TIME_DOT(int16_t)

#if TC_DSP
/* tc_svdf_time_int16_t for zp == 0: two products per SMLAD (unaligned word loads). */
static uint32_t tc_svdf_time16_dsp(const int16_t *w, const int16_t *s, int32_t m, uint32_t acc)
{
    int32_t j = 0;
    for (; j + 1 < m; j += 2) {
        uint32_t wv, sv;
        memcpy(&wv, w + j, 4);
        memcpy(&sv, s + j, 4);
        acc = (uint32_t)__smlad((int32_t)wv, (int32_t)sv, (int32_t)acc);
    }
    if (j < m) {
        acc += (uint32_t)((int32_t)w[j] * (int32_t)s[j]);
    }
    return acc;
}
#define TC_SVDF_TIME_int16_t(w, s, m, zp, acc)                                                  \
    ((zp) == 0 ? tc_svdf_time16_dsp(w, s, m, acc) : tc_svdf_time_int16_t(w, s, m, zp, acc))
#else
#define TC_SVDF_TIME_int16_t tc_svdf_time_int16_t
#endif
#define TC_SVDF_TIME_int8_t tc_svdf_time_int8_t

/* The shared body for one state type T with range [LO, HI]. */
#define TC_SVDF_BODY(T, LO, HI)                                                                   \
    const int32_t F = p->filters, M = p->memory, D = p->input_size, R = p->rank;                \
    const int32_t U = F / R;                                                                    \
    const T *wt = (const T *)p->weights_time;                                                   \
    for (int32_t b = 0; b < p->batches; b++) {                                                  \
        T *sb = state + b * F * M;                                                              \
        const int8_t *x = in + b * D;                                                           \
        TC_SVDF_FEATURES(T, LO, HI)                                                             \
        for (int32_t u = 0; u < U; u++) {                                                       \
            uint32_t acc = (uint32_t)p->bias[u];                                                \
            for (int32_t f = u * R; f < (u + 1) * R; f++) {                                     \
                acc = TC_SVDF_TIME_##T(wt + f * M, sb + f * M, M, p->state_zp, acc);            \
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
