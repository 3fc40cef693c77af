"""SQUARED_DIFFERENCE (int8, broadcasting), as TFLM's squared_difference.cc computes it: both
operands shifted left by 7 bits and rescaled to a common scale (``PrepareQuantized``, in
double), subtracted, squared, requantized by ``twice_max^2 / (2^14 * output_scale)`` (any
sign), clamped to int8. TFLM broadcasts through a 4-D helper: broadcasting above rank 4 is
refused. Kernel: ``tc_squared_difference_s8`` (firmware/kernels/tc_binary.c), with ADD's params
struct. Runs in place over input 0 when sizes allow.
"""

from __future__ import annotations

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier, quantize_multiplier_smaller_than_one
from .add import NO_FAST, Add
from .base import Choice, LowerCtx, Operator, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import inp, out, positive_scales
from .minmax import check_broadcast_rank

LEFT_SHIFT = 7  # TFLM: 255^2 * 2^14 still fits int32


@register
class SquaredDifferenceOp(Operator):
    kinds = ("SQUARED_DIFFERENCE",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Add:
        lo, hi = check_binary(op, g)
        check_broadcast_rank(op, g, 4)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        positive_scales(op, a, b, o)
        twice_max = 2.0 * max(a.quant.s, b.quant.s)
        fields = {"in1_offset": -a.quant.zp, "in2_offset": -b.quant.zp, "left_shift": LEFT_SHIFT}
        for name, real in (("in1", a.quant.s / twice_max), ("in2", b.quant.s / twice_max)):
            m, s = quantize_multiplier_smaller_than_one(real)
            fields.update({f"{name}_multiplier": m, f"{name}_shift": s})
        real_out = twice_max * twice_max / ((1 << (2 * LEFT_SHIFT)) * o.quant.s)
        m, s = quantize_multiplier(real_out)
        fields.update(out_multiplier=m, out_shift=s)
        fields.update(out_offset=o.quant.zp, act_min=lo, act_max=hi)
        return Add(macs=o.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        fields.update(NO_FAST)
        p = ctx.params("tc_add_params_t", fields)
        return binary_call("tc_squared_difference_s8", op, ctx, p)
