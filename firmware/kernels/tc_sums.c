/* tinycompile runtime: ADD_N and CUMSUM (int8), matching TensorFlow Lite Micro's add_n.cc and
 * cumsum.cc with reference/add_n.h and reference/cumsum.h. Written from those semantics.
 *
 * Both scale each offset input as v * 2^left_shift requantized by the input multiplier (TFLM's
 * MultiplyByQuantizedMultiplierSmallerThanOneExp), add the scaled values to an accumulator that
 * starts at the scaled offset of a zero byte (TFLM starts it at input_offset), and requantize the
 * accumulator to the output, clamped to int8 (no fused activation). The int32 sums wrap on
 * overflow as TFLM's x86 build does (unsigned arithmetic here, no undefined behaviour). No fast
 * path.
 */
#include "tc_sums.h"

#include "tc_qmath.h"

TC_INLINE int32_t tc_sum_scale(int32_t v, int32_t left_shift, int32_t m, int32_t s)
{
    return tc_requant((int32_t)((uint32_t)v << left_shift), m, s);
}

TC_INLINE int32_t tc_sum_add(int32_t acc, int32_t v)
{
    return (int32_t)((uint32_t)acc + (uint32_t)v);
}

TC_INLINE int8_t tc_sum_out(int32_t acc, int32_t m, int32_t s, int32_t offset)
{
    return (int8_t)tc_clamp(tc_requant(acc, m, s) + offset, -128, 127);
}

void tc_add_n_s8(const tc_add_n_params_t *p, const int8_t *const *in, int8_t *out)
{
    const int32_t start = tc_sum_scale(p->in_offset, p->left_shift, p->in_multiplier, p->in_shift);
    int32_t i;
    int32_t k;

    for (i = 0; i < p->size; ++i) {
        int32_t acc = start;
        for (k = 0; k < p->n_inputs; ++k) {
            acc = tc_sum_add(acc, tc_sum_scale(p->in_offset + in[k][i], p->left_shift,
                                               p->in_multiplier, p->in_shift));
        }
        out[i] = tc_sum_out(acc, p->out_multiplier, p->out_shift, p->out_offset);
    }
}

void tc_cumsum_s8(const tc_cumsum_params_t *p, const int8_t *in, int8_t *out)
{
    const int32_t start = tc_sum_scale(p->in_offset, p->left_shift, p->in_multiplier, p->in_shift);
    const int32_t step = p->reverse ? -p->inner : p->inner;
    int32_t o;
    int32_t j;
    int32_t d;

    for (o = 0; o < p->outer; ++o) {
        for (j = 0; j < p->inner; ++j) {
            int32_t idx = o * p->depth * p->inner + j + (p->reverse ? (p->depth - 1) * p->inner : 0);
            int32_t acc = start;
            for (d = 0; d < p->depth; ++d, idx += step) {
                const int32_t v = tc_sum_scale(p->in_offset + in[idx], p->left_shift,
                                               p->in_multiplier, p->in_shift);
                int32_t s;
                if (p->exclusive) {
                    s = acc;
                    acc = tc_sum_add(acc, v);
                } else {
                    acc = tc_sum_add(acc, v);
                    s = acc;
                }
                out[idx] = tc_sum_out(s, p->out_multiplier, p->out_shift, p->out_offset);
            }
        }
    }
}
