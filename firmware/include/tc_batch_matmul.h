/* tinycompile runtime: BATCH_MATMUL (int8; 16x8 below). Kernel: firmware/kernels/tc_batch_matmul.c.
 *
 * Semantics of TensorFlow Lite Micro's batch_matmul.cc (int8, reference BatchMatMul):
 * out[b][i][j] = requant(sum_k (lhs[b][i][k] + lhs_offset) * (rhs[b][k][j] + rhs_offset))
 * in int32, MultiplyByQuantizedMultiplier, + output zero point, clamped to int8. The compiler
 * resolves adj_x / adj_y into element strides and batch broadcasting into per-batch element
 * offsets (l_off, r_off), so one loop covers every layout.
 */
#ifndef TC_BATCH_MATMUL_H
#define TC_BATCH_MATMUL_H

#include <stdint.h>

typedef struct {
    int32_t batches, rows, cols, depth;    /* output [batches][rows][cols], sums over depth */
    int32_t l_si, l_sk;                    /* lhs element (i, k): l_off[b] + i*l_si + k*l_sk */
    int32_t r_sk, r_sj;                    /* rhs element (k, j): r_off[b] + k*r_sk + j*r_sj */
    const int32_t *l_off, *r_off;          /* [batches] */
    int32_t lhs_offset, rhs_offset, out_offset;
    int32_t mult, shift;
} tc_batch_matmul_params_t;

void tc_batch_matmul_s8(const tc_batch_matmul_params_t *p, const int8_t *lhs, const int8_t *rhs,
                        int8_t *out);

/* 16x8: int16 operands and output (zero points 0, offsets 0), int64 sums, TFLM's 64-bit
 * requantization: mult and shift hold the Q15 multiplier and the total right shift
 * (tc_requant64), clamped to int16. */
void tc_batch_matmul_s16(const tc_batch_matmul_params_t *p, const int16_t *lhs,
                         const int16_t *rhs, int16_t *out);

#endif /* TC_BATCH_MATMUL_H */
