"""Lookup tables of the activation, softmax and (de)quantize operators, computed at compile time.

Every int8 -> int8 elementwise op (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU and int8
requantizing QUANTIZE) becomes a 256-entry lookup table: the table is computed here by running
TensorFlow Lite Micro's integer algorithm for that op on all 256 inputs (gemmlowp fixed point in
``quant/fixedpoint.py``), and the device does ``out[i] = lut[(uint8_t)in[i]]``.

DEQUANTIZE is a 256-entry float table (``scale * (q - zp)`` evaluated in float32 as TFLM does),
copied bit for bit. QUANTIZE float32 -> int8 divides by the scale in float32 on the device and
rounds half away from zero. SOFTMAX follows TFLM's int8 fixed-point path: the exp() of every
possible ``x - max`` difference (0..255) is tabulated here; the per-row sum, reciprocal and final
scaling run on the device with the same gemmlowp arithmetic (``firmware/kernels/tc_activations.c``).

Semantics were taken from TFLM's kernels (logistic_common.cc, tanh.cc, hard_swish_common.cc,
activations_common.cc, leaky_relu_common.cc, quantize_common.cc, dequantize_common.cc,
softmax_common.cc and the reference kernels they call).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier, tflite_round

Q8 = range(-128, 128)


def _table(f: Callable[[int], int]) -> np.ndarray:
    """int8 LUT indexed by the input's bit pattern: ``lut[q & 0xFF] = f(q)``."""
    lut = np.empty(256, dtype=np.int8)
    for q in Q8:
        lut[q & 0xFF] = max(-128, min(127, f(q)))
    return lut


def _f32(x: float) -> float:
    return float(np.float32(x))


# ------------------------------------------------------------------ tables (pure functions)


def _q4_lut(in_scale: float, in_zp: int, fn, out_shift: int, out_offset: int) -> np.ndarray:
    """TFLM's int8 LOGISTIC/TANH: input rescaled to Q4.27, saturated outside the input radius,
    gemmlowp ``fn`` evaluated, result shifted down to int8."""
    mult, shift = fp.frexp_multiplier(in_scale * float(1 << 27))
    radius = fp.calculate_input_radius(4, shift)

    def f(q: int) -> int:
        x = q - in_zp
        if x <= -radius:
            return -128
        if x >= radius:
            return 127
        y = fn(fp.mul_by_quantized_multiplier(x, mult, shift), 4)
        return fp.rounding_divide_by_pot(y, out_shift) + out_offset

    return _table(f)


def logistic_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM int8 LOGISTIC (output fixed at scale 1/256, zero point -128)."""
    return _q4_lut(in_scale, in_zp, fp.logistic, 23, -128)


def tanh_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM int8 TANH (output fixed at scale 1/128, zero point 0)."""
    return _q4_lut(in_scale, in_zp, fp.tanh, 24, 0)


def hard_swish_params(in_scale: float, out_scale: float) -> tuple[int, int, int, int]:
    """(output multiplier Q15, output exponent, reluish multiplier Q15, reluish exponent)."""
    hires = _f32(_f32(1.0 / 128.0) * _f32(in_scale))
    reluish_scale = _f32(3.0 / 32768.0)
    om, oe = quantize_multiplier(_f32(hires / _f32(out_scale)))
    rm, re = quantize_multiplier(_f32(hires / reluish_scale))
    return fp.downscale_multiplier_to_int16(om), oe, fp.downscale_multiplier_to_int16(rm), re


