"""ABS and ELU (int8): elementwise unary operators whose int8 result depends on the input byte
alone, so each becomes one 256-entry table computed here by running TFLM's arithmetic on every
input, and the device runs the shared table kernel ``tc_lut_s8``
(firmware/kernels/tc_activations.c), in place.

ABS follows TFLM's elementwise.cc (``AbsEvalQuantized``): ``|q - in_zp|``, requantized by
``QuantizeMultiplier(in_scale / out_scale)`` (the ratio taken in float32) unless the scales are
equal, plus the output zero point, clamped. ELU follows elu.cc (``PopulateLookupTable``): the
input dequantized in float32, ``exp(x) - 1`` below zero, scaled by the float32 reciprocal of the
output scale, rounded half away from zero. The unary operators TFLM runs on float32 only (NEG,
EXP, LOG, SQRT, SQUARE, FLOOR, CEIL, ROUND, SIN, COS) have no int8 reference and are refused
(``base.FLOAT_ONLY_IN_TFLM``).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier, tflite_round
from .activations import Lut
from .base import Choice, LowerCtx, Operator, register
from .common import io_int8, lut_call

Q8 = range(-128, 128)


def _clamp8(v: int) -> int:
    return max(-128, min(127, v))


def abs_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 ABS on every input, indexed by the input's bit pattern."""
    f32 = np.float32
    rescale = f32(in_scale) != f32(out_scale)
    mult, shift = quantize_multiplier(float(f32(in_scale) / f32(out_scale))) if rescale else (0, 0)
    lut = np.empty(256, dtype=np.int8)
    for q in Q8:
        v = abs(q - in_zp)
        y = fp.mul_by_quantized_multiplier(v, mult, shift) if rescale else v
        lut[q & 0xFF] = _clamp8(y + out_zp)
    return lut


def elu_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 ELU's table (elu.cc), float32 arithmetic as TFLM's Prepare does it."""
    f32 = np.float32
    inv = f32(1.0) / f32(out_scale)
    lut = np.empty(256, dtype=np.int8)
    for q in Q8:
        x = f32(in_scale) * f32(q - in_zp)
        y = f32(math.exp(float(x))) - f32(1.0) if x < 0 else x  # expf: the correctly rounded exp
        r = tflite_round(float(f32(y * inv)))
        lut[q & 0xFF] = _clamp8(int(f32(r) + f32(out_zp)))
    return lut


TABLES = {"ABS": abs_lut, "ELU": elu_lut}


@register
class UnaryOp(Operator):
    kinds = tuple(TABLES)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Lut:
        i, o = io_int8(op, g)
        lut = TABLES[op.kind](i.quant.s, i.quant.zp, o.quant.s, o.quant.zp)
        return Lut(macs=i.size, lut=lut)

    def lower(self, op: Op, g: Graph, d: Lut, ctx: LowerCtx, choice: Choice) -> str:
        return lut_call(op, g, ctx, d.lut)
