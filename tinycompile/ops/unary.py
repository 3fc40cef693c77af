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
(``base.FLOAT_ONLY_IN_TFLM``). 16x8 ABS (int16, zero points 0, as TFLM's int16 path) has
too many inputs for a table: ``tc_abs_s16`` (firmware/kernels/tc_unary.c) requantizes on the
device; int16 ELU is refused (TFLM's ELU is int8 or float32).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier, tflite_round
from .activations import Lut
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, io_int8, lut_call, out
from .s16 import is_int16, require_int16

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


@dataclass(frozen=True, kw_only=True)
class Abs16(Prepared):
    fields: tuple[tuple[str, int], ...]


def abs16(op: Op, g: Graph) -> Abs16:
    """16x8 ABS (TFLM: int16 with zero points 0): no table, ``tc_abs_s16``."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise fail(op, "expects one input and one output")
    require_int16(op, g, [op.inputs[0], op.outputs[0]])
    i, o = inp(op, g), out(op, g)
    if i.size != o.size:
        raise fail(op, f"input has {i.size} elements but output has {o.size}")
    f32 = np.float32
    rescale = f32(i.quant.s) != f32(o.quant.s)
    m, s = quantize_multiplier(float(f32(i.quant.s) / f32(o.quant.s))) if rescale else (0, 0)
    fields = {"size": i.size, "rescale": int(rescale), "multiplier": m, "shift": s}
    return Abs16(macs=i.size, fields=tuple(fields.items()))


@register
class UnaryOp(Operator):
    kinds = tuple(TABLES)
    elementwise = True
    int16 = True  # ABS (TFLM's int16 path); ELU refuses int16 as TFLM (int8 table only)

    def prepare(self, op: Op, g: Graph) -> Lut | Abs16:
        if is_int16(op, g):
            if op.kind != "ABS":
                raise fail(op, f"int16 activations are not supported for {op.kind} (TFLM: int8)")
            return abs16(op, g)
        i, o = io_int8(op, g)
        lut = TABLES[op.kind](i.quant.s, i.quant.zp, o.quant.s, o.quant.zp)
        return Lut(macs=i.size, lut=lut)

    def lower(self, op: Op, g: Graph, d: Lut | Abs16, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d, Abs16):
            return io_call("tc_abs_s16", op, ctx, ctx.params("tc_abs_s16_params_t", dict(d.fields)))
        return lut_call(op, g, ctx, d.lut)
