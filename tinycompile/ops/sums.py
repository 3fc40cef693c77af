"""ADD_N and CUMSUM (int8), as TFLM's add_n.cc and cumsum.cc (reference add_n.h, cumsum.h):
both sum offset inputs shifted left by 20 bits and halved (the input multiplier is
``scale / (2 * scale)``), starting from the offset of a zero byte (TFLM's accumulator starts at
``input_offset``, not 0), and requantize the sum by ``2 * scale / (2^20 * output_scale)``
(``QuantizeMultiplierSmallerThanOneExp``, in double). ADD_N sums its inputs element by element
(same shape, same scale and zero point, as TFLM's Prepare requires); CUMSUM sums along one
constant axis, forwards or in reverse, inclusive or exclusive. The int32 sums wrap on overflow
as TFLM's x86 build does. One kernel file for both (firmware/kernels/tc_sums.c), in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier_smaller_than_one
from . import datamove as dm
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, positive_scales, require_int8

LEFT_SHIFT = 20  # TFLM's kAddNIntegerShift / kCumSumIntegerShift


@dataclass(frozen=True, kw_only=True)
class Sum(Prepared):
    fields: tuple[tuple[str, int], ...]


def sum_fields(op: Op, in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> dict:
    """The requantization both share (TFLM's Prepare, in double)."""
    twice = 2.0 * float(in_scale)
    mi, si = quantize_multiplier_smaller_than_one(float(in_scale) / twice)
    try:
        mo, so = quantize_multiplier_smaller_than_one(
            twice / ((1 << LEFT_SHIFT) * float(out_scale))
        )
    except ValueError:
        raise fail(op, "output scale too small for the input scale (multiplier >= 1)") from None
    return {
        "in_offset": -in_zp,
        "in_multiplier": mi,
        "in_shift": si,
        "left_shift": LEFT_SHIFT,
        "out_multiplier": mo,
        "out_shift": so,
        "out_offset": out_zp,
    }


@register
class AddNOp(Operator):
    kinds = ("ADD_N",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Sum:
        if len(op.inputs) < 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects at least 2 inputs and 1 output")
        require_int8(op, g, [*op.inputs, op.outputs[0]])
        first, o = inp(op, g, 0), out(op, g)
        positive_scales(op, first, o)
        for tid in op.inputs[1:]:
            t = g.t(tid)
            if t.shape != first.shape:
                raise fail(op, f"input shapes {list(first.shape)} and {list(t.shape)} differ")
            if (t.quant.s, t.quant.zp) != (first.quant.s, first.quant.zp):
                raise fail(op, "inputs with differing scales or zero points (TFLM refuses them)")
        if o.shape != first.shape:
            raise fail(op, f"output shape {list(o.shape)} differs from the inputs'")
        f = {"size": o.size, "n_inputs": len(op.inputs)}
        f.update(sum_fields(op, first.quant.s, first.quant.zp, o.quant.s, o.quant.zp))
        return Sum(macs=o.size * len(op.inputs), fields=tuple(f.items()))

    def lower(self, op: Op, g: Graph, d: Sum, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_add_n_params_t", dict(d.fields))
        ins = ", ".join(ctx.ptr(t) for t in op.inputs)
        return (
            f"{{ const int8_t *const tc_in_[{len(op.inputs)}] = {{{ins}}}; "
            f"tc_add_n_s8({p}, tc_in_, {ctx.ptr(op.outputs[0], const=False)}); }}"
        )


@register
class CumsumOp(Operator):
    kinds = ("CUMSUM",)
    elementwise = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "exclusive": bool(options.get("exclusive", False)),
            "reverse": bool(options.get("reverse", False)),
        }

    def prepare(self, op: Op, g: Graph) -> Sum:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects an input, an axis and 1 output")
        require_int8(op, g, [op.inputs[0], op.outputs[0]])
        i, o = inp(op, g, 0), out(op, g)
        positive_scales(op, i, o)
        if inp(op, g, 1).dtype != "int32":
            raise fail(op, f"{inp(op, g, 1).dtype} axis tensor (TFLM takes int32)")
        axes = dm.const_ints(op, g, 1, "axis")
        rank = len(i.shape)
        if axes.size != 1 or rank < 1:
            raise fail(op, "expects one axis and an input of rank 1 or more")
        axis = int(axes[0]) + (rank if axes[0] < 0 else 0)
        if not 0 <= axis < rank:
            raise fail(op, f"axis {int(axes[0])} out of range for rank {rank} (TFLM fails)")
        if o.shape != i.shape:
            raise fail(op, f"output shape {list(o.shape)} differs from the input's")
        f = {
            "outer": int(np.prod(i.shape[:axis], dtype=np.int64)),
            "depth": int(i.shape[axis]),
            "inner": int(np.prod(i.shape[axis + 1 :], dtype=np.int64)),
            "exclusive": int(op.attrs.get("exclusive", False)),
            "reverse": int(op.attrs.get("reverse", False)),
        }
        f.update(sum_fields(op, i.quant.s, i.quant.zp, o.quant.s, o.quant.zp))
        return Sum(macs=o.size, fields=tuple(f.items()))

    def lower(self, op: Op, g: Graph, d: Sum, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_cumsum_params_t", dict(d.fields))
        return f"tc_cumsum_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"
