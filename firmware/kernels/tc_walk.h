/* tinycompile runtime, internal: the n-ary broadcast walker of the comparison, logical and
 * select kernels (tc_compare.c, tc_logic.c). Not part of the public API.
 *
 * The compiler (tinycompile/ops/nary.py) merges the output shape into `rank` loops (at least
 * one), outermost first, with each input's element stride per loop (0 where that input is
 * broadcast). The walker hands each innermost row to `row` with every input's element offset
 * and innermost stride; the output is written contiguously from element `o`.
 */
#ifndef TC_WALK_H
#define TC_WALK_H

#include <stdint.h>

#define TC_WALK_MAX_DIMS 6
#define TC_WALK_MAX_INPUTS 3

/* One innermost row of n elements: input k starts at element off[k] and steps by step[k];
 * the output starts at element o. */
typedef void (*tc_walk_row_fn)(const void *ctx, int32_t n, const int32_t *off,
                               const int32_t *step, int32_t o);

/* strides[k]: input k's `rank` strides. */
static inline void tc_walk(int32_t size, int32_t rank, const int32_t *dims, int n_in,
                           const int32_t *const *strides, tc_walk_row_fn row, const void *ctx)
{
    int32_t idx[TC_WALK_MAX_DIMS];
    int32_t off[TC_WALK_MAX_INPUTS];
    int32_t step[TC_WALK_MAX_INPUTS];
    int32_t inner, rows, r, o = 0;
    int d, k;

    if (size <= 0 || rank <= 0 || n_in > TC_WALK_MAX_INPUTS) {
        return;
    }
    inner = dims[rank - 1];
    if (inner <= 0) {
        return;
    }
    rows = size / inner;
    for (k = 0; k < n_in; ++k) {
        off[k] = 0;
        step[k] = strides[k][rank - 1];
    }
    for (d = 0; d < rank; ++d) {
        idx[d] = 0;
    }
    for (r = 0; r < rows; ++r) {
        row(ctx, inner, off, step, o);
        o += inner;
        for (d = rank - 2; d >= 0; --d) { /* odometer over the outer loops */
            for (k = 0; k < n_in; ++k) {
                off[k] += strides[k][d];
            }
            if (++idx[d] < dims[d]) {
                break;
            }
            for (k = 0; k < n_in; ++k) {
                off[k] -= strides[k][d] * dims[d];
            }
            idx[d] = 0;
        }
    }
}

#endif /* TC_WALK_H */
