"""SPLIT and SPLIT_V (int8 and int16), as TFLM's split.cc and split_v.cc: output k is the k-th block
of the input along the (constant) axis; bytes move, nothing is requantized. One ``tc_copy_s8`` call
per output (firmware/kernels/tc_copy.c), loops from ``datamove``; outputs never read still get their
bytes (the planner places every output of an op at its step). SPLIT splits evenly in ``num_splits``
(its inputs: axis, then data); SPLIT_V in the constant ``size_splits`` (one may be -1: the rest; its
inputs: data, size_splits, axis).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register


def _axis(op: Op, g: Graph, i: int, rank: int) -> int:
    vals = dm.const_ints(op, g, i, "axis")
    if vals.size != 1:
        raise fail(op, f"axis tensor has {vals.size} values, expected 1")
    axis = int(vals[0])
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise fail(op, f"axis {axis} out of range for rank {rank}")
    return a


def _sizes(op: Op, g: Graph, n: int) -> list[int]:
    """SPLIT_V's block sizes along an axis of ``n`` (a -1 takes the rest)."""
    sizes = [int(v) for v in dm.const_ints(op, g, 1, "size_splits")]
    if len(sizes) != len(op.outputs):
        raise fail(op, f"{len(sizes)} size_splits for {len(op.outputs)} outputs")
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise fail(op, f"size_splits {sizes} are not sizes (at most one -1)")
    if -1 in sizes:
        sizes[sizes.index(-1)] = n - sum(s for s in sizes if s != -1)
    if sum(sizes) != n or min(sizes) < 0:
        raise fail(op, f"size_splits {sizes} do not add up to the axis size {n}")
    return sizes


@register
class SplitOp(dm.CopyOperator):
    kinds = ("SPLIT", "SPLIT_V")
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"num_splits": int(options.get("num_splits", 0))}

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        data = 0 if op.kind == "SPLIT_V" else 1
        if len(op.inputs) != (3 if op.kind == "SPLIT_V" else 2) or not op.outputs:
            raise fail(op, "unexpected inputs or outputs")
        dm.check_io(op, g, [data], list(range(len(op.outputs))), dm.INT8_16)
        shape = g.t(op.inputs[data]).shape
        axis = _axis(op, g, 2 if op.kind == "SPLIT_V" else 0, len(shape))
        n = shape[axis]
        if op.kind == "SPLIT":
            k = len(op.outputs)
            if op.attrs.get("num_splits", k) not in (0, k) or n % k:
                raise fail(op, f"cannot split an axis of {n} evenly in {k} outputs")
            sizes = [n // k] * k
        else:
            sizes = _sizes(op, g, n)
        st = dm.strides(shape)
        copies, start = [], 0
        for k, size in enumerate(sizes):
            out_shape = [*shape[:axis], size, *shape[axis + 1 :]]
            dm.check_shape(op, g, k, out_shape)
            loops = [dm.Loop(c, s) for c, s in zip(out_shape, st, strict=True)]
            copies.append(dm.simplify(op, start * st[axis], loops, input=data, output=k))
            start += size
        return dm.Copies(copies=tuple(copies))
