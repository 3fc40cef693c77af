"""Numpy-style broadcasting of any number of inputs into one output (TFLM's
``BroadcastBinaryOpSimple`` and SELECT_V2's broadcast walk), merged at compile time into at most
``MAX_RANK`` loops with each input's element strides: the loops of the comparison, logical and
select units (their kernels walk them with ``tc_walk``, firmware/kernels/tc_walk.h) and of the
binary elementwise units (``broadcast.broadcast_loops``)."""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, Tensor
from .base import LowerCtx, fail
from .common import inp, out

MAX_RANK = 6


def nary_loops(
    shapes: list[tuple[int, ...]], o: tuple[int, ...]
) -> tuple[list[int], list[list[int]]]:
    """``(dims, strides)``: the output's loops, outermost first (at least one), and per input
    its element stride per loop (0 where that input is broadcast along it)."""
    n = len(o)
    ext = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    merged: list[list] = []  # [extent, per-input broadcast flags]
    for d in range(n):
        if o[d] == 1:
            continue
        flags = tuple(e[d] == 1 for e in ext)
        if merged and merged[-1][1] == flags:
            merged[-1][0] *= o[d]
        else:
            merged.append([o[d], flags])
    if not merged:
        merged = [[1, tuple(False for _ in shapes)]]
    dims = [int(m[0]) for m in merged]
    strides = [[0] * len(dims) for _ in shapes]
    for k in range(len(shapes)):
        acc = 1
        for i in range(len(dims) - 1, -1, -1):
            if not merged[i][1][k]:
                strides[k][i] = acc
                acc *= dims[i]
    return dims, strides


def check_broadcast(op: Op, g: Graph, n_in: int) -> None:
    """``n_in`` inputs (none absent), one output of their broadcast shape, rank at most 6."""
    if len(op.inputs) != n_in or len(op.outputs) != 1 or -1 in op.inputs:
        raise fail(op, f"expects {n_in} inputs and 1 output, has {len(op.inputs)}/1")
    ts = [inp(op, g, i) for i in range(n_in)]
    o = out(op, g)
    if max(len(t.shape) for t in [*ts, o]) > MAX_RANK:
        raise fail(op, f"rank above {MAX_RANK} is not supported")
    try:
        want = np.broadcast_shapes(*[t.shape for t in ts])
    except ValueError:
        shapes = " and ".join(str(list(t.shape)) for t in ts)
        raise fail(op, f"shapes {shapes} do not broadcast") from None
    if tuple(want) != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} is not the broadcast shape {list(want)}")


def loop_fields(ctx: LowerCtx, ins: list[Tensor], o: Tensor) -> dict[str, object]:
    """``size``, ``rank``, ``dims`` and ``stride1``..``strideN`` of a params struct."""
    dims, strides = nary_loops([t.shape for t in ins], o.shape)
    fields: dict[str, object] = {
        "size": o.size,
        "rank": len(dims),
        "dims": ctx.array("dims", "int32_t", np.array(dims)),
    }
    for k, s in enumerate(strides):
        fields[f"stride{k + 1}"] = ctx.array(f"stride{k + 1}", "int32_t", np.array(s))
    return fields


def require_dtype(op: Op, t: Tensor, allowed: tuple[str, ...], what: str) -> None:
    """``t`` (a per-tensor quantized one when int8/int16) is of one of the ``allowed`` types."""
    if t.dtype not in allowed:
        raise fail(op, f"{t.dtype} {what} tensor {t.id} is not supported ({'/'.join(allowed)})")
    if t.dtype in ("int8", "int16"):
        if t.quant is None:
            raise fail(op, f"{what} tensor {t.id} has no quantization parameters")
        if t.quant.per_channel:
            raise fail(op, f"{what} tensor {t.id} is quantized per channel")
