/* TFLM signal library, spectrum half: SignalWindow, SignalFftAutoScale, SignalRfft (int16),
 * SignalEnergy. Matches TFLM's signal/micro/kernels/{window,fft_auto_scale_kernel,rfft,energy}.cc
 * with signal/src/{window,fft_auto_scale,max_abs,msb_32,rfft_int16,energy}.cc; the RFFT is
 * kiss_fft's int16 fixed-point algorithm (v130, FIXED_POINT 16, as TFLM builds it) written
 * anew: a complex FFT of fft_length / 2 by decimation in time over radix-4 then radix-2
 * stages (iterative: kiss_fft's recursion unrolled), each stage dividing its inputs by its radix (rounded Q15 multiply by 32767 / radix),
 * Q15 rounded complex products with the twiddles, int16 wrap-around on every stored value; then
 * the real-FFT split with the super twiddles. The compiler computes every twiddle as kiss_fft
 * does (floor(0.5 + 32767 * cos/sin(phase)) in double precision), so no libm here.
 */
#include <stddef.h>
#include <string.h>

#include "tc_signal.h"

static int16_t tc_sat16(int32_t v)
{
    return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

void tc_signal_window(const tc_signal_window_params_t *p, const int16_t *in, const int16_t *w,
                      int16_t *out)
{
    for (int32_t base = 0; base < p->size; base += p->weight_size) {
        for (int32_t i = 0; i < p->weight_size; i++) {
            int32_t prod = (int32_t)in[base + i] * w[i];
            out[base + i] = tc_sat16(prod >> p->shift);
        }
    }
}

/* The bit length of x; 32 for 0 (TFLM's MostSignificantBit32 as GCC and Clang build it). */
static int32_t tc_msb32(uint32_t x)
{
    int32_t n = 0;
    if (x == 0) {
        return 32;
    }
    while (x) {
        x >>= 1;
        n++;
    }
    return n;
}

void tc_signal_fft_auto_scale(const tc_signal_fft_auto_scale_params_t *p, const int16_t *in,
                              int16_t *out, int32_t *scale_bits)
{
    int16_t max = 0;
    for (int32_t i = 0; i < p->size; i++) {
        int16_t v = in[i];
        if (v > max) {
            max = v;
        } else if (-(int32_t)v > max) { /* TFLM's MaxAbs16: -(-32768) is stored as -32768 */
            max = (int16_t)-(int32_t)v;
        }
    }
    int32_t bits = 16 - tc_msb32((uint32_t)(int32_t)max) - 1;
    if (bits < 0) {
        bits = 0;
    }
    for (int32_t i = 0; i < p->size; i++) {
        out[i] = (int16_t)((int32_t)in[i] * (1 << bits));
    }
    *scale_bits = bits;
}

/* ---- kiss_fft int16 arithmetic ------------------------------------------------------------ */

typedef struct {
    int16_t r;
    int16_t i;
} tc_cpx16;

/* Q15 rounding of a 32-bit product sum, stored as int16 */
static int16_t tc_q15(int32_t x)
{
    return (int16_t)((x + (1 << 14)) >> 15);
}

/* divide by the stage radix: a rounded Q15 multiply by 32767 / radix */
static tc_cpx16 tc_cdiv(tc_cpx16 a, int32_t k)
{
    tc_cpx16 o;
    o.r = tc_q15((int32_t)a.r * k);
    o.i = tc_q15((int32_t)a.i * k);
    return o;
}

static tc_cpx16 tc_cmul(tc_cpx16 a, tc_cpx16 b)
{
    tc_cpx16 o;
    o.r = tc_q15((int32_t)a.r * b.r - (int32_t)a.i * b.i);
    o.i = tc_q15((int32_t)a.r * b.i + (int32_t)a.i * b.r);
    return o;
}

static tc_cpx16 tc_cadd(tc_cpx16 a, tc_cpx16 b)
{
    tc_cpx16 o;
    o.r = (int16_t)(a.r + b.r);
    o.i = (int16_t)(a.i + b.i);
    return o;
}

static tc_cpx16 tc_csub(tc_cpx16 a, tc_cpx16 b)
{
    tc_cpx16 o;
    o.r = (int16_t)(a.r - b.r);
    o.i = (int16_t)(a.i - b.i);
    return o;
}

static tc_cpx16 tc_tw(const int16_t *tw, size_t k)
{
    tc_cpx16 o;
    o.r = tw[2 * k];
    o.i = tw[2 * k + 1];
    return o;
}

/* recombine `radix` interleaved sub-FFTs of length m (radix 2) */
static void tc_radix2(tc_cpx16 *f, size_t stride, const int16_t *tw, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        tc_cpx16 a = tc_cdiv(f[j], 32767 / 2);
        tc_cpx16 b = tc_cdiv(f[j + m], 32767 / 2);
        tc_cpx16 t = tc_cmul(b, tc_tw(tw, j * stride));
        f[j + m] = tc_csub(a, t);
        f[j] = tc_cadd(a, t);
    }
}

