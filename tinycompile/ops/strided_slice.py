"""STRIDED_SLICE and SLICE (int8 and int16), as TFLM's strided_slice.cc and slice.cc: bytes move,
nothing is requantized. The constant begin/end/strides (or begin/size) become compile-time copy
loops (``datamove``) of ``tc_copy_s8`` (firmware/kernels/tc_copy.c); negative strides walk the input
backwards.

STRIDED_SLICE follows TFLM's ``StridedSliceStartForAxis`` / ``StridedSliceEndForAxis``
(strided_slice_logic.h): negative indices count from the end, then clamp to the axis, begin_mask /
end_mask take the whole axis in the stride's direction, shrink_axis keeps one element and drops
the dim. TFLM sets ellipsis_mask, new_axis_mask and offset to 0 whatever the file says and only
takes inputs up to rank 4 (5 in its reference kernel), so models using them are refused. SLICE
(slice.cc): size -1 means to the end of the axis; up to rank 5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp

MAX_RANK = {"STRIDED_SLICE": 4, "SLICE": 5}  # TFLM's kMaxDim


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def axis_range(n: int, begin: int, end: int, stride: int, masks: tuple[bool, bool, bool]) -> range:
    """The input indices TFLM's strided slice visits along an axis of size ``n``."""
    begin_mask, end_mask, shrink = masks
    start = begin + n if begin < 0 else begin
    start = _clamp(start, 0, n) if stride > 0 else _clamp(start, -1, n - 1)
    if begin_mask:
        start = 0 if stride > 0 else n - 1
    if shrink:
        return range(start, start if start >= n else start + 1)
    stop = end + n if end < 0 else end
    stop = _clamp(stop, 0, n) if stride > 0 else _clamp(stop, -1, n - 1)
    if end_mask:
        stop = n if stride > 0 else -1
    return range(start, stop, stride)


def _views(op: Op, g: Graph) -> tuple[list[range], list[int]]:
    """Per input axis the visited indices, and the output shape."""
    shape = inp(op, g, 0).shape
    rank = len(shape)
    if rank > MAX_RANK[op.kind]:
        raise fail(op, f"rank {rank} input (TFLM slices up to rank {MAX_RANK[op.kind]})")
    begin = dm.const_ints(op, g, 1, "begin")
    if op.kind == "SLICE":
        size = dm.const_ints(op, g, 2, "size")
        if begin.size != rank or size.size != rank:
            raise fail(op, f"begin/size of {begin.size}/{size.size} values for rank {rank}")
        ranges = []
        for n, b, s in zip(shape, begin.tolist(), size.tolist(), strict=True):
            e = n if s == -1 else b + s
            if not 0 <= b <= e <= n:
                raise fail(op, f"slice [{b}, {e}) outside an axis of {n}")
            ranges.append(range(b, e))
        return ranges, [len(r) for r in ranges]
    a = op.attrs
    if a.get("ellipsis_mask") or a.get("new_axis_mask") or a.get("offset"):
        raise fail(
            op, "ellipsis_mask, new_axis_mask and offset are not supported (TFLM ignores them)"
        )
    end = dm.const_ints(op, g, 2, "end")
    step = dm.const_ints(op, g, 3, "strides")
    if not begin.size == end.size == step.size == rank:
        raise fail(op, f"begin/end/strides of {begin.size}/{end.size}/{step.size} for rank {rank}")
    if 0 in step.tolist():
        raise fail(op, "a stride is 0")
    ranges, out = [], []
    for d in range(rank):
        bits = tuple(bool(a.get(m, 0) >> d & 1) for m in ("begin_mask", "end_mask", "shrink"))
        r = axis_range(shape[d], int(begin[d]), int(end[d]), int(step[d]), bits)
        if bits[2] and len(r) != 1:
            raise fail(op, f"shrink_axis on axis {d} indexes outside it")
        ranges.append(r)
        if not bits[2]:
            out.append(len(r))
    return ranges, out


@register
class StridedSliceOp(dm.CopyOperator):
    kinds = ("STRIDED_SLICE", "SLICE")
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        if kind == "SLICE":
            return {}
        keys = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "offset")
        out = {k: int(options.get(k, 0)) for k in keys}
        out["shrink"] = int(options.get("shrink_axis_mask", 0))
        return out

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        n_in = 4 if op.kind == "STRIDED_SLICE" else 3
        if len(op.inputs) != n_in or len(op.outputs) != 1:
            raise fail(op, f"expects {n_in} inputs and 1 output")
        dm.check_io(op, g, [0], [0], dm.INT8_16)
        ranges, out_shape = _views(op, g)
        dm.check_shape(op, g, 0, out_shape)
        st = dm.strides(inp(op, g, 0).shape)
        offset = sum(r.start * s for r, s in zip(ranges, st, strict=True) if len(r))
        loops = [dm.Loop(len(r), r.step * s) for r, s in zip(ranges, st, strict=True)]
        return dm.Copies(copies=(dm.simplify(op, offset, loops),))
