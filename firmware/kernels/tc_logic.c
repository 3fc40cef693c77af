/* tinycompile runtime: LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and SELECT_V2 (see tc_logic.h).
 *
 * Matches TensorFlow Lite Micro's logical_common.cc (BinaryFunction /
 * BroadcastBinaryFunction4DSlow with x && y, x || y), elementwise.cc's LOGICAL_NOT and
 * select.cc (Select / BroadcastSelect5DSlow: condition ? x : y, values copied as they are).
 * Broadcasting by the shared walker (tc_walk.h). No fast paths.
 */
#include <stdint.h>

#include "tc_logic.h"
#include "tc_walk.h"

typedef struct {
    int32_t mode;
    const uint8_t *c;
    const void *x;
    const void *y;
    void *out;
} tc_logic_ctx_t;

static void tc_logical_row(const void *ctx, int32_t n, const int32_t *off, const int32_t *step,
                           int32_t o)
{
    const tc_logic_ctx_t *c = (const tc_logic_ctx_t *)ctx;
    const uint8_t *a = (const uint8_t *)c->x + off[0];
    const uint8_t *b = (const uint8_t *)c->y + off[1];
    uint8_t *out = (uint8_t *)c->out + o;
    int32_t i;

    if (c->mode) {
        for (i = 0; i < n; ++i) {
            out[i] = (uint8_t)(a[i * step[0]] != 0 || b[i * step[1]] != 0);
        }
    } else {
        for (i = 0; i < n; ++i) {
            out[i] = (uint8_t)(a[i * step[0]] != 0 && b[i * step[1]] != 0);
        }
    }
}

void tc_logical_b(const tc_logical_params_t *p, const uint8_t *in1, const uint8_t *in2,
                  uint8_t *out)
{
    const int32_t *strides[2];
    tc_logic_ctx_t c;

    strides[0] = p->stride1;
    strides[1] = p->stride2;
    c.mode = p->is_or;
    c.c = 0;
    c.x = in1;
    c.y = in2;
    c.out = out;
    tc_walk(p->size, p->rank, p->dims, 2, strides, tc_logical_row, &c);
}

void tc_logical_not_b(int32_t size, const uint8_t *in, uint8_t *out)
{
    int32_t i;

    for (i = 0; i < size; ++i) {
        out[i] = (uint8_t)(in[i] == 0);
    }
}

static void tc_select_row8(const void *ctx, int32_t n, const int32_t *off, const int32_t *step,
                           int32_t o)
{
    const tc_logic_ctx_t *c = (const tc_logic_ctx_t *)ctx;
    const uint8_t *cond = c->c + off[0];
    const int8_t *x = (const int8_t *)c->x + off[1];
    const int8_t *y = (const int8_t *)c->y + off[2];
    int8_t *out = (int8_t *)c->out + o;
    int32_t i;

    for (i = 0; i < n; ++i) {
        out[i] = cond[i * step[0]] ? x[i * step[1]] : y[i * step[2]];
    }
}

static void tc_select_row16(const void *ctx, int32_t n, const int32_t *off, const int32_t *step,
                            int32_t o)
{
    const tc_logic_ctx_t *c = (const tc_logic_ctx_t *)ctx;
    const uint8_t *cond = c->c + off[0];
    const int16_t *x = (const int16_t *)c->x + off[1];
    const int16_t *y = (const int16_t *)c->y + off[2];
    int16_t *out = (int16_t *)c->out + o;
    int32_t i;

    for (i = 0; i < n; ++i) {
        out[i] = cond[i * step[0]] ? x[i * step[1]] : y[i * step[2]];
    }
}

static void tc_select_run(const tc_select_params_t *p, const uint8_t *cond, const void *x,
                          const void *y, void *out, tc_walk_row_fn row)
{
    const int32_t *strides[3];
    tc_logic_ctx_t c;

    strides[0] = p->stride1;
    strides[1] = p->stride2;
    strides[2] = p->stride3;
    c.mode = 0;
    c.c = cond;
    c.x = x;
    c.y = y;
    c.out = out;
    tc_walk(p->size, p->rank, p->dims, 3, strides, row, &c);
}

void tc_select_s8(const tc_select_params_t *p, const uint8_t *cond, const int8_t *x,
                  const int8_t *y, int8_t *out)
{
    tc_select_run(p, cond, x, y, out, tc_select_row8);
}

void tc_select_s16(const tc_select_params_t *p, const uint8_t *cond, const int16_t *x,
                   const int16_t *y, int16_t *out)
{
    tc_select_run(p, cond, x, y, out, tc_select_row16);
}
