"""gemmlowp fixed-point arithmetic, emulated exactly in Python at compile time.

TensorFlow Lite Micro's int8 LOGISTIC, TANH and SOFTMAX kernels evaluate exp(), 1/(1+x) and
friends with gemmlowp's ``FixedPoint<int32_t, IntegerBits>`` (a Q(IntegerBits).(31-IntegerBits)
number stored in an int32 "raw" value); HARD_SWISH uses a few int16 primitives. This module
reproduces those algorithms on Python ints, written from their documented semantics:

- ``a * b`` of fixed-point values is SaturatingRoundingDoublingHighMul of the raws (the integer
  bits add up), ``+``/``-`` are plain int32 additions (wrapping here, undefined in C++ but never
  reached by the callers' ranges),
- ``Rescale`` and ``SaturatingRoundingMultiplyByPOT`` saturate on left shifts and round to
  nearest on right shifts.

Raw values are Python ints in the int32 range. Everything here is scalar: tables have at most 256
entries, so clarity wins over vectorization.
"""

from __future__ import annotations

import math

from .qmath import INT32_MAX, INT32_MIN, rounding_divide_by_pot, srdhm

INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1


def wrap32(x: int) -> int:
    """Two's complement wrap-around to int32."""
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def wrap16(x: int) -> int:
    """Two's complement wrap-around to int16 (a C++ ``static_cast<int16_t>``)."""
    return ((x + 2**15) & 0xFFFF) - 2**15


def _tdiv(x: int, d: int) -> int:
    """C integer division (truncation toward zero) for d > 0."""
    q = abs(x) // d
    return q if x >= 0 else -q


def add(a: int, b: int) -> int:
    return wrap32(a + b)


def sub(a: int, b: int) -> int:
    return wrap32(a - b)


def neg(a: int) -> int:
    return wrap32(-a)


def sat_mul_pot(x: int, exponent: int) -> int:
    """SaturatingRoundingMultiplyByPOT<exponent> on an int32 raw value."""
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return INT32_MAX
    if x < -threshold:
        return INT32_MIN
    return x << exponent


def rescale(x: int, src_integer_bits: int, dst_integer_bits: int) -> int:
    """gemmlowp::Rescale<dst>(FixedPoint<int32, src>)."""
    return sat_mul_pot(x, src_integer_bits - dst_integer_bits)


def rounding_half_sum(a: int, b: int) -> int:
    """(a + b) / 2 rounded half away from zero (int64 intermediate, truncating division)."""
    s = a + b
    return _tdiv(s + (1 if s >= 0 else -1), 2)


def one_of(integer_bits: int) -> int:
    """FixedPoint::One(): 1.0, or the largest raw value when it is not representable."""
    return INT32_MAX if integer_bits == 0 else 1 << (31 - integer_bits)


