/* TFLM signal library, filter bank half: SignalFilterBank, SignalFilterBankSquareRoot,
 * SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog. Matches TFLM's
 * signal/micro/kernels/{filter_bank,filter_bank_square_root,filter_bank_spectral_subtraction,
 * pcan,filter_bank_log}.cc with signal/src/{filter_bank,square_root_32,square_root_64,
 * filter_bank_square_root,filter_bank_spectral_subtraction,pcan_argc_fixed,log,
 * filter_bank_log}.cc: 64-bit weighted sums, bitwise integer square roots with TFLM's rounding
 * (and its 32-bit shortcut), the smoothed noise estimate kept across calls, PCAN's piecewise
 * gain lookup and shrink, and the fixed-point log with its 129-entry correction table.
 */
#include <stddef.h>

#include "tc_signal.h"

void tc_signal_filter_bank(const tc_signal_filter_bank_params_t *p, const uint32_t *in,
                           uint64_t *out)
{
    /* channel c's sum takes the weighted bins of band c and the unweighted ones of band c + 1
     * (band 0 only feeds channel 0's unweighted part, as TFLM's scratch channel) */
    uint64_t carry = 0;
    for (int32_t c = 0; c <= p->num_channels; c++) {
        const int32_t f0 = p->freq_starts[c];
        const int32_t w0 = p->weight_starts[c];
        uint64_t weighted = carry;
        uint64_t unweighted = 0;
        for (int32_t j = 0; j < p->widths[c]; j++) {
            const uint64_t v = in[f0 + j];
            weighted += (uint64_t)(int64_t)p->weights[w0 + j] * v;
            unweighted += (uint64_t)(int64_t)p->unweights[w0 + j] * v;
        }
        if (c > 0) {
            out[c - 1] = weighted;
        }
        carry = unweighted;
    }
}

static uint32_t tc_bitlen64(uint64_t x)
{
    uint32_t n = 0;
    while (x) {
        x >>= 1;
        n++;
    }
    return n;
}

/* TFLM's Sqrt32: digit by digit from an odd top bit, rounded up when the remainder exceeds
 * the root (saturating at 0xFFFF) */
static uint32_t tc_sqrt32(uint32_t num)
{
    if (num == 0) {
        return 0;
    }
    uint32_t res = 0;
    int32_t top = (32 - (int32_t)tc_bitlen64(num)) | 1;
    uint32_t bit = 1u << (31 - top);
    for (int32_t it = (31 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFu) {
        res++;
    }
    return (uint16_t)res;
}

static uint32_t tc_sqrt64(uint64_t num)
{
    if ((num >> 32) == 0) {
        return tc_sqrt32((uint32_t)num);
    }
    uint64_t res = 0;
    int32_t top = (64 - (int32_t)tc_bitlen64(num)) | 1;
    uint64_t bit = (uint64_t)1 << (63 - top);
    for (int32_t it = (63 - top) / 2 + 1; it > 0; it--) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFFFFFu) {
        res++;
    }
    return (uint32_t)res;
}

void tc_signal_fb_sqrt(const tc_signal_fb_sqrt_params_t *p, const uint64_t *in,
                       const int32_t *scale_bits, uint32_t *out)
{
    const int32_t shift = *scale_bits;
    for (int32_t i = 0; i < p->num_channels; i++) {
        out[i] = tc_sqrt64(in[i]) >> shift;
    }
}

void tc_signal_spectral_sub(const tc_signal_spectral_sub_params_t *p, const uint32_t *in,
                            uint32_t *state, uint32_t *out, uint32_t *noise_out)
{
    const int32_t sb = p->smoothing_bits;
    const int32_t ssb = p->spectral_subtraction_bits;
    for (int32_t i = 0; i < p->num_channels; i++) {
        const int odd = i & 1;
        const uint32_t s = odd ? p->alternate_smoothing : p->smoothing;
        const uint32_t oms = odd ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
        const uint32_t up = in[i] << sb;
        state[i] = (uint32_t)(((uint64_t)up * s + (uint64_t)state[i] * oms) >> ssb);
        uint32_t est = state[i];
        if (est > up) {
            est = up;
            if (p->clamping) {
                state[i] = est;
            }
        }
        const uint32_t floor = (uint32_t)(((uint64_t)in[i] * p->min_signal_remaining) >> ssb);
        const uint32_t sub = (up - est) >> sb;
        out[i] = sub > floor ? sub : floor;
    }
    for (int32_t i = 0; i < p->num_channels; i++) {
        noise_out[i] = state[i];
    }
}

