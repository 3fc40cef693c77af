/* tinycompile runtime: FILL, ZEROS_LIKE, SHAPE, BROADCAST_ARGS (when they run on the device:
 * most are constants folded at compile time) and CAST. Kernels: firmware/kernels/tc_fill.c.
 *
 * Semantics of TensorFlow Lite Micro's fill.cc, zeros_like.cc, shape.cc, broadcast_args.cc
 * (one value repeated, or a constant copied) and cast.cc (static_cast from one element type to
 * another: integers wrap, floats truncate toward zero). Set up by tinycompile/ops/fill.py.
 * Written from the documented semantics, not copied.
 */
#ifndef TC_FILL_H
#define TC_FILL_H

#include <stdint.h>

/* out = `count` copies of the `elem_bytes` bytes at `value`. */
void tc_fill(int32_t count, int32_t elem_bytes, const void *value, void *out);

/* Element types of CAST (TC_INT8 ... TC_BOOL of tc_types.h). */
typedef struct {
    int32_t size;   /* elements */
    int32_t from;   /* TC_INT8, TC_INT16, TC_INT32, TC_FLOAT32 or TC_BOOL */
    int32_t to;     /* TC_INT8, TC_INT16, TC_INT32 or TC_FLOAT32 */
} tc_cast_params_t;

void tc_cast(const tc_cast_params_t *p, const void *in, void *out);

#endif /* TC_FILL_H */
