/* tinycompile runtime: LEAKY_RELU int16 (16x8), bit-exact with TFLM's reference
 * QuantizeLeakyRelu<int16_t> (leaky_relu.h) as leaky_relu.cc calls it; see tc_leaky_relu.h.
 * No fast path. */
#include "tc_leaky_relu.h"

#include "tc_qmath.h"

void tc_leaky_relu_s16(const tc_leaky_relu_params_t *p, const int16_t *in, int16_t *out)
{
    uint32_t i;

    for (i = 0; i < p->size; ++i) {
        const int32_t x = in[i];
        const int32_t y = x >= 0 ? tc_requant(x, p->m_identity, p->s_identity)
                                 : p->alpha_sign * tc_requant(x, p->m_alpha, p->s_alpha);
        out[i] = (int16_t)tc_clamp(y, -32768, 32767);
    }
}
