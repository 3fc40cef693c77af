"""What the binary elementwise operators (ADD, MUL) share: numpy-style broadcasting up to
rank 6, merged into few loops at compile time, the common checks, and running by rows
(``SameShapeRows``)."""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op
from . import s16
from .base import Bands, Choice, LowerCtx, fail
from .common import activation_range, inp, out, require_int8
from .nary import nary_loops
from .rows import Reach, row_view

MAX_RANK = 6


def broadcast_loops(
    a: tuple[int, ...], b: tuple[int, ...], o: tuple[int, ...]
) -> tuple[list[int], list[int], list[int]] | None:
    """Merge a broadcast of ``a`` and ``b`` into ``o`` into few loops.

    Returns ``None`` when no broadcasting is needed (both inputs have as many elements as the
    output, so flat indexing is exact), else ``(dims, stride_a, stride_b)``, outermost first,
    with element strides (0 where that input is broadcast along the loop).
    """
    size = int(np.prod(o, dtype=np.int64)) if o else 1
    sa = int(np.prod(a, dtype=np.int64)) if a else 1
    sb = int(np.prod(b, dtype=np.int64)) if b else 1
    if sa == size and sb == size:
        return None
    dims, (stride_a, stride_b) = nary_loops([a, b], o)
    return dims, stride_a, stride_b


def check_binary(op: Op, g: Graph) -> tuple[int, int]:
    """Two int8 inputs broadcasting to the int8 output (or all three int16 with zero point 0:
    16x8, for the units that handle it); returns the clamp range."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or -1 in op.inputs:
        raise fail(op, f"expects 2 inputs and 1 output, has {len(op.inputs)}/{len(op.outputs)}")
    if s16.is_int16(op, g):
        s16.require_int16(op, g, [op.inputs[0], op.inputs[1], op.outputs[0]])
    else:
        require_int8(op, g, [op.inputs[0], op.inputs[1], op.outputs[0]])
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if max(len(a.shape), len(b.shape), len(o.shape)) > MAX_RANK:
        raise fail(op, f"rank above {MAX_RANK} is not supported")
    try:
        want = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise fail(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    if tuple(want) != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} is not the broadcast shape {list(want)}")
    return activation_range(op, o)


def shape_fields(op: Op, g: Graph, ctx: LowerCtx) -> dict[str, object]:
    """Size and broadcast loops of the params struct (rank 0: flat, no broadcasting)."""
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    loops = broadcast_loops(a.shape, b.shape, o.shape)
    if loops is None:
        return {"size": o.size, "rank": 0, "dims": "0", "stride1": "0", "stride2": "0"}
    dims, s1, s2 = loops
    return {
        "size": o.size,
        "rank": len(dims),
        "dims": ctx.array("dims", "int32_t", np.array(dims)),
        "stride1": ctx.array("stride1", "int32_t", np.array(s1)),
        "stride2": ctx.array("stride2", "int32_t", np.array(s2)),
    }


def binary_call(fn: str, op: Op, ctx: LowerCtx, params: str) -> str:
    """``fn(params, input1, input2, output);``"""
    return (
        f"{fn}({params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
        f"{ctx.ptr(op.outputs[0], const=False)});"
    )


class SameShapeRows:
    """Row streaming (``ops.rows``) of a binary elementwise int8 op over two NHWC tensors of its
    output's shape (batch 1): output row r reads row r of each input, and a row call is the op's
    own lowering over one row (``row_view``). Broadcasting ops cannot run by rows."""

    def row_reach(self, op: Op, g: Graph, d: object) -> tuple[Reach, ...] | None:
        shapes = {inp(op, g, 0).shape, inp(op, g, 1).shape, out(op, g).shape}
        o = out(op, g)
        if len(shapes) != 1 or len(o.shape) != 4 or o.shape[0] != 1 or s16.is_int16(op, g):
            return None  # broadcasting or not NHWC: rows do not line up
        return (Reach(), Reach())

    def lower_row(
        self, op: Op, g: Graph, d: object, ctx: LowerCtx, choice: Choice, bands: Bands
    ) -> str:
        view = row_view(g, [*op.inputs[:2], op.outputs[0]])
        return self.lower(op, view, d, ctx, choice)  # type: ignore[attr-defined]
