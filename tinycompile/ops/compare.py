"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL with broadcasting, writing bool
tensors, as TensorFlow Lite Micro's comparisons.cc computes them.

int8 inputs are always rescaled (``ComparisonWithScaling``, even with equal quantization): each
``(q - zero_point) << 8`` times its own scale as ``QuantizeMultiplierSmallerThanOneExp``, the
int32 results compared; a scale of 1 or more is refused (TFLM's check fails on it). int32 inputs
(all six) and bool inputs (EQUAL, NOT_EQUAL) are compared as they are. TFLM has no int16
comparison. Kernels: ``tc_compare_s8``, ``tc_compare_s32``, ``tc_compare_b``
(firmware/kernels/tc_compare.c).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out
from .nary import check_broadcast, loop_fields, require_dtype

CODES = {"EQUAL": 0, "NOT_EQUAL": 1, "LESS": 2, "LESS_EQUAL": 3, "GREATER": 4, "GREATER_EQUAL": 5}
LEFT_SHIFT = 8  # comparisons.cc's kLeftShift
FUNCS = {"int8": "tc_compare_s8", "int32": "tc_compare_s32", "bool": "tc_compare_b"}


@dataclass(frozen=True, kw_only=True)
class Compare(Prepared):
    dtype: str
    scaling: tuple[tuple[int, int, int], ...]  # int8: per input (offset, multiplier, shift)


@register
class CompareOp(Operator):
    kinds = tuple(CODES)
    checks_types = True

    def prepare(self, op: Op, g: Graph) -> Compare:
        check_broadcast(op, g, 2)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        types = ("int8", "int32") + (("bool",) if op.kind in ("EQUAL", "NOT_EQUAL") else ())
        require_dtype(op, a, types, "input")
        if b.dtype != a.dtype:
            raise fail(op, f"inputs are {a.dtype} and {b.dtype}; TFLM compares one type")
        require_dtype(op, b, types, "input")
        if o.dtype != "bool":
            raise fail(op, f"{o.dtype} output is not supported (comparisons write bool)")
        scaling: list[tuple[int, int, int]] = []
        if a.dtype == "int8":
            for t in (a, b):
                if not 0.0 < t.quant.s < 1.0:
                    raise fail(
                        op, f"input tensor {t.id} has scale {t.quant.s:g}; TFLM needs it below 1"
                    )
                m, s = quantize_multiplier(t.quant.s)
                scaling.append((-t.quant.zp, m, s))
        return Compare(macs=o.size, dtype=a.dtype, scaling=tuple(scaling))

    def lower(self, op: Op, g: Graph, d: Compare, ctx: LowerCtx, choice: Choice) -> str:
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        fields = loop_fields(ctx, [a, b], o)
        (o1, m1, s1), (o2, m2, s2) = d.scaling or ((0, 0, 0), (0, 0, 0))
        fields.update(
            {
                "cmp": CODES[op.kind],
                "left_shift": LEFT_SHIFT if d.scaling else 0,
                "in1_offset": o1,
                "in1_multiplier": m1,
                "in1_shift": s1,
                "in2_offset": o2,
                "in2_multiplier": m2,
                "in2_shift": s2,
            }
        )
        p = ctx.params("tc_compare_params_t", fields)
        args = f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}"
        return f"{FUNCS[d.dtype]}({p}, {args}, {ctx.ptr(op.outputs[0], const=False)});"
