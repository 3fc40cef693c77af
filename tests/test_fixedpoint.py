"""gemmlowp fixed-point emulation (tinycompile/quant/fixedpoint.py): accuracy against the real
functions, the documented rounding/saturation rules on hand-worked values, and exactness
against TFLM itself through the ops that use it (test_ops_activations.py)."""

from __future__ import annotations

import math

import pytest

from tinycompile.quant import fixedpoint as fp

Q31 = 2.0**31


def _q(x: float, integer_bits: int) -> int:
    return round(x * 2.0 ** (31 - integer_bits))


@pytest.mark.parametrize("integer_bits", [4, 5])
def test_exp_on_negative_values_accuracy(integer_bits: int) -> None:
    top = 2**integer_bits
    for i in range(1, 400):
        x = -top * i / 401
        got = fp.exp_on_negative_values(_q(x, integer_bits), integer_bits) / Q31
        assert abs(got - math.exp(x)) < 2e-7, x
    assert fp.exp_on_negative_values(0, integer_bits) == fp.INT32_MAX


def test_logistic_and_tanh_accuracy() -> None:
    for i in range(-300, 301):
        x = i * 7.9 / 300
        a = _q(x, 4)
        assert abs(fp.logistic(a, 4) / Q31 - 1 / (1 + math.exp(-x))) < 2e-7, x
        assert abs(fp.tanh(a, 4) / Q31 - math.tanh(x)) < 4e-7, x
    assert fp.logistic(0, 4) == 1 << 30
    assert fp.tanh(0, 4) == 0


def test_reciprocals() -> None:
    for i in range(0, 200):
        x = i / 200
        a = _q(x, 0)
        assert abs(fp.one_over_one_plus_x_for_x_in_0_1(a) / Q31 - 1 / (1 + x)) < 1e-8
        assert abs(fp.one_minus_x_over_one_plus_x_for_x_in_0_1(a) / Q31 - (1 - x) / (1 + x)) < 1e-8
    for s in (1.0, 1.25, 3.0, 100.5, 4000.0):
        raw, bits = fp.get_reciprocal(_q(s, 12), 12)
        assert abs(raw / Q31 * 2.0**-bits - 1 / s) < 1e-8 / min(s, 1.0)


def test_rounding_and_saturation_rules() -> None:
    # RoundingHalfSum: halves go away from zero
    assert fp.rounding_half_sum(3, 4) == 4
    assert fp.rounding_half_sum(-3, -4) == -4
    assert fp.rounding_half_sum(1, -2) == -1
    # SaturatingRoundingMultiplyByPOT
    assert fp.sat_mul_pot(1 << 29, 2) == fp.INT32_MAX
    assert fp.sat_mul_pot((1 << 29) - 1, 2) == (1 << 31) - 4
    assert fp.sat_mul_pot(-(1 << 29), 2) == fp.INT32_MIN
    assert fp.sat_mul_pot(3, 2) == 12
    assert fp.sat_mul_pot(6, -2) == 2  # 1.5 -> 2
    assert fp.sat_mul_pot(-6, -2) == -2  # -1.5 -> -2
    assert fp.sat_mul_pot(-5, -2) == -1  # -1.25 -> -1
    # int16 high multiplies: rounding vs truncating, and the -1 * -1 saturation
    assert fp.srdhm16(3, 16384) == 2  # 1.5, nudged up
    assert fp.sdhm16(3, 16384) == 1  # 1.5, truncated
    assert fp.sdhm16(-3, 16384) == -1
    assert fp.srdhm16(-32768, -32768) == 32767
    assert fp.sdhm16(-32768, -32768) == 32767
    assert fp.saturating_left_shift16(20000, 1) == 32767
    assert fp.saturating_left_shift16(-20000, 1) == -32768
    assert fp.downscale_multiplier_to_int16(1 << 30) == 1 << 14
    assert fp.downscale_multiplier_to_int16(fp.INT32_MAX) == 32767
    assert fp.wrap32(fp.INT32_MAX + 1) == fp.INT32_MIN


def test_input_radius() -> None:
    # 15 * 2^27 / 2^shift, floored
    assert fp.calculate_input_radius(4, 28) == 7
    assert fp.calculate_input_radius(4, 23) == 240
    assert fp.calculate_input_radius(5, 26) == 31
    with pytest.raises(ValueError):
        fp.calculate_input_radius(4, -1)