def hard_swish_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 HARD_SWISH (the int16 fixed-point reference algorithm)."""
    om, oe, rm, re = hard_swish_params(in_scale, out_scale)
    if oe > 0:
        raise ValueError("HARD_SWISH output multiplier exponent must be <= 0")

    def f(q: int) -> int:
        value = fp.wrap16(q - in_zp)
        hires = fp.wrap16(value * 128)
        preshift_out = fp.srdhm16(hires, om)
        reluish = hires
        if re > 0:
            reluish = fp.saturating_left_shift16(reluish, re - 1)
        reluish = fp.srdhm16(reluish, rm)
        if re > 0:
            reluish = fp.saturating_left_shift16(reluish, 1)
        if re < 0:
            reluish = fp.rounding_divide_by_pot16(reluish, -re)
        reluish = fp.wrap16((reluish + (1 << 15)) >> 1)
        y = fp.rounding_divide_by_pot16(fp.sdhm16(reluish, preshift_out), -oe)
        return fp.wrap16(y + out_zp)

    return _table(f)


def relu_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 RELU: requantize to the output scale, clamp below at the output's zero."""
    mult, shift = quantize_multiplier(in_scale / out_scale)
    lo = max(-128, out_zp)
    return _table(
        lambda q: max(lo, out_zp + fp.mul_by_quantized_multiplier(q - in_zp, mult, shift))
    )


def relu6_lut(in_scale: float, in_zp: int) -> np.ndarray:
    """TFLM int8 RELU6: clamp to [zero, six] in the *input* quantization (no rescaling)."""
    six = max(-128, min(127, tflite_round(_f32(_f32(6.0) / _f32(in_scale))) + in_zp))
    return _table(lambda q: six if q > six else in_zp if q < in_zp else q)


def leaky_relu_lut(
    in_scale: float, in_zp: int, out_scale: float, out_zp: int, alpha: float
) -> np.ndarray:
    """TFLM int8 LEAKY_RELU: identity and alpha multipliers, both derived in float32."""
    ma, sa = quantize_multiplier(_f32(_f32(_f32(in_scale) * _f32(alpha)) / _f32(out_scale)))
    mi, si = quantize_multiplier(_f32(_f32(in_scale) / _f32(out_scale)))

    def f(q: int) -> int:
        x = q - in_zp
        if x >= 0:
            return out_zp + fp.mul_by_quantized_multiplier(x, mi, si)
        return out_zp + fp.mul_by_quantized_multiplier(x, ma, sa)

    return _table(f)


