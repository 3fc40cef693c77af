"""MUL (int8, broadcasting), as TFLM's mul.cc computes it: the product of the offset inputs
requantized by ``input1_scale * input2_scale / output_scale`` (``CalculateOpDataMul`` in
mul_common.cc), clamped to the fused activation. Kernel: ``tc_mul_s8``
(firmware/kernels/tc_elementwise_mul.c). Runs in place over input 0 when sizes allow. The
compiler recomputes TFLM's result for all 65,536 input pairs and hands the kernel the fast forms
that reproduce every one (``mul_fast.mul_forms``: the Cortex-M4/M7 SMMLAR form and the 32-bit
form of the other cores), at no flash cost beyond seven words. 16x8 (int16, zero points 0, as
TFLM's mul_common.cc requires): the same arithmetic, ``tc_mul_s16`` (tc_elementwise.c). Two
int8 NHWC tensors of one shape (batch 1) multiply row by row in a streamed segment
(``ops.rows``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, register
from .broadcast import SameShapeRows, binary_call, check_binary, shape_fields
from .common import fused_activation, inp, out
from .mul_fast import MUL_FORM_FIELDS, mul_forms
from .s16 import is_int16


@dataclass(frozen=True, kw_only=True)
class Mul(Prepared):
    fields: tuple[tuple[str, int], ...]
    forms: tuple[tuple[str, int], ...] = ()  # int8 MUL's exact forms (mul_fast)


@register
class MulOp(SameShapeRows, Operator):
    kinds = ("MUL",)
    elementwise = True
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Mul:
        lo, hi = check_binary(op, g)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        m, s = quantize_multiplier(a.quant.s * b.quant.s / o.quant.s)
        fields = {
            "in1_offset": -a.quant.zp,
            "in2_offset": -b.quant.zp,
            "out_multiplier": m,
            "out_shift": s,
            "out_offset": o.quant.zp,
            "act_min": lo,
            "act_max": hi,
        }
        forms = () if o.dtype == "int16" else tuple(mul_forms(fields).items())
        return Mul(macs=o.size, fields=tuple(fields.items()), forms=forms)

    def lower(self, op: Op, g: Graph, d: Mul, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        fields.update(dict.fromkeys(MUL_FORM_FIELDS, 0))  # 0: no form found (int16: none sought)
        fields.update(d.forms)
        fn = "tc_mul_s16" if is_int16(op, g) else "tc_mul_s8"
        return binary_call(fn, op, ctx, ctx.params("tc_mul_params_t", fields))