/* radix 4, forward */
static void tc_radix4(tc_cpx16 *f, size_t stride, const int16_t *tw, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        tc_cpx16 x0 = tc_cdiv(f[j], 32767 / 4);
        tc_cpx16 x1 = tc_cdiv(f[j + m], 32767 / 4);
        tc_cpx16 x2 = tc_cdiv(f[j + 2 * m], 32767 / 4);
        tc_cpx16 x3 = tc_cdiv(f[j + 3 * m], 32767 / 4);
        tc_cpx16 p1 = tc_cmul(x1, tc_tw(tw, j * stride));
        tc_cpx16 p2 = tc_cmul(x2, tc_tw(tw, 2 * j * stride));
        tc_cpx16 p3 = tc_cmul(x3, tc_tw(tw, 3 * j * stride));
        tc_cpx16 diff02 = tc_csub(x0, p2);
        tc_cpx16 sum02 = tc_cadd(x0, p2);
        tc_cpx16 sum13 = tc_cadd(p1, p3);
        tc_cpx16 diff13 = tc_csub(p1, p3);
        f[j + 2 * m] = tc_csub(sum02, sum13);
        f[j] = tc_cadd(sum02, sum13);
        f[j + m].r = (int16_t)(diff02.r + diff13.i);
        f[j + m].i = (int16_t)(diff02.i - diff13.r);
        f[j + 3 * m].r = (int16_t)(diff02.r - diff13.i);
        f[j + 3 * m].i = (int16_t)(diff02.i + diff13.r);
    }
}

/* Decimation in time, kiss_fft's recursion unrolled (no recursion: the stack stays bounded):
 * the inputs in mixed-radix digit-reversed order (``perm``, computed by the compiler), then the
 * stages from the innermost out; at stage l, n / (radix * m) blocks of radix sub-DFTs of length
 * m each are recombined with twiddle stride n / (radix * m), as kiss_fft's kf_work does. */
static void tc_fft(const tc_signal_rfft_params_t *p, const tc_cpx16 *in, tc_cpx16 *out)
{
    const size_t n = (size_t)(p->fft_length / 2);
    for (size_t j = 0; j < n; j++) {
        out[j] = in[p->perm[j]];
    }
    for (int32_t l = p->n_stages - 1; l >= 0; l--) {
        const size_t radix = (size_t)p->stages[2 * l];
        const size_t m = (size_t)p->stages[2 * l + 1];
        const size_t blocks = n / (radix * m);
        for (size_t b = 0; b < blocks; b++) {
            tc_cpx16 *f = out + b * radix * m;
            if (radix == 4) {
                tc_radix4(f, blocks, p->twiddles, m);
            } else {
                tc_radix2(f, blocks, p->twiddles, m);
            }
        }
    }
}

static void tc_rfft_frame(const tc_signal_rfft_params_t *p, const int16_t *frame, tc_cpx16 *tmp,
                          int16_t *out)
{
    const int32_t n = p->fft_length / 2; /* complex FFT length */
    tc_fft(p, (const tc_cpx16 *)(const void *)frame, tmp);
    tc_cpx16 dc = tc_cdiv(tmp[0], 32767 / 2);
    out[0] = (int16_t)(dc.r + dc.i);
    out[1] = 0;
    out[2 * n] = (int16_t)(dc.r - dc.i);
    out[2 * n + 1] = 0;
    for (int32_t k = 1; k <= n / 2; k++) {
        tc_cpx16 a = tmp[k];
        tc_cpx16 b;
        b.r = tmp[n - k].r;
        b.i = (int16_t)-tmp[n - k].i;
        a = tc_cdiv(a, 32767 / 2);
        b = tc_cdiv(b, 32767 / 2);
        tc_cpx16 s = tc_cadd(a, b);
        tc_cpx16 d = tc_csub(a, b);
        tc_cpx16 t = tc_cmul(d, tc_tw(p->super_twiddles, (size_t)(k - 1)));
        out[2 * k] = (int16_t)((s.r + t.r) >> 1);
        out[2 * k + 1] = (int16_t)((s.i + t.i) >> 1);
        out[2 * (n - k)] = (int16_t)((s.r - t.r) >> 1);
        out[2 * (n - k) + 1] = (int16_t)((t.i - s.i) >> 1);
    }
}

void tc_signal_rfft_s16(const tc_signal_rfft_params_t *p, const int16_t *in, int16_t *out,
                        int16_t *scratch)
{
    int16_t *frame = scratch;
    tc_cpx16 *tmp = (tc_cpx16 *)(void *)(scratch + p->fft_length);
    for (int32_t i = 0, o = 0; i < p->input_size; i += p->input_length, o += p->output_length) {
        memcpy(frame, in + i, sizeof(int16_t) * (size_t)p->input_length);
        memset(frame + p->input_length, 0,
               sizeof(int16_t) * (size_t)(p->fft_length - p->input_length));
        tc_rfft_frame(p, frame, tmp, out + 2 * o);
    }
}

void tc_signal_energy(const tc_signal_energy_params_t *p, const int16_t *in, uint32_t *out)
{
    for (int32_t i = 0; i < p->size; i++) {
        if (i < p->start_index || i >= p->end_index) {
            out[i] = 0; /* TFLM leaves these unwritten; the compiler's arena is not zeroed */
            continue;
        }
        int32_t re = in[2 * i];
        int32_t im = in[2 * i + 1];
        out[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
    }
}
