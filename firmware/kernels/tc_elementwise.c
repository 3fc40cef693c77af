/* tinycompile runtime: ADD and MUL, int8, with broadcasting (tc_add_s8, tc_mul_s8; see
 * tc_elementwise.h).
 *
 * Match TensorFlow Lite Micro's reference kernels (add.cc with reference/integer_ops/add.h,
 * mul.cc with reference/integer_ops/mul.h, elementwise and broadcast), requantizing with
 * tc_requant (tc_qmath.h). ADD and MUL share the broadcast loop walker, so they stay one family
 * file. No fast paths.
 */
#include "tc_elementwise.h"

#include "tc_qmath.h"

/* One innermost row of a broadcast loop nest: n elements, input strides sx, sy (0 or 1 in
 * practice; any value works), contiguous output. */
typedef void (*tc_ew_row_fn)(const void *p, int32_t n, const int8_t *x, int32_t sx,
                             const int8_t *y, int32_t sy, int8_t *out);

/* Walk the (merged) loop nest row by row. rank 0: one flat row of `size` elements. */
static void tc_ew_broadcast(int32_t size, int32_t rank, const int32_t *dims, const int32_t *s1,
                            const int32_t *s2, const int8_t *x, const int8_t *y, int8_t *out,
                            tc_ew_row_fn row, const void *p)
{
    int32_t idx[TC_EW_MAX_DIMS];
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
        /* Advance the outer counters (odometer), innermost outer loop first. */
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

/* ------------------------------------------------------------------------------------ ADD */

TC_INLINE int32_t tc_add_scale(int32_t v, int32_t left_shift, int32_t m, int32_t s)
{
    /* v is within [-255, 255]: the product stays far from overflow for left_shift 20. */
    return tc_requant(v * ((int32_t)1 << left_shift), m, s);
}

TC_INLINE int8_t tc_add_finish(const tc_add_params_t *p, int32_t a, int32_t b)
{
    int32_t raw = tc_requant(a + b, p->out_multiplier, p->out_shift) + p->out_offset;
    return (int8_t)tc_clamp(raw, p->act_min, p->act_max);
}

static void tc_add_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_add_params_t *p = (const tc_add_params_t *)vp;
    int32_t i;

    if (sy == 0) {
        const int32_t b = tc_add_scale(p->in2_offset + y[0], p->left_shift, p->in2_multiplier,
                                       p->in2_shift);
        for (i = 0; i < n; ++i) {
            int32_t a = tc_add_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                     p->in1_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    } else if (sx == 0) {
        const int32_t a = tc_add_scale(p->in1_offset + x[0], p->left_shift, p->in1_multiplier,
                                       p->in1_shift);
        for (i = 0; i < n; ++i) {
            int32_t b = tc_add_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                     p->in2_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    } else {
        for (i = 0; i < n; ++i) {
            int32_t a = tc_add_scale(p->in1_offset + x[i * sx], p->left_shift, p->in1_multiplier,
                                     p->in1_shift);
            int32_t b = tc_add_scale(p->in2_offset + y[i * sy], p->left_shift, p->in2_multiplier,
                                     p->in2_shift);
            out[i] = tc_add_finish(p, a, b);
        }
    }
}

void tc_add_s8(const tc_add_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_ew_broadcast(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_add_row,
                    p);
}

/* ------------------------------------------------------------------------------------ MUL */

static void tc_mul_row(const void *vp, int32_t n, const int8_t *x, int32_t sx, const int8_t *y,
                       int32_t sy, int8_t *out)
{
    const tc_mul_params_t *p = (const tc_mul_params_t *)vp;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t a = p->in1_offset + x[i * sx];
        int32_t b = p->in2_offset + y[i * sy];
        int32_t raw = tc_requant(a * b, p->out_multiplier, p->out_shift) + p->out_offset;
        out[i] = (int8_t)tc_clamp(raw, p->act_min, p->act_max);
    }
}

void tc_mul_s8(const tc_mul_params_t *p, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    tc_ew_broadcast(p->size, p->rank, p->dims, p->stride1, p->stride2, in1, in2, out, tc_mul_row,
                    p);
}
