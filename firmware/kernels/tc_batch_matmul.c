/* tinycompile runtime: BATCH_MATMUL, int8 (tc_batch_matmul_s8) and 16x8 (tc_batch_matmul_s16);
 * see tc_batch_matmul.h.
 *
 * Matches TensorFlow Lite Micro's batch_matmul.cc int8 path (reference BatchMatMul in
 * kernels/internal/reference/batch_matmul.h): per output, the int32 sum of
 * (lhs + lhs_offset) * (rhs + rhs_offset) over the depth, MultiplyByQuantizedMultiplier
 * (tc_requant), output zero point, clamp to int8 (BATCH_MATMUL has no fused activation).
 * TFLM transposes operands into persistent buffers to make both rows contiguous; here the
 * compiler's strides address them where they are (and a constant rhs is stored transposed in
 * flash, so its depth is contiguous). Same products, same int32 sums. No fast path yet.
 */
#include <stdint.h>

#include "tc_batch_matmul.h"
#include "tc_kernel_util.h"
#include "tc_qmath.h"

void tc_batch_matmul_s8(const tc_batch_matmul_params_t *p, const int8_t *lhs, const int8_t *rhs,
                        int8_t *out)
{
    const int32_t R = p->rows, C = p->cols, K = p->depth;
    const int32_t lo = p->lhs_offset, ro = p->rhs_offset;
    int32_t b, i, j, k;
    for (b = 0; b < p->batches; b++) {
        const int8_t *l0 = lhs + p->l_off[b], *r0 = rhs + p->r_off[b];
        for (i = 0; i < R; i++) {
            const int8_t *l = l0 + i * p->l_si;
            for (j = 0; j < C; j++) {
                const int8_t *r = r0 + j * p->r_sj;
                int32_t acc = 0;
                for (k = 0; k < K; k++) {
                    acc += (l[k * p->l_sk] + lo) * (r[k * p->r_sk] + ro);
                }
                *out++ = tc_out_s8(acc, p->mult, p->shift, p->out_offset, -128, 127);
            }
        }
    }
}

/* 16x8 (TFLM's EvalInt16: reference BatchMatMul<int16_t, int64_t>): both operands int16 with
 * zero point 0, int64 sums, TFLM's 64-bit requantization (p->mult, p->shift hold the Q15
 * multiplier and total right shift of tc_requant64), clamp to int16. */
void tc_batch_matmul_s16(const tc_batch_matmul_params_t *p, const int16_t *lhs,
                         const int16_t *rhs, int16_t *out)
{
    const int32_t R = p->rows, C = p->cols, K = p->depth;
    int32_t b, i, j, k;
    for (b = 0; b < p->batches; b++) {
        const int16_t *l0 = lhs + p->l_off[b], *r0 = rhs + p->r_off[b];
        for (i = 0; i < R; i++) {
            const int16_t *l = l0 + i * p->l_si;
            for (j = 0; j < C; j++) {
                const int16_t *r = r0 + j * p->r_sj;
                int64_t acc = 0;
                for (k = 0; k < K; k++) {
                    acc += (int32_t)l[k * p->l_sk] * r[k * p->r_sk];
                }
                *out++ = (int16_t)tc_clamp(tc_requant64(acc, p->mult, p->shift), -32768, 32767);
            }
        }
    }
}