def requantize_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 -> int8 QUANTIZE (reference_ops::Requantize)."""
    mult, shift = quantize_multiplier(in_scale / out_scale)
    return _table(lambda q: fp.mul_by_quantized_multiplier(q - in_zp, mult, shift) + out_zp)


def dequantize_table(scale: float, zp: int) -> np.ndarray:
    """float32 table ``scale * (q - zp)`` (float32 multiply), indexed by ``q & 0xFF``."""
    t = np.empty(256, dtype=np.float32)
    for q in Q8:
        t[q & 0xFF] = np.float32(scale) * np.float32(q - zp)
    return t


def softmax_params(in_scale: float, beta: float) -> tuple[int, int, int]:
    """PreprocessSoftmaxScaling + diff_min: (input multiplier, left shift, diff_min)."""
    real = min(float(beta) * float(in_scale) * float(1 << 26), float(2**31 - 1))
    if not real > 1.0:
        raise ValueError(f"SOFTMAX beta * input scale * 2^26 = {real} must exceed 1")
    mult, shift = quantize_multiplier(real)
    return mult, shift, -fp.calculate_input_radius(5, shift)


def softmax_exp_table(in_scale: float, beta: float) -> np.ndarray:
    """exp(beta * scale * (x - max)) in Q0.31 for d = max - x in 0..255 (0 where TFLM skips d)."""
    mult, shift, diff_min = softmax_params(in_scale, beta)
    t = np.zeros(256, dtype=np.int32)
    for d in range(256):
        diff = -d
        if diff >= diff_min:
            # MultiplyByQuantizedMultiplierGreaterThanOne: left shift, then the high multiply
            rescaled = fp.srdhm(fp.wrap32(diff * (1 << shift)), mult)
            t[d] = fp.exp_on_negative_values(rescaled, 5)
    return t


def softmax_rows(x: np.ndarray, exp_table: np.ndarray, out_bits: int = 8) -> np.ndarray:
    """Python model of the device kernel (rows along the last axis), for tests and tools;
    ``out_bits`` 16: the int16 output (scale 1/65536, zero point -32768)."""
    x = np.asarray(x, dtype=np.int8)
    flat = x.reshape(-1, x.shape[-1]).astype(np.int64)
    lo, hi = -(1 << (out_bits - 1)), (1 << (out_bits - 1)) - 1
    y = np.empty(flat.shape, dtype=np.int8 if out_bits == 8 else np.int16)
    for r, row in enumerate(flat):
        mx = int(row.max())
        exps = [int(exp_table[mx - int(v)]) for v in row]
        total = 0
        for e in exps:
            total = fp.wrap32(total + fp.rounding_divide_by_pot(e, 12))
        scale, bits_over_unit = fp.get_reciprocal(total, 12)
        exponent = bits_over_unit + 31 - out_bits
        for c, e in enumerate(exps):
            v = fp.rounding_divide_by_pot(fp.srdhm(scale, e), exponent) + lo
            y[r, c] = max(lo, min(hi, v))
    return y.reshape(x.shape)


def sigmoid_interp_table() -> np.ndarray:
    """The 256-entry table TFLite's int16 sigmoid and tanh interpolate in (LSTM gates):
    sigmoid(i / 24) in 0.16 fixed point, each entry moved off the curve by half the linear
    interpolation's error at the midpoints of its segments (the mean of the two, inside), so that
    the interpolation error is centred, then rounded; the last entry saturates at 1.0 (0xFFFF).
    Derived here from that description; tests/test_ops_lstm.py checks the LSTM it drives bit for
    bit against TFLM. Every value sits at least 1e-4 from a rounding boundary (checked below), far
    beyond float64's error here, so the evaluation cannot flip an entry."""
    x = np.arange(256, dtype=np.float64) / 24.0
    sig = 65536.0 / (1.0 + np.exp(-x))
    mid = 65536.0 / (1.0 + np.exp(-(np.arange(255, dtype=np.float64) + 0.5) / 24.0))
    half_err = (mid - (sig[:-1] + sig[1:]) / 2.0) / 2.0
    shift = np.zeros(256)
    shift[:-1] += half_err
    shift[1:] += half_err
    shift[1:-1] /= 2.0
    v = sig + shift
    frac = np.abs(v - np.floor(v) - 0.5)
    assert float(frac[:-1].min()) > 1e-4, "an entry sits on a rounding boundary"
    t = np.round(v)
    t[-1] = 65535.0
    return np.minimum(t, 65535.0).astype(np.uint16)


# ------------------------------------------------------------------ int16 (16x8) tables


def _round_f32(x: np.float32) -> np.float32:
    """TfLiteRound on a float: half away from zero, in float32."""
    return np.float32(np.sign(x) * np.floor(np.abs(x) + np.float32(0.5)))


def _expf(x: np.float32) -> np.float32:
    """expf, correctly rounded (double exp rounded once to float32)."""
    return np.float32(np.exp(np.float64(x)))


def _one_over_one_plus_x(x: np.float32) -> np.float32:
    return np.float32(np.float32(1.0) / np.float32(np.float32(1.0) + x))


