/* tinycompile runtime: TFLM's signal library (the micro_speech audio front end), kernels in
 * firmware/kernels/tc_signal_spectrum.c (WINDOW, FFT_AUTO_SCALE, RFFT, ENERGY) and
 * firmware/kernels/tc_signal_filterbank.c (FILTER_BANK, FILTER_BANK_SQUARE_ROOT,
 * FILTER_BANK_SPECTRAL_SUBTRACTION, PCAN, FILTER_BANK_LOG).
 *
 * Semantics follow TensorFlow Lite Micro's signal/micro/kernels/ (one .cc per operator) with
 * the arithmetic of signal/src/ (the RFFT: kiss_fft's int16 fixed-point real FFT, twiddles computed by the
 * compiler). Parameters from tinycompile/ops/signal_spectrum.py and signal_filterbank.py.
 */
#ifndef TC_SIGNAL_H
#define TC_SIGNAL_H

#include <stdint.h>

typedef struct {
    int32_t size;        /* input elements */
    int32_t weight_size; /* window length (the input is windowed in blocks of it) */
    int32_t shift;
} tc_signal_window_params_t;

void tc_signal_window(const tc_signal_window_params_t *p, const int16_t *in, const int16_t *w,
                      int16_t *out);

typedef struct {
    int32_t size;
} tc_signal_fft_auto_scale_params_t;

void tc_signal_fft_auto_scale(const tc_signal_fft_auto_scale_params_t *p, const int16_t *in,
                              int16_t *out, int32_t *scale_bits);

typedef struct {
    int32_t fft_length;          /* real FFT length (a power of 2, >= 4) */
    int32_t input_length;        /* samples per frame (last axis of the input) */
    int32_t input_size;          /* all input samples (frames * input_length) */
    int32_t output_length;       /* complex bins written per frame (last axis / 2) */
    int32_t n_stages;            /* radix stages of the fft_length / 2 complex FFT */
    const int16_t *stages;       /* per stage: radix (2 or 4), then its sub-FFT length */
    const int16_t *perm;         /* fft_length / 2: the input point each output slot starts as */
    const int16_t *twiddles;     /* fft_length / 2 complex (re, im) */
    const int16_t *super_twiddles; /* fft_length / 4 complex (re, im) */
} tc_signal_rfft_params_t;

/* scratch: 4 * fft_length bytes (the zero-padded frame and the complex FFT's output) */
void tc_signal_rfft_s16(const tc_signal_rfft_params_t *p, const int16_t *in, int16_t *out,
                        int16_t *scratch);

typedef struct {
    int32_t size; /* output elements (complex input bins) */
    int32_t start_index;
    int32_t end_index;
} tc_signal_energy_params_t;

void tc_signal_energy(const tc_signal_energy_params_t *p, const int16_t *in, uint32_t *out);

typedef struct {
    int32_t num_channels;
    const int16_t *weights;
    const int16_t *unweights;
    const int16_t *freq_starts;   /* num_channels + 1 */
    const int16_t *weight_starts; /* num_channels + 1 */
    const int16_t *widths;        /* num_channels + 1 */
} tc_signal_filter_bank_params_t;

void tc_signal_filter_bank(const tc_signal_filter_bank_params_t *p, const uint32_t *in,
                           uint64_t *out);

typedef struct {
    int32_t num_channels;
} tc_signal_fb_sqrt_params_t;

void tc_signal_fb_sqrt(const tc_signal_fb_sqrt_params_t *p, const uint64_t *in,
                       const int32_t *scale_bits, uint32_t *out);

typedef struct {
    int32_t num_channels;
    uint32_t smoothing;
    uint32_t one_minus_smoothing;
    uint32_t alternate_smoothing;
    uint32_t alternate_one_minus_smoothing;
    uint32_t min_signal_remaining;
    int32_t smoothing_bits;
    int32_t spectral_subtraction_bits;
    int32_t clamping;
} tc_signal_spectral_sub_params_t;

/* state: the noise estimate (num_channels), kept across calls, reset to 0 */
void tc_signal_spectral_sub(const tc_signal_spectral_sub_params_t *p, const uint32_t *in,
                            uint32_t *state, uint32_t *out, uint32_t *noise_out);

typedef struct {
    int32_t num_channels;
    int32_t snr_shift;
} tc_signal_pcan_params_t;

void tc_signal_pcan(const tc_signal_pcan_params_t *p, const uint32_t *in, const uint32_t *noise,
                    const int16_t *gain_lut, uint32_t *out);

typedef struct {
    int32_t num_channels;
    int32_t output_scale;
    int32_t input_correction_bits;
} tc_signal_fb_log_params_t;

void tc_signal_fb_log(const tc_signal_fb_log_params_t *p, const uint32_t *in, int16_t *out);

#endif /* TC_SIGNAL_H */
