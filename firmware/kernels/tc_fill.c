/* tinycompile runtime: FILL / ZEROS_LIKE / SHAPE / BROADCAST_ARGS (tc_fill) and CAST (tc_cast);
 * see tc_fill.h.
 *
 * tc_fill matches TensorFlow Lite Micro's reference_ops::Fill (the value repeated over the
 * output), which the compiler also uses for the constant results of ZEROS_LIKE, SHAPE and
 * BROADCAST_ARGS when they are graph outputs. tc_cast matches cast.cc's copyCast: a C
 * conversion per element (int -> narrower int wraps as two's complement, float -> int
 * truncates toward zero; a float outside the target's range is undefined in TFLM too), bool
 * read as 0 or 1. Float conversions use the compiler's soft-float helpers on cores without an
 * FPU, never libm. No fast paths.
 */
#include <stdint.h>
#include <string.h>

#include "tc_fill.h"
#include "tc_types.h"

void tc_fill(int32_t count, int32_t elem_bytes, const void *value, void *out)
{
    uint8_t *dst = (uint8_t *)out;
    int32_t i;

    if (elem_bytes == 1) {
        memset(dst, *(const uint8_t *)value, (size_t)(count > 0 ? count : 0));
        return;
    }
    for (i = 0; i < count; ++i) {
        memcpy(dst + (size_t)i * (size_t)elem_bytes, value, (size_t)elem_bytes);
    }
}

/* Element i of an integer-typed input, widened to int32 (exact for every integer source). */
static int32_t tc_cast_load_int(int32_t type, const void *in, int32_t i)
{
    switch (type) {
    case TC_INT8:
        return ((const int8_t *)in)[i];
    case TC_INT16:
        return ((const int16_t *)in)[i];
    case TC_BOOL:
        return ((const uint8_t *)in)[i] != 0;
    default:
        return ((const int32_t *)in)[i];
    }
}

static void tc_cast_store_int(int32_t type, void *out, int32_t i, int32_t v)
{
    switch (type) {
    case TC_INT8:
        ((int8_t *)out)[i] = (int8_t)v;
        break;
    case TC_INT16:
        ((int16_t *)out)[i] = (int16_t)v;
        break;
    case TC_FLOAT32:
        ((float *)out)[i] = (float)v;
        break;
    default:
        ((int32_t *)out)[i] = v;
        break;
    }
}

void tc_cast(const tc_cast_params_t *p, const void *in, void *out)
{
    int32_t i;

    if (p->from == TC_FLOAT32) {
        const float *src = (const float *)in;
        for (i = 0; i < p->size; ++i) {
            switch (p->to) {
            case TC_INT8:
                ((int8_t *)out)[i] = (int8_t)src[i];
                break;
            case TC_INT16:
                ((int16_t *)out)[i] = (int16_t)src[i];
                break;
            case TC_INT32:
                ((int32_t *)out)[i] = (int32_t)src[i];
                break;
            default:
                ((float *)out)[i] = src[i];
                break;
            }
        }
        return;
    }
    for (i = 0; i < p->size; ++i) {
        tc_cast_store_int(p->to, out, i, tc_cast_load_int(p->from, in, i));
    }
}
