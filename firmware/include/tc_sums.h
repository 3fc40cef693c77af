/* tinycompile runtime: int8 ADD_N and CUMSUM (kernels: firmware/kernels/tc_sums.c).
 *
 * Semantics of TensorFlow Lite Micro's add_n.cc and cumsum.cc: offset inputs shifted left by
 * `left_shift` (20) and requantized by the input multiplier (one half), summed from the scaled
 * offset of a zero byte, the sum requantized to the output. Every multiplier and shift is
 * computed by the compiler (tinycompile/ops/sums.py).
 */
#ifndef TC_SUMS_H
#define TC_SUMS_H

#include <stdint.h>

typedef struct {
    int32_t size;           /* elements of each input and of the output */
    int32_t n_inputs;
    int32_t in_offset;      /* -zero_point of the inputs (all equal) */
    int32_t in_multiplier;
    int32_t in_shift;       /* <= 0 */
    int32_t left_shift;
    int32_t out_multiplier;
    int32_t out_shift;      /* <= 0 */
    int32_t out_offset;
} tc_add_n_params_t;

/* out[i] = requantized sum of in[k][i] over the n_inputs inputs; may run in place over in[0]. */
void tc_add_n_s8(const tc_add_n_params_t *p, const int8_t *const *in, int8_t *out);

typedef struct {
    int32_t outer;          /* product of the dims before the axis */
    int32_t depth;          /* the axis */
    int32_t inner;          /* product of the dims after it */
    int32_t exclusive;      /* 1: each output sums the elements before it */
    int32_t reverse;        /* 1: sums run from the end of the axis */
    int32_t in_offset;
    int32_t in_multiplier;
    int32_t in_shift;
    int32_t left_shift;
    int32_t out_multiplier;
    int32_t out_shift;
    int32_t out_offset;
} tc_cumsum_params_t;

/* Cumulative sums along the axis; may run in place. */
void tc_cumsum_s8(const tc_cumsum_params_t *p, const int8_t *in, int8_t *out);

#endif /* TC_SUMS_H */
