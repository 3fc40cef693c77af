"""SUB (int8, broadcasting), as TFLM's sub.cc computes it: ADD's arithmetic with the rescaled
operands subtracted. ``CalculateOpDataSub`` (sub_common.cc) computes the same offsets, 20-bit
left shift and three multipliers as ``CalculateOpDataAdd``, except that twice the larger input
scale is a float32 (ADD keeps it in double); the ratios are divided in double, which can
change a multiplier's low bits: done the same way here (dividing in float32 instead disagrees
with the installed TFLM on ordinary scales, e.g. 0.05 / 0.03 / 0.06: 585 of the 65,536 input
pairs, tests/test_kernels_mve_elem.py). Kernel: ``tc_sub_s8`` (firmware/kernels/tc_binary.c),
which takes ADD's params struct. Runs in place over input 0 when sizes allow. 16x8: left shift
15 and the ratios divided in double, as ADD's: float32 division disagrees with the installed
TFLM's int16 SUB (tests/test_ops_int16.py); ``tc_sub_s16``.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op
from .add import LEFT_SHIFT, NO_FAST, Add, AddOp, double_reals, rescale_fields
from .base import Choice, LowerCtx, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import inp, out
from .s16 import is_int16

F32 = np.float32


@register
class SubOp(AddOp):
    kinds = ("SUB",)

    def prepare(self, op: Op, g: Graph) -> Add:
        lo, hi = check_binary(op, g)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        left = LEFT_SHIFT[o.dtype]
        if o.dtype == "int16":  # the installed TFLM divides in double here (as ADD does)
            reals = double_reals(a.quant.s, b.quant.s, o.quant.s, left)
        else:
            sa, sb, so = F32(a.quant.scale[0]), F32(b.quant.scale[0]), F32(o.quant.scale[0])
            twice_max = float(F32(2) * max(sa, sb))  # a float32, the ratios in double
            den = (1 << left) * float(so)
            reals = (0.0, 0.0, 0.0)  # a zero scale: refused by rescale_fields
            if twice_max > 0 and den > 0:
                reals = (float(sa) / twice_max, float(sb) / twice_max, twice_max / den)
        return Add(macs=o.size, fields=rescale_fields(op, g, reals, lo, hi, left))

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        fields.update(NO_FAST)
        fn = "tc_sub_s16" if is_int16(op, g) else "tc_sub_s8"
        return binary_call(fn, op, ctx, ctx.params("tc_add_params_t", fields))
