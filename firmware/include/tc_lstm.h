/* tinycompile runtime: UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations and weights, int16 cell
 * state. Kernel: firmware/kernels/tc_lstm.c.
 *
 * Semantics of TensorFlow Lite Micro's EvalLstm<int8_t, int8_t, int16_t, int32_t> (lstm_eval.h):
 * for every batch row and time step, gate k in (input, forget, cell, output) is
 *   act(sat16(clamp16(rq(W_k . x + bias_k)) + clamp16(rq(R_k . h))))
 * (both FCs requantized to Q3.12; act = int16 LUT sigmoid, tanh for the cell gate), then
 *   cell = clip(sat16(clamp16(rq(f * cell)) + clamp16(rq(i * g))))
 *   h = clamp8(rq(tanh(cell) * o) + hidden_zp), written to the output and the hidden state.
 * The hidden state (int8) and cell state (int16) are variable tensors updated in place. The
 * compiler folds -input_zp * rowsum(W_k) into the input bias and -hidden_zp * rowsum(R_k) into
 * the recurrent one (gate_bias [2][4][units]); gate_mults holds per gate the input FC multiplier
 * and shift, then the recurrent FC ones.
 */
#ifndef TC_LSTM_H
#define TC_LSTM_H

#include <stdint.h>

typedef struct {
    int32_t batches, steps, input_size, units, time_major;
    int32_t forget_mult, forget_shift; /* forget gate x cell state -> cell state */
    int32_t input_mult, input_shift;   /* input gate x cell gate -> cell state */
    int32_t hidden_mult, hidden_shift; /* tanh(cell) x output gate -> hidden state */
    int32_t hidden_zp;
    int32_t cell_clip;                 /* 0: no clipping */
    int32_t tanh_mult, tanh_shift;     /* cell state -> the tanh LUT's input scaling */
    /* [units][input_size] each, consecutive in one array: w_forget = w_input + units *
     * input_size, and so on (tc_lstm.c reads them through w_input) */
    const int8_t *w_input, *w_forget, *w_cell, *w_output;
    /* [units][units] each, consecutive likewise */
    const int8_t *r_input, *r_forget, *r_cell, *r_output;
    const int32_t *gate_mults;         /* [4][4] */
    const int32_t *gate_bias;          /* [2][4][units] */
    const uint16_t *sigmoid_lut;       /* [256]: sigmoid(i / 24) in 0.16 (ops/lstm.py) */
} tc_lstm_params_t;

void tc_lstm_s8(const tc_lstm_params_t *p, const int8_t *in, int8_t *hidden, int16_t *cell,
                int8_t *out);

#endif /* TC_LSTM_H */
