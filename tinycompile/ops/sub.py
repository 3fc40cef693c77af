"""SUB (int8, broadcasting), as TFLM's sub.cc computes it: ADD's arithmetic (``CalculateOpDataSub``
in sub_common.cc computes the same offsets, 20-bit left shift and three multipliers as
``CalculateOpDataAdd``) with the rescaled operands subtracted. Kernel: ``tc_sub_s8``
(firmware/kernels/tc_binary.c), which takes ADD's params struct. Runs in place over input 0
when sizes allow.
"""

from __future__ import annotations

from ..ir import Graph, Op
from .add import Add, AddOp
from .base import Choice, LowerCtx, register
from .broadcast import binary_call, shape_fields


@register
class SubOp(AddOp):
    kinds = ("SUB",)

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        return binary_call("tc_sub_s8", op, ctx, ctx.params("tc_add_params_t", fields))