def mul_by_quantized_multiplier(x: int, multiplier: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier (double rounding); the left shift wraps like the C++ does."""
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    return rounding_divide_by_pot(srdhm(wrap32(x * (1 << left)), multiplier), right)


# ------------------------------------------------------------------ exp, 1/(1+x), logistic, tanh

_EXP_QUARTER_CONSTANT = 1895147668  # exp(-1/8) in Q0.31
_ONE_THIRD = 715827883  # 1/3 in Q0.31
_EXP_BARREL = (  # (exponent, exp(-2^exponent) in Q0.31)
    (-2, 1672461947),
    (-1, 1302514674),
    (0, 790015084),
    (1, 290630308),
    (2, 39332535),
    (3, 720401),
    (4, 242),
)
_48_OVER_17 = 1515870810  # Q2.29
_NEG_32_OVER_17 = -1010580540  # Q2.29


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: int) -> int:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor expansion around -1/8."""
    x = add(a, 1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = sat_mul_pot(x4, -2)
    poly = sat_mul_pot(add(srdhm(add(x4_over_4, x3), _ONE_THIRD), x2), -1)
    return add(_EXP_QUARTER_CONSTANT, srdhm(_EXP_QUARTER_CONSTANT, add(x, poly)))


def exp_on_negative_values(a: int, integer_bits: int) -> int:
    """exp(a) for a <= 0 given as Q(integer_bits); result in Q0.31."""
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    a_mod_quarter_minus_quarter = sub(a & (one_quarter - 1), one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_quarter, integer_bits, 0)
    )
    remainder = sub(a_mod_quarter_minus_quarter, a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent and remainder & (1 << (frac_bits + exponent)):
            result = srdhm(result, multiplier)
    if integer_bits > 5 and a < -(1 << (36 - integer_bits)):
        result = 0
    if a == 0:
        result = INT32_MAX
    return result


def _newton_reciprocal_q2(a: int) -> tuple[int, int]:
    """Shared Newton-Raphson loop: returns (x ~ 1/half_denominator in Q2.29, half_denominator)."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = add(_48_OVER_17, srdhm(half_denominator, _NEG_32_OVER_17))
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = sub(one_of(2), half_denominator_times_x)
        x = add(x, rescale(srdhm(x, one_minus), 4, 2))
    return x, half_denominator


def one_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """1 / (1 + a) for a in [0, 1), Q0.31 in and out."""
    x, _ = _newton_reciprocal_q2(a)
    return rescale(x, 1, 0)  # ExactMulByPot<-1> turns Q2 into Q1 without touching the raw


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: int) -> int:
    """(1 - a) / (1 + a) for a in [0, 1), Q0.31 in and out."""
    x, _ = _newton_reciprocal_q2(a)
    return rescale(sub(x, one_of(2)), 2, 0)


def logistic(a: int, integer_bits: int) -> int:
    """gemmlowp::logistic of a Q(integer_bits) value; result in Q0.31."""
    if a == 0:
        return 1 << 30
    abs_input = a if a > 0 else neg(a)
    positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(neg(abs_input), integer_bits)
    )
    return positive if a > 0 else sub(INT32_MAX, positive)


def tanh(a: int, integer_bits: int) -> int:
    """gemmlowp::tanh of a Q(integer_bits) value; result in Q0.31."""
    if a == 0:
        return 0
    n = a if a < 0 else neg(a)
    # ExactMulByPot<1>: same raw, one more integer bit, i.e. exp(2n).
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return neg(t) if a < 0 else t


def get_reciprocal(x: int, x_integer_digits: int) -> tuple[int, int]:
    """TFLite's GetReciprocal: (1/x scaled to Q0.31, num_bits_over_unit)."""
    ux = x & 0xFFFFFFFF
    headroom_plus_one = 32 - ux.bit_length()
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted_sum_minus_one = wrap32(((ux << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


# ------------------------------------------------------------------ preparation helpers


def calculate_input_radius(
    input_integer_bits: int, input_left_shift: int, total_bits: int = 31
) -> int:
    """CalculateInputRadius: largest |input| whose rescaled value stays below the Q range."""
    if not 0 <= input_left_shift <= 62:
        raise ValueError(f"input left shift {input_left_shift} out of range")
    max_rescaled = (
        1.0 * ((1 << input_integer_bits) - 1) * (1 << (total_bits - input_integer_bits))
    ) / (1 << input_left_shift)
    return int(math.floor(max_rescaled))


def frexp_multiplier(real: float) -> tuple[int, int]:
    """The (multiplier, shift) pair TFLM's LOGISTIC/TANH Prepare computes with frexp + round."""
    q, shift = math.frexp(real)
    m = q * (1 << 31)
    return int(math.floor(m + 0.5)), shift  # q > 0, so round half away from zero == floor(+.5)


# ------------------------------------------------------------------ int16 primitives (HARD_SWISH)


def srdhm16(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul on int16."""
    if a == b == INT16_MIN:
        return INT16_MAX
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return wrap16(_tdiv(ab + nudge, 1 << 15))


def sdhm16(a: int, b: int) -> int:
    """SaturatingDoublingHighMul on int16 (truncating, no rounding nudge)."""
    if a == b == INT16_MIN:
        return INT16_MAX
    return wrap16(_tdiv(a * b, 1 << 15))


def rounding_divide_by_pot16(x: int, exponent: int) -> int:
    """gemmlowp::RoundingDivideByPOT<int16_t>, including its int16 mask truncation."""
    mask = wrap16((1 << exponent) - 1)
    remainder = wrap16(x & mask)
    threshold = wrap16((mask >> 1) + (1 if x < 0 else 0))
    return wrap16((x >> exponent) + (1 if remainder > threshold else 0))


def saturating_left_shift16(value: int, amount: int) -> int:
    return max(INT16_MIN, min(INT16_MAX, value * (1 << amount)))


def downscale_multiplier_to_int16(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15."""
    if m >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (m + (1 << 15)) >> 16


# ------------------------------------------------------------- 1/sqrt (RSQRT, L2_NORMALIZATION)

_HALF_SQRT_2 = 1518500250  # sqrt(2)/2 in Q0.31
_THREE_HALVES_Q3 = (1 << 28) + (1 << 27)  # 1.5 in Q3.28


def inv_sqrt_multiplier_exp(x: int, reverse_shift: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp: 1/sqrt(x) as (multiplier, shift) for x >= 0, by five
    Newton-Raphson steps in Q3.28 from 1.0 (TFLM's kernels/internal/common.h)."""
    if x <= 1:
        return INT32_MAX, 0
    shift = 11
    while x >= (1 << 29):
        x //= 4
        shift += 1
    clz = 32 - x.bit_length()
    pairs = (clz - 1) // 2 - 1
    shift -= pairs
    x <<= 2 * pairs
    inp = x >> 1  # Q3.28
    half_inp = rounding_divide_by_pot(inp, 1)
    y = one_of(3)
    for _ in range(5):
        y3 = rescale(srdhm(srdhm(y, y), y), 9, 3)
        y = rescale(sub(srdhm(_THREE_HALVES_Q3, y), srdhm(half_inp, y3)), 6, 3)
    m = srdhm(y, _HALF_SQRT_2)
    if shift < 0:
        m = wrap32(m << -shift)
        shift = 0
    return m, shift * reverse_shift


# ------------------------------------------------------------------ log(x) (LOG_SOFTMAX)

_LOG_2 = 1488522236  # log(2) in Q0.31
_SQRT_SQRT_HALF = 1805811301  # 0.5^(1/4) in Q0.31
_ONE_QUARTER = 1 << 29  # Q0.31
_ALPHA_N = 117049297  # 11/240 * 2^(1/4)
_ALPHA_D = 127690142  # 1/20 * 2^(1/4)
_ALPHA_I = 1057819769  # 2 / 2^(1/4) - 2^(1/4)
_ALPHA_F = 638450708  # 1/4 * 2^(1/4)


def clz32(x: int) -> int:
    """Leading zeros of ``x`` as a uint32 (32 for 0)."""
    return 32 - (x & 0xFFFFFFFF).bit_length()


def saturating_add(a: int, b: int) -> int:
    """int32 addition clamped to the int32 range (TFLite's SaturatingAddNonGemmlowp)."""
    return max(INT32_MIN, min(INT32_MAX, a + b))


def saturating_sub(a: int, b: int) -> int:
    """int32 subtraction clamped to the int32 range (TFLite's SaturatingSub)."""
    return max(INT32_MIN, min(INT32_MAX, a - b))


def log_x_for_x_greater_than_or_equal_to_1(x: int, input_bits: int, output_bits: int) -> int:
    """TFLite's log_x_for_x_greater_than_or_equal_to_1_impl: log(x) of a Q(input_bits) raw value
    (x >= 1) as Q(output_bits): the power of two from the leading zeros (two candidates, a
    quarter apart, via a sqrt(1/2) premultiply) plus a rational approximation of the rest."""
    acc_bits = output_bits + 1
    shifted_quarter = rescale(_ONE_QUARTER, 0, acc_bits)
    z_a_headroom_plus_1 = clz32(x)
    r_a_tmp = sat_mul_pot(x, z_a_headroom_plus_1 - 1)
    r_a = sat_mul_pot(srdhm(r_a_tmp, _HALF_SQRT_2), 1)
    z_a_pow_2_adj = saturating_add(
        sat_mul_pot(input_bits - z_a_headroom_plus_1, 31 - acc_bits), shifted_quarter
    )
    z_b = srdhm(x, _HALF_SQRT_2)
    z_b_headroom = clz32(z_b) - 1
    r_b = sat_mul_pot(x, z_b_headroom)
    z_b_pow_2_adj = saturating_sub(
        sat_mul_pot(input_bits - z_b_headroom, 31 - acc_bits), shifted_quarter
    )
    r = min(r_a, r_b)
    z_pow_2_adj = max(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = sub(r, _SQRT_SQRT_HALF)
    q = add(q, q)
    common_sq = srdhm(q, q)
    num = add(srdhm(q, r), srdhm(srdhm(q, common_sq), _ALPHA_N))
    denom_minus_one = add(
        srdhm(p, add(add(_ALPHA_I, q), srdhm(_ALPHA_D, common_sq))), srdhm(_ALPHA_F, q)
    )
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rescale(num, 0, acc_bits)
    total = add(srdhm(z_pow_2_adj, _LOG_2), srdhm(num_scaled, recip_denom))
    return rescale(total, acc_bits, output_bits)
