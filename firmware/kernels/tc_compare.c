/* tinycompile runtime: EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (see
 * tc_compare.h).
 *
 * Matches TensorFlow Lite Micro's comparisons.cc (reference/comparisons.h): int8 through
 * ComparisonWithScaling / BroadcastComparison4DSlowWithScaling, each input rescaled by
 * MultiplyByQuantizedMultiplierSmallerThanOneExp((q + offset) << left_shift) (tc_requant) and
 * the int32 results compared; int32 and bool through the NoScaling variants. Broadcasting by
 * the shared walker (tc_walk.h). No fast paths.
 */
#include <stdint.h>

#include "tc_compare.h"
#include "tc_qmath.h"
#include "tc_walk.h"

typedef struct {
    const tc_compare_params_t *p;
    const void *in1;
    const void *in2;
    uint8_t *out;
} tc_cmp_ctx_t;

static inline uint8_t tc_cmp(int32_t op, int32_t a, int32_t b)
{
    switch (op) {
    case TC_CMP_EQ:
        return (uint8_t)(a == b);
    case TC_CMP_NE:
        return (uint8_t)(a != b);
    case TC_CMP_LT:
        return (uint8_t)(a < b);
    case TC_CMP_LE:
        return (uint8_t)(a <= b);
    case TC_CMP_GT:
        return (uint8_t)(a > b);
    default:
        return (uint8_t)(a >= b);
    }
}

static inline int32_t tc_cmp_scale(int32_t q, int32_t offset, int32_t ls, int32_t m, int32_t s)
{
    return tc_requant((int32_t)((uint32_t)(q + offset) << ls), m, s);
}

static void tc_cmp_row_s8(const void *c, int32_t n, const int32_t *off, const int32_t *step,
                          int32_t o)
{
    const tc_cmp_ctx_t *x = (const tc_cmp_ctx_t *)c;
    const tc_compare_params_t *p = x->p;
    const int8_t *a = (const int8_t *)x->in1 + off[0];
    const int8_t *b = (const int8_t *)x->in2 + off[1];
    uint8_t *out = x->out + o;
    int32_t i;

    for (i = 0; i < n; ++i) {
        int32_t va = tc_cmp_scale(a[i * step[0]], p->in1_offset, p->left_shift, p->in1_multiplier,
                                  p->in1_shift);
        int32_t vb = tc_cmp_scale(b[i * step[1]], p->in2_offset, p->left_shift, p->in2_multiplier,
                                  p->in2_shift);
        out[i] = tc_cmp(p->cmp, va, vb);
    }
}

static void tc_cmp_row_s32(const void *c, int32_t n, const int32_t *off, const int32_t *step,
                           int32_t o)
{
    const tc_cmp_ctx_t *x = (const tc_cmp_ctx_t *)c;
    const int32_t *a = (const int32_t *)x->in1 + off[0];
    const int32_t *b = (const int32_t *)x->in2 + off[1];
    uint8_t *out = x->out + o;
    int32_t i;

    for (i = 0; i < n; ++i) {
        out[i] = tc_cmp(x->p->cmp, a[i * step[0]], b[i * step[1]]);
    }
}

static void tc_cmp_row_b(const void *c, int32_t n, const int32_t *off, const int32_t *step,
                         int32_t o)
{
    const tc_cmp_ctx_t *x = (const tc_cmp_ctx_t *)c;
    const uint8_t *a = (const uint8_t *)x->in1 + off[0];
    const uint8_t *b = (const uint8_t *)x->in2 + off[1];
    uint8_t *out = x->out + o;
    int32_t i;

    for (i = 0; i < n; ++i) {
        out[i] = tc_cmp(x->p->cmp, a[i * step[0]] != 0, b[i * step[1]] != 0);
    }
}

static void tc_compare_run(const tc_compare_params_t *p, const void *in1, const void *in2,
                           uint8_t *out, tc_walk_row_fn row)
{
    const int32_t *strides[2];
    tc_cmp_ctx_t c;

    strides[0] = p->stride1;
    strides[1] = p->stride2;
    c.p = p;
    c.in1 = in1;
    c.in2 = in2;
    c.out = out;
    tc_walk(p->size, p->rank, p->dims, 2, strides, row, &c);
}

void tc_compare_s8(const tc_compare_params_t *p, const int8_t *in1, const int8_t *in2,
                   uint8_t *out)
{
    tc_compare_run(p, in1, in2, out, tc_cmp_row_s8);
}

void tc_compare_s32(const tc_compare_params_t *p, const int32_t *in1, const int32_t *in2,
                    uint8_t *out)
{
    tc_compare_run(p, in1, in2, out, tc_cmp_row_s32);
}

void tc_compare_b(const tc_compare_params_t *p, const uint8_t *in1, const uint8_t *in2,
                  uint8_t *out)
{
    tc_compare_run(p, in1, in2, out, tc_cmp_row_b);
}