/* PCAN's gain: TFLM's WideDynamicFunction (a quadratic per octave of the noise estimate) */
static int16_t tc_pcan_gain(uint32_t x, const int16_t *lut)
{
    if (x <= 2) {
        return lut[x];
    }
    const int32_t octave = (int32_t)tc_bitlen64(x);
    const int16_t *seg = lut + 4 * octave - 6;
    const int16_t frac =
        (int16_t)(((octave < 11) ? (x << (11 - octave)) : (x >> (octave - 11))) & 0x3FF);
    int32_t r = ((int32_t)seg[2] * frac) >> 5;
    r += (int32_t)((uint32_t)seg[1] << 5);
    r *= frac;
    r = (r + (1 << 14)) >> 15;
    r += seg[0];
    return (int16_t)r;
}

#define TC_PCAN_SNR_BITS 12
#define TC_PCAN_OUTPUT_BITS 6

void tc_signal_pcan(const tc_signal_pcan_params_t *p, const uint32_t *in, const uint32_t *noise,
                    const int16_t *gain_lut, uint32_t *out)
{
    for (int32_t i = 0; i < p->num_channels; i++) {
        const uint32_t gain = (uint32_t)(int32_t)tc_pcan_gain(noise[i], gain_lut);
        const uint32_t snr = (uint32_t)(((uint64_t)in[i] * gain) >> p->snr_shift);
        if (snr < (2u << TC_PCAN_SNR_BITS)) {
            out[i] = (snr * snr) >> (2 + 2 * TC_PCAN_SNR_BITS - TC_PCAN_OUTPUT_BITS);
        } else {
            out[i] = (snr >> (TC_PCAN_SNR_BITS - TC_PCAN_OUTPUT_BITS)) - (1u << TC_PCAN_OUTPUT_BITS);
        }
    }
}

/* log(1 + f) - f over [0, 1) in 128 segments, scale 65536 (TFLM's kLogLut) */
static const uint16_t tc_log_lut[130] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
    2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
    4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
    5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
    5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
    2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

/* natural log of x (> 1) times out_scale, in TFLM's Log32 fixed point */
static uint32_t tc_log32(uint32_t x, uint32_t out_scale)
{
    const uint32_t ilog = tc_bitlen64(x) - 1;
    int32_t frac = (int32_t)(x - (1u << ilog));
    if (ilog < 16) {
        frac <<= 16 - ilog;
    } else {
        frac >>= ilog - 16;
    }
    const uint32_t seg = (uint32_t)frac >> 9;
    const int32_t c0 = tc_log_lut[seg];
    const int32_t c1 = tc_log_lut[seg + 1];
    const int32_t rel = ((c1 - c0) * (frac - (int32_t)(seg << 9))) >> 16;
    const uint32_t log2 = (ilog << 16) + (uint32_t)(frac + c0 + rel);
    const uint32_t loge = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16);
    return (out_scale * loge + 32768) >> 16;
}

void tc_signal_fb_log(const tc_signal_fb_log_params_t *p, const uint32_t *in, int16_t *out)
{
    for (int32_t i = 0; i < p->num_channels; i++) {
        const uint32_t scaled = in[i] << p->input_correction_bits;
        if (scaled > 1) {
            const uint32_t v = tc_log32(scaled, (uint32_t)p->output_scale);
            out[i] = (int16_t)(v < 32767u ? v : 32767u);
        } else {
            out[i] = 0;
        }
    }
}
