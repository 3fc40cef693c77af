"""ADD (int8, broadcasting), as TFLM's add.cc computes it: both inputs rescaled to a common
scale with a left shift of 20 bits (``CalculateOpDataAdd`` in add_common.cc), summed,
requantized, clamped to the fused activation. Kernel: ``tc_add_s8``
(firmware/kernels/tc_elementwise.c). Runs in place over input 0 when sizes allow.
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

LEFT_SHIFT = 20  # TFLM: 20 for int8 outputs (15 for int16)


def rescale_fields(
    op: Op, g: Graph, reals: tuple[float, float, float], lo: int, hi: int
) -> tuple[tuple[str, int], ...]:
    """The params of ADD-like kernels: offsets, the left shift, the two input and the output
    rescale factors (``reals``: in1, in2, out, each in (0, 1)) as multipliers and shifts, the
    output offset and the clamp."""
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    fields = {"in1_offset": -a.quant.zp, "in2_offset": -b.quant.zp, "left_shift": LEFT_SHIFT}
    for name, real in zip(("in1", "in2", "out"), reals, strict=True):
        if not 0.0 < real < 1.0:
            raise fail(op, f"{name} rescale factor {real:g} outside (0, 1): scales unsupported")
        m, s = quantize_multiplier_smaller_than_one(real)
        fields.update({f"{name}_multiplier": m, f"{name}_shift": s})
    fields.update(out_offset=o.quant.zp, act_min=lo, act_max=hi)
    return tuple(fields.items())


@dataclass(frozen=True, kw_only=True)
class Add(Prepared):
    fields: tuple[tuple[str, int], ...]  # offsets, multipliers, shifts, clamp, in order


@register
class AddOp(Operator):
    kinds = ("ADD",)
    elementwise = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Add:
        lo, hi = check_binary(op, g)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        twice_max = 2.0 * max(a.quant.s, b.quant.s)
        reals = (
            a.quant.s / twice_max,
            b.quant.s / twice_max,
            twice_max / ((1 << LEFT_SHIFT) * o.quant.s),
        )
        return Add(macs=o.size, fields=rescale_fields(op, g, reals, lo, hi))

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        return binary_call("tc_add_s8", op, ctx, ctx.params("tc_add_params_t", fields))