def lut_populate_int16(
    in_scale: np.float32,
    in_zp: int,
    out_scale: np.float32,
    out_zp: int,
    f: Callable[[np.float32], np.float32],
) -> np.ndarray:
    """TFLM's ``LUTPopulate<int16_t>`` (common.h, float arithmetic): 512 samples of ``f`` over
    the input range, each moved by half the linear interpolation's rounded midpoint error, and
    a 513th for the end, as int16; ``lut_lookup16`` interpolates in it."""
    f32 = np.float32
    with np.errstate(all="ignore"):
        in_min = f32(in_scale * f32(-32768 - in_zp))
        in_max = f32(in_scale * f32(32767 - in_zp))
        out_min = f32(out_scale * f32(-32768 - out_zp))
        out_max = f32(out_scale * f32(32767 - out_zp))
        step = f32(f32(in_max - in_min) / f32(512))
        half = f32(step / f32(2))
        inv = f32(f32(65536) / f32(out_max - out_min))
        lut = np.empty(513, np.int16)
        for i in range(512):
            x = f32(in_min + f32(f32(i) * step))
            val = f(x)
            mid = f(f32(x + half))
            nxt = f(f32(in_min + f32(f32(i + 1) * step)))
            sample = _round_f32(f32(val * inv))
            interp = _round_f32(f32(f32(f32(nxt * inv) + sample) / f32(2)))
            bias = _round_f32(f32(f32(interp - _round_f32(f32(mid * inv))) / f32(2)))
            lut[i] = int(min(max(float(sample - bias), -32768.0), 32767.0))
        last = _round_f32(f32(f(in_max) * inv))
        lut[512] = int(min(max(float(last), -32768.0), 32767.0))
    return lut


def lut_lookup16(value: int, lut: np.ndarray) -> int:
    """TFLM's ``LUTLookup(int16_t, lut)``: 9-bit index, 7-bit linear interpolation."""
    index = 256 + (value >> 7)
    base = int(lut[index])
    slope = int(lut[index + 1]) - base
    return fp.wrap16(base + ((slope * (value & 0x7F) + 64) >> 7))


@lru_cache(maxsize=1)
def softmax_s16_luts() -> tuple[np.ndarray, np.ndarray]:
    """The two tables of TFLM's int16 SOFTMAX (softmax_common.cc): exp(x) over [-10, 0] and
    1 / (1 + x) over [0, 1], both output at scale 2 / 65535. They depend on no model value."""
    f32 = np.float32
    rng = f32(65535)
    exp_lut = lut_populate_int16(f32(f32(10) / rng), 32767, f32(f32(2) / rng), 0, _expf)
    recip_lut = lut_populate_int16(
        f32(f32(1) / rng), -32768, f32(f32(2) / rng), 0, _one_over_one_plus_x
    )
    return exp_lut, recip_lut


def softmax_s16_params(in_scale: float, beta: float) -> tuple[int, int]:
    """(multiplier, shift) of TFLM's int16 SOFTMAX: the input difference rescaled so that
    [-65535, 0] spans [-10, 0] (QuantizeMultiplier of scale * beta / (10 / 65535), in double)."""
    return quantize_multiplier(float(in_scale) * float(beta) / (10.0 / 65535.0))


def log2_rounded(x: float) -> tuple[int, bool]:
    """TFLM's CheckedLog2 in float: (rounded log2, whether within 1e-3 of it)."""
    f32 = np.float32
    lg = f32(f32(np.log(np.float64(f32(x)))) * f32(f32(1.0) / f32(np.log(np.float64(2.0)))))
    r = _round_f32(lg)
    return int(r), bool(abs(float(f32(lg - r))) < 1e-3)


def sigmoid16_params(in_scale: float, tanh: bool) -> tuple[int, int]:
    """(input multiplier, right shift) of TFLM's int16 LOGISTIC / TANH (logistic_common.cc,
    tanh.cc): a power-of-two scale 2^-12 (TANH: also 2^-11) becomes (3 << s, 0), any other the
    multiplier scale * 3 * 4096 doubled into (16383.5, 32767] with the doublings as the shift."""
    log2, pot = log2_rounded(in_scale)
    left = 12 + log2
    if pot and (left == 0 or (tanh and left == 1)):
        return 3 << left, 0
    m, shift = float(in_scale) * 4096.0 * 3.0, 0
    while m <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        m *= 2.0
    return int(m), shift
