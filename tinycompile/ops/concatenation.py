"""CONCATENATION (int8 and int16), a byte copy: ``tc_concat_s8`` (firmware/kernels/tc_shape.c).
TFLM's concatenation.cc refuses int8 inputs whose scale or zero point differs from the output's (it
never requantizes), so such models are refused here too: copying or requantizing would both be a
guess. For int16 (16x8) TFLM only requires zero point 0 of every input and the output and copies the
values whatever their scales; so does this (bit-exact), refusing other zero points. Along W or C of
NHWC tensors (batch 1) it runs row by row in a streamed segment (``ops.rows``): an output row is the
inputs' same rows side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import Bands, Choice, LowerCtx, Operator, Prepared, fail, register
from .common import fused_activation, out, require_int8
from .rows import Reach, row_view
from .s16 import require_int16


def concat_axis(op: Op, g: Graph) -> int:
    rank = len(out(op, g).shape)
    axis = int(op.attrs.get("axis", 0))
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise fail(op, f"axis {axis} out of range for rank {rank}")
    return a


def _check(op: Op, g: Graph) -> int:
    if not op.inputs or -1 in op.inputs or len(op.outputs) != 1:
        raise fail(op, "expects at least 1 input and 1 output")
    int16 = out(op, g).dtype == "int16"
    if int16:  # zero point 0; TFLM copies int16 values whatever their scales
        require_int16(op, g, [*op.inputs, op.outputs[0]])
    else:
        require_int8(op, g, [*op.inputs, op.outputs[0]])
    if op.attrs.get("activation", "NONE") != "NONE":
        raise fail(op, f"fused activation {op.attrs['activation']} (TFLM supports none)")
    o = out(op, g)
    axis = concat_axis(op, g)
    total = 0
    for tid in op.inputs:
        s = g.t(tid).shape
        if len(s) != len(o.shape) or any(s[d] != o.shape[d] for d in range(len(s)) if d != axis):
            raise fail(op, f"input shape {list(s)} does not fit output {list(o.shape)}")
        total += s[axis]
        q = g.t(tid).quant
        if not int16 and (q.zp != o.quant.zp or np.float32(q.s) != np.float32(o.quant.s)):
            raise fail(
                op,
                f"input tensor {tid} is quantized differently from the output; TFLM refuses "
                "int8 concatenation that would need requantization",
            )
    if total != o.shape[axis]:
        raise fail(op, f"inputs sum to {total} along axis {axis}, output has {o.shape[axis]}")
    return axis


@register
class ConcatenationOp(Operator):
    kinds = ("CONCATENATION",)
    int16 = True  # 16x8: zero point 0, values copied

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        if not options:
            raise ValueError("missing ConcatenationOptions")
        return {"axis": options.get("axis", 0), "activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Prepared:
        _check(op, g)
        return Prepared()

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        return _lower(op, g, ctx)

    def row_reach(self, op: Op, g: Graph, d: Prepared) -> tuple[Reach, ...] | None:
        o = out(op, g)
        if o.dtype != "int8":
            return None  # row streaming is for int8 segments
        if len(o.shape) != 4 or o.shape[0] != 1 or concat_axis(op, g) < 2:
            return None  # along H (or not NHWC): an output row is not the inputs' rows
        if len(set(op.inputs)) != len(op.inputs):
            return None
        return tuple(Reach() for _ in op.inputs)

    def lower_row(
        self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice, bands: Bands
    ) -> str:
        return _lower(op, row_view(g, [*op.inputs, op.outputs[0]]), ctx)


def _lower(op: Op, g: Graph, ctx: LowerCtx) -> str:
    o = out(op, g)
    axis = concat_axis(op, g)
    outer = int(np.prod(o.shape[:axis], dtype=np.int64))
    chunks = [int(np.prod(g.t(t).shape[axis:], dtype=np.int64)) for t in op.inputs]
    return dm.concat_call(op, ctx, outer, chunks, dm.ELEM_SIZE[o.dtype])
