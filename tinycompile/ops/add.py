"""ADD (int8, broadcasting), as TFLM's add.cc computes it: both inputs rescaled to a common
scale with a left shift of 20 bits (``CalculateOpDataAdd`` in add_common.cc), summed,
requantized, clamped to the fused activation. Kernel: ``tc_add_s8``
(firmware/kernels/tc_elementwise.c). Runs in place over input 0 when sizes allow. An int8 ADD
whose 65,536 input pairs a linear form reproduces exactly (``elem_fast.add_forms``, checked at
compile time) runs that form, at no flash cost; else large int8 ADDs take their two input
rescalings from compile-time tables (``input_tables``, 2 KB).

16x8 (int16, zero points 0): the same general-scale arithmetic with a left shift of 15 and the
int16 clamp (TFLM's int16 ``AddElementwise``, not its power-of-two-scale path), ``tc_add_s16``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import multiply_by_quantized_multiplier_np, quantize_multiplier_smaller_than_one
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .broadcast import SameShapeRows, binary_call, check_binary, shape_fields
from .common import fused_activation, inp, out
from .elem_fast import ADD_FORM_FIELDS, add_forms
from .s16 import is_int16

LEFT_SHIFT = {"int8": 20, "int16": 15}  # TFLM's left shift by output type
# An int8 ADD of at least this many elements looks its rescaled inputs up in two tables of 256
# int32 (2 KB of flash) instead of requantizing both per element (about 40 instructions less
# per element on Cortex-M7); smaller ones compute them.
TABLE_MIN_ELEMENTS = 1024
# tc_add_params_t's fast-path fields, unused (0) unless a lowering found a table or form for
# them: SUB and SQUARED_DIFFERENCE always run without, ADD sets what it found over these
NO_FAST = {"in1_table": "0", "in2_table": "0", **dict.fromkeys(ADD_FORM_FIELDS, 0)}


def input_tables(ctx: LowerCtx, f: dict[str, int]) -> dict[str, str]:
    """``in1_table`` / ``in2_table``: every int8 value's rescaled input, as the kernel would
    compute it (TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp of (v + offset) << 20)."""
    v = np.arange(-128, 128, dtype=np.int64)
    out = {}
    for name in ("in1", "in2"):
        x = (v + f[f"{name}_offset"]) << f["left_shift"]
        t = multiply_by_quantized_multiplier_np(x, f[f"{name}_multiplier"], f[f"{name}_shift"])
        out[f"{name}_table"] = ctx.array(f"{name}_table", "int32_t", t.astype(np.int32))
    return out


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
    forms: tuple[tuple[str, int], ...] = ()  # int8 ADD's exact linear forms (elem_fast)


@register
class AddOp(SameShapeRows, Operator):
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
        fields = rescale_fields(op, g, reals, lo, hi, left)
        forms = () if o.dtype == "int16" else tuple(add_forms(dict(fields)).items())
        return Add(macs=o.size, fields=fields, forms=forms)

    def lower(self, op: Op, g: Graph, d: Add, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        fields.update(NO_FAST)
        wide = is_int16(op, g)
        fields.update(d.forms)
        # the linear form runs on every core: no tables then
        if not wide and not dict(d.forms).get("lin_k") and d.macs >= TABLE_MIN_ELEMENTS:
            fields.update(input_tables(ctx, dict(d.fields)))
        fn = "tc_add_s8"
        if wide:  # the fast kernel's shortcuts need zero points 0 (16x8's) and shifts <= 0
            f = dict(d.fields)
            fast = not any(f[k] for k in ("in1_offset", "in2_offset", "out_offset"))
            fast = fast and max(f["in1_shift"], f["in2_shift"], f["out_shift"]) <= 0
            fn = "tc_add_s16q" if fast and f["left_shift"] == 15 else "tc_add_s16"
        return binary_call(fn, op, ctx, ctx.params("tc_add_params_t", fields))
