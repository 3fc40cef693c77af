/* tinycompile runtime: data-movement operators PAD / PADV2 and CONCATENATION, int8 and int16
 * (16x8): both kernels move bytes, the pointers are byte pointers to elements of `elem_size`
 * bytes (PAD) or the compiler counts the chunks in bytes (CONCATENATION).
 *
 * Both move bytes without arithmetic, exactly as TensorFlow Lite Micro's reference kernels do
 * (pad.cc, concatenation.cc: no requantization even when input and output quantization differ).
 * RESHAPE, SQUEEZE and EXPAND_DIMS have no kernel: the planner makes the output share the
 * input's bytes. Written from the documented semantics, not copied.
 */
#ifndef TC_SHAPE_H
#define TC_SHAPE_H

#include <stdint.h>

#define TC_PAD_MAX_DIMS 6

/* The compiler drops unpadded size-1 dims and merges every unpadded dim into the dim outside it,
 * so `rank` is usually 2 or 3 (e.g. H, W*C for an image). */
typedef struct {
    int32_t rank;               /* 1..6 */
    const int32_t *in_dims;     /* rank extents of the input, outermost first */
    const int32_t *pad_before;  /* rank paddings before each dim */
    const int32_t *pad_after;   /* rank paddings after each dim */
    int32_t value;              /* pad value when the call passes no value pointer */
    int32_t elem_size;          /* bytes per element: 1 (int8) or 2 (int16) */
} tc_pad_params_t;

/* value: pointer to the pad value (PADV2 with a runtime value tensor, an element of elem_size
 * bytes) or 0 to use p->value. */
void tc_pad_s8(const tc_pad_params_t *p, const int8_t *in, const int8_t *value, int8_t *out);

typedef struct {
    int32_t n_inputs;
    int32_t outer;              /* product of the dims before the concatenation axis */
    const int32_t *chunk;       /* n_inputs: bytes each input contributes per outer step */
} tc_concat_params_t;

/* in: array of n_inputs input pointers. */
void tc_concat_s8(const tc_concat_params_t *p, const int8_t *const *in, int8_t *out);

#endif /* TC_SHAPE_H */
