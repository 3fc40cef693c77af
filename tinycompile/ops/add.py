"""ADD (int8, broadcasting), as TFLM's add.cc computes it: both inputs rescaled to a common
scale with a left shift of 20 bits (``CalculateOpDataAdd`` in add_common.cc), summed,
requantized, clamped to the fused activation. Kernel: ``tc_add_s8``
(firmware/kernels/tc_elementwise.c). Runs in place over input 0 when sizes allow.

16x8 (int16, zero points 0): the same general-scale arithmetic with a left shift of 15 and the
int16 clamp (TFLM's int16 ``AddElementwise``, not its power-of-two-scale path), ``tc_add_s16``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier_smaller_than_one
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import fused_activation, inp, out
from .s16 import is_int16

LEFT_SHIFT = {"int8": 20, "int16": 15}  # TFLM's left shift by output type


def rescale_fields(
    op: Op, g: Graph, reals: tuple[float, float, float], lo: int, hi: int, left: int
) -> tuple[tuple[str, int], ...]:
    """The params of ADD-like kernels: offsets, the left shift, the two input and the output
    rescale factors (``reals``: in1, in2, out, each in (0, 1)) as multipliers and shifts, the
    output offset and the clamp."""
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    fields = {"in1_offset": -a.quant.zp, "in2_offset": -b.quant.zp, "left_shift": left}
    for name, real in zip(("in1", "in2", "out"), reals, strict=True):
        if not 0.0 < real < 1.0:
            raise fail(op, f"{name} rescale factor {real:g} outside (0, 1): scales unsupported")
        m, s = quantize_multiplier_smaller_than_one(real)
        fields.update({f"{name}_multiplier": m, f"{name}_shift": s})
    fields.update(out_offset=o.quant.zp, act_min=lo, act_max=hi)
    return tuple(fields.items())


def double_reals(sa: float, sb: float, so: float, left: int) -> tuple[float, float, float]:
    """CalculateOpDataAdd's three rescale factors, in double: in1, in2, out."""
    twice_max = 2.0 * max(sa, sb)
    return sa / twice_max, sb / twice_max, twice_max / ((1 << left) * so)


@dataclass(frozen=True, kw_only=True)
class Add(Prepared):
    fields: tuple[tuple[str, int], ...]  # offsets, multipliers, shifts, clamp, in order


@register
class AddOp(Operator):
    kinds = ("ADD",)
    elementwise = True
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Add:
        lo, hi = check_binary(op, g)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        left = LEFT_SHIFT[o.dtype]
        reals = double_reals(a.quant.s, b.quant.s, o.quant.s, left)
        return Add(macs=o.size, fields=rescale_fields(op, g, reals, lo, hi, left))

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        fn = "tc_add_s16" if is_int16(op, g) else "tc_add_s8"
        return binary_call(fn, op, ctx, ctx.params("tc_add_params_t", fields))
