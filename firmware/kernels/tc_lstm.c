/* tinycompile runtime: UNIDIRECTIONAL_SEQUENCE_LSTM, int8 x int8 -> int16 cell (tc_lstm_s8; see
 * tc_lstm.h).
 *
 * Matches TensorFlow Lite Micro's integer LSTM (lstm_eval.h/.cc: LstmStep with the reference
 * FullyConnected, AddElementWise, Logistic/Tanh int16 and MulElementwise). TFLM computes each
 * gate for the whole row into four int16 arena buffers; every element depends only on the old
 * hidden row and the input, so here each unit's four gates, its cell update and its new hidden
 * value are computed together and the new hidden row is built in the output slice TFLM copies
 * it to, then copied to the hidden state: the same values, no scratch. Sigmoid and tanh
 * (tanh(x) = 2 sigmoid(2x) - 1) interpolate linearly in one 256-entry table of sigmoid(i / 24)
 * in 0.16 fixed point, computed at compile time (ops/tables.py: sigmoid_interp_table) and
 * passed in the params (tc_sigmoid16.h, shared with int16 LOGISTIC and TANH). The four gates
 * of a unit share each input and hidden row: their weight
 * matrices are consecutive (the compiler packs them, ops/lstm.py), so one pass over the row
 * feeds four accumulators (tc_dot14_s8: SXTB16 + SMLAD on Cortex-M4/M7; tc_m0_dot14 on
 * ARMv6-M), the same int32 sums with the same wrap-around.
 */
#include <stdint.h>
#include <string.h>

#include "tc_kernel_util.h"
#include "tc_lstm.h"
#include "tc_m0.h"
#include "tc_qmath.h"
#include "tc_sigmoid16.h"

static int32_t tc_sat16(int32_t x)
{
    return tc_clamp(x, -32768, 32767);
}

/* The four gates' pre-activations of unit j (input, forget, cell, output, Q3.12): per gate
 * the clamp16 of each requantized FC (input row, hidden row), then a saturating add. */
static void tc_gates(const tc_lstm_params_t *p, const int8_t *x, const int8_t *h, int32_t j,
                     int32_t *g)
{
    const int32_t U = p->units, D = p->input_size;
    int32_t ai[4], ar[4], k;
    for (k = 0; k < 4; k++) {
        ai[k] = p->gate_bias[k * U + j];
        ar[k] = p->gate_bias[(4 + k) * U + j];
    }
    TC_DOT14(x, p->w_input + j * D, U * D, D, ai);
    TC_DOT14(h, p->r_input + j * U, U * U, U, ar);
    for (k = 0; k < 4; k++) {
        const int32_t *m = p->gate_mults + 4 * k;
        const int32_t vi = tc_sat16(tc_requant(ai[k], m[0], m[1]));
        const int32_t vr = tc_sat16(tc_requant(ar[k], m[2], m[3]));
        g[k] = tc_sat16(vi + vr);
    }
}

void tc_lstm_s8(const tc_lstm_params_t *p, const int8_t *in, int8_t *hidden, int16_t *cell,
                int8_t *out)
{
    const int32_t B = p->batches, T = p->steps, D = p->input_size, U = p->units;
    for (int32_t b = 0; b < B; b++) {
        int8_t *h = hidden + b * U;
        int16_t *c = cell + b * U;
        for (int32_t t = 0; t < T; t++) {
            const int32_t row = p->time_major ? t * B + b : b * T + t;
            const int8_t *x = in + row * D;
            int8_t *o = out + row * U;
            for (int32_t j = 0; j < U; j++) {
                int32_t gv[4];
                tc_gates(p, x, h, j, gv);
                const int32_t ig = tc_logistic16(p->sigmoid_lut, gv[0], 3, 0);
                const int32_t fg = tc_logistic16(p->sigmoid_lut, gv[1], 3, 0);
                const int32_t cg = tc_tanh16(p->sigmoid_lut, gv[2], 3, 0);
                const int32_t og = tc_logistic16(p->sigmoid_lut, gv[3], 3, 0);
                /* the gates are Q0.15 (sigmoid) or signed Q0.15 (tanh): products fit int32 */
                const int32_t keep =
                    tc_sat16(tc_requant(fg * c[j], p->forget_mult, p->forget_shift));
                const int32_t add = tc_sat16(tc_requant(ig * cg, p->input_mult, p->input_shift));
                int32_t cj = tc_sat16(keep + add);
                if (p->cell_clip > 0) {
                    cj = tc_clamp(cj, -p->cell_clip, p->cell_clip);
                }
                c[j] = (int16_t)cj;
                const int32_t th = tc_tanh16(p->sigmoid_lut, cj, p->tanh_mult, p->tanh_shift);
                const int32_t hv =
                    tc_requant(th * og, p->hidden_mult, p->hidden_shift) + p->hidden_zp;
                o[j] = (int8_t)tc_clamp(hv, -128, 127);
            }
            memcpy(h, o, (size_t)U);
        }
    }
}
