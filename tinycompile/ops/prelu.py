"""PRELU (int8), as TFLM's prelu.cc computes it (``CalculatePreluParams`` in prelu_common.cc,
reference/prelu.h's ``BroadcastPrelu4DSlow``): alpha, a tensor broadcast against the input,
and two multipliers, ``input_scale / output_scale`` for non-negative offset inputs and
``input_scale * alpha_scale / output_scale`` for the product of a negative offset input with
its offset alpha; clamped to int8. TFLM's kernel is 4-D: rank above 4 is refused. Kernel:
``tc_prelu_s8`` (firmware/kernels/tc_binary.c). Runs in place over its input when sizes allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import inp, out, positive_scales

MAX_RANK = 4  # reference_ops::BroadcastPrelu4DSlow


@dataclass(frozen=True, kw_only=True)
class Prelu(Prepared):
    fields: tuple[tuple[str, int], ...]


@register
class PreluOp(Operator):
    kinds = ("PRELU",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Prelu:
        check_binary(op, g)
        x, alpha, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if max(len(x.shape), len(alpha.shape), len(o.shape)) > MAX_RANK:
            raise fail(op, f"rank above {MAX_RANK} is not supported (TFLM's PRELU is 4-D)")
        positive_scales(op, x, alpha, o)
        m1, s1 = quantize_multiplier(x.quant.s / o.quant.s)
        m2, s2 = quantize_multiplier(x.quant.s * alpha.quant.s / o.quant.s)
        fields = {
            "in_offset": -x.quant.zp,
            "alpha_offset": -alpha.quant.zp,
            "multiplier1": m1,
            "shift1": s1,
            "multiplier2": m2,
            "shift2": s2,
            "out_offset": o.quant.zp,
        }
        return Prelu(macs=o.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Prelu, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        return binary_call("tc_prelu_s8", op, ctx, ctx.params("tc_prelu_params_t", fields))
