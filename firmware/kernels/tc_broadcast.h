/* tinycompile runtime, internal: the broadcast loop walker of the binary elementwise kernels
 * (tc_elementwise.c: ADD, MUL; tc_binary.c: SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU).
 * Not part of the public API.
 *
 * The compiler (tinycompile/ops/broadcast.py) merges the output shape into at most
 * TC_BCAST_MAX_DIMS loops, outermost first, with each input's element stride per loop (0 where
 * that input is broadcast). rank 0: no broadcasting, three flat arrays of `size` elements. The
 * output is written contiguously, each element after both its inputs are read, so the kernels
 * may run in place over input 1 when it is not broadcast.
 */
#ifndef TC_BROADCAST_H
#define TC_BROADCAST_H

#include <stdint.h>

#define TC_BCAST_MAX_DIMS 6

/* One innermost row: n elements, input strides sx, sy, contiguous output. */
typedef void (*tc_bcast_row_fn)(const void *p, int32_t n, const int8_t *x, int32_t sx,
                                const int8_t *y, int32_t sy, int8_t *out);

static inline void tc_bcast_walk(int32_t size, int32_t rank, const int32_t *dims,
                                 const int32_t *s1, const int32_t *s2, const int8_t *x,
                                 const int8_t *y, int8_t *out, tc_bcast_row_fn row, const void *p)
{
    int32_t idx[TC_BCAST_MAX_DIMS];
    int32_t off1 = 0;
    int32_t off2 = 0;
    int32_t inner;
    int32_t rows;
    int32_t r;
    int d;

    if (size <= 0) {
        return;
    }
    if (rank <= 0) {
        row(p, size, x, 1, y, 1, out);
        return;
    }
    inner = dims[rank - 1];
    if (inner <= 0) {
        return;
    }
    rows = size / inner;
    for (d = 0; d < rank; ++d) {
        idx[d] = 0;
    }
    for (r = 0; r < rows; ++r) {
        row(p, inner, x + off1, s1[rank - 1], y + off2, s2[rank - 1], out);
        out += inner;
        for (d = rank - 2; d >= 0; --d) { /* odometer over the outer loops */
            off1 += s1[d];
            off2 += s2[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            off1 -= s1[d] * dims[d];
            off2 -= s2[d] * dims[d];
            idx[d] = 0;
        }
    }
}

/* The same walk over int16 elements (16x8 ADD, SUB, MUL); offsets and strides in elements. */
typedef void (*tc_bcast_row16_fn)(const void *p, int32_t n, const int16_t *x, int32_t sx,
                                  const int16_t *y, int32_t sy, int16_t *out);

static inline void tc_bcast_walk_s16(int32_t size, int32_t rank, const int32_t *dims,
                                     const int32_t *s1, const int32_t *s2, const int16_t *x,
                                     const int16_t *y, int16_t *out, tc_bcast_row16_fn row,
                                     const void *p)
{
    int32_t idx[TC_BCAST_MAX_DIMS];
    int32_t off1 = 0, off2 = 0, inner, rows, r;
    int d;

    if (size <= 0) {
        return;
    }
    if (rank <= 0) {
        row(p, size, x, 1, y, 1, out);
        return;
    }
    inner = dims[rank - 1];
    if (inner <= 0) {
        return;
    }
    rows = size / inner;
    for (d = 0; d < rank; ++d) {
        idx[d] = 0;
    }
    for (r = 0; r < rows; ++r) {
        row(p, inner, x + off1, s1[rank - 1], y + off2, s2[rank - 1], out);
        out += inner;
        for (d = rank - 2; d >= 0; --d) {
            off1 += s1[d];
            off2 += s2[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            off1 -= s1[d] * dims[d];
            off2 -= s2[d] * dims[d];
            idx[d] = 0;
        }
    }
}

#endif /* TC_BROADCAST_H */
