"""TFLite integer arithmetic, emulated exactly in Python at compile time.

These mirror the semantics of TFLite's ``QuantizeMultiplier`` and the gemmlowp primitives
(saturating rounding doubling high multiply, rounding divide by power of two) as used by
TensorFlow Lite Micro's reference kernels (double rounding, the default build). They are written
from the documented semantics, not copied. The C runtime (``firmware/include/tc_qmath.h``)
implements the same primitives for the device; tests check both against TFLM.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def tflite_round(x: float) -> int:
    """std::round: halves away from zero (Python's round() is banker's rounding)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def quantize_multiplier(real: float) -> tuple[int, int]:
    """QuantizeMultiplier: real ~= m * 2^(shift - 31) with m a Q31 in [2^30, 2^31)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = tflite_round(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q_fixed = 0
    if shift > 31:
        # the kernels shift 32-bit values left by this much: refuse instead of overflowing
        raise ValueError(f"requantization multiplier {real:g} is too large (scales are absurd)")
    return int(q_fixed), int(shift)


def quantize_multiplier_smaller_than_one(real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: shift <= 0."""
    if not 0.0 <= real < 1.0:
        raise ValueError(f"multiplier {real} not in [0, 1)")
    return quantize_multiplier(real)


def srdhm(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul on int32."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else (1 - (1 << 30))
    v = ab + nudge
    # C++ integer division truncates toward zero
    q = abs(v) >> 31
    return q if v >= 0 else -q


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    """RoundingDivideByPOT: round half away from zero."""
    if exponent == 0:
        return x
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


# ---------------------------------------------------------------- vectorized numpy versions


def srdhm_np(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    a64 = np.asarray(a, dtype=np.int64)
    b64 = np.asarray(b, dtype=np.int64)
    ab = a64 * b64
    nudge = np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    v = ab + nudge
    q = np.abs(v) >> 31
    res = np.where(v >= 0, q, -q)
    overflow = (a64 == INT32_MIN) & (b64 == INT32_MIN)
    return np.where(overflow, INT32_MAX, res).astype(np.int64)


def rounding_divide_by_pot_np(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0).astype(np.int64)
    return (x >> e) + (remainder > threshold).astype(np.int64)


def multiply_by_quantized_multiplier_np(
    x: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int
) -> np.ndarray:
    shift = np.asarray(shift, dtype=np.int64)
    left = np.where(shift > 0, shift, 0)
    right = np.where(shift > 0, 0, -shift)
    xs = np.asarray(x, dtype=np.int64) << left
    return rounding_divide_by_pot_np(srdhm_np(xs, multiplier), right)
