"""Shared machinery of the data-movement operators (TRANSPOSE, STRIDED_SLICE, SLICE, SPLIT,
SPLIT_V, UNPACK, GATHER, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE, SPACE_TO_DEPTH): each
operator describes every output as a *view* of one input -- an input byte offset and loops in
output order, each moving the input position by a stride or through a table of offsets -- and
this module simplifies the loops at compile time (drops unit loops, merges contiguous ones,
turns the innermost contiguous loop into a run of bytes) and lowers them to ``tc_copy_s8``
(firmware/kernels/tc_copy.c), one call per output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail

MAX_LOOPS = 6  # TC_COPY_MAX_DIMS


@dataclass(frozen=True)
class Loop:
    """One loop of a view: ``count`` steps, each moving the input by ``stride`` bytes, or to
    ``table[i]`` bytes (relative to the view's offset) when a table is given."""

    count: int
    stride: int = 0
    table: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Copy:
    """One ``tc_copy_s8`` call: output ``output`` (index into op.outputs) as a view of input
    ``input`` (index into op.inputs)."""

    input: int
    output: int
    offset: int
    loops: tuple[Loop, ...]
    run: int
    out_offset: int = 0  # output bytes before the first one written

    @property
    def nbytes(self) -> int:
        n = self.run
        for lp in self.loops:
            n *= lp.count
        return n


@dataclass(frozen=True, kw_only=True)
class Copies(Prepared):
    """What a data-movement operator prepares: one copy per output."""

    copies: tuple[Copy, ...]


def strides(shape: tuple[int, ...] | list[int]) -> list[int]:
    """Row-major element strides of ``shape``."""
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * int(shape[d + 1])
    return out


def simplify(
    op: Op, offset: int, loops: list[Loop], *, input: int = 0, output: int = 0, out_offset: int = 0
) -> Copy:
    """The fewest loops moving the same bytes in the same order (see the module docstring)."""
    kept: list[Loop] = []
    for lp in loops:
        if lp.count == 0:
            return Copy(input, output, 0, (Loop(0, 1),), 1, out_offset)
        if lp.count == 1:
            offset += lp.table[0] if lp.table is not None else 0
            continue
        prev = kept[-1] if kept else None
        if (
            prev is not None
            and prev.table is None
            and lp.table is None
            and prev.stride == lp.count * lp.stride
        ):
            kept[-1] = Loop(prev.count * lp.count, lp.stride)
        else:
            kept.append(lp)
    run = 1
    if kept and kept[-1].table is None and kept[-1].stride == 1:
        run = kept.pop().count
    if len(kept) > MAX_LOOPS:
        raise fail(op, f"needs {len(kept)} copy loops after merging, at most {MAX_LOOPS}")
    return Copy(input, output, offset, tuple(kept), run, out_offset)


def check_int8_io(op: Op, g: Graph, inputs: list[int], outputs: list[int]) -> None:
    """The data inputs and outputs are int8 (the bytes are copied, as TFLM does, whatever
    their quantization)."""
    for tid in [*(op.inputs[i] for i in inputs), *(op.outputs[i] for i in outputs)]:
        if tid < 0:
            raise fail(op, "a data tensor is absent")
        t = g.t(tid)
        if t.dtype != "int8":
            raise fail(op, f"{t.dtype} tensor {tid} is not supported (int8 only)")


def const_ints(op: Op, g: Graph, i: int, what: str) -> np.ndarray:
    """The values of constant int32 input ``i`` (flattened), or a refusal naming ``what``."""
    if len(op.inputs) <= i or op.inputs[i] < 0:
        raise fail(op, f"missing {what} tensor")
    t = g.t(op.inputs[i])
    if not t.is_const:
        raise fail(op, f"the {what} tensor must be constant")
    if t.dtype not in ("int32", "int64"):
        raise fail(op, f"{t.dtype} {what} tensor is not supported (int32)")
    return np.asarray(t.data).reshape(-1).astype(np.int64)


def check_shape(op: Op, g: Graph, k: int, want: list[int] | tuple[int, ...]) -> None:
    """Output ``k`` has shape ``want``."""
    got = tuple(g.t(op.outputs[k]).shape)
    if got != tuple(int(w) for w in want):
        raise fail(op, f"output shape {list(got)} differs from the expected {list(want)}")


def lower_copies(op: Op, ctx: LowerCtx, d: Copies) -> str:
    """One ``tc_copy_s8`` call per prepared copy (outputs of no bytes get none)."""
    stmts = []
    for c in d.copies:
        if c.nbytes == 0:
            continue
        tables: list[int] = []
        table_at = []
        for lp in c.loops:
            if lp.table is None:
                table_at.append(-1)
            else:
                table_at.append(len(tables))
                tables.extend(lp.table)
        fields: dict[str, object] = {"rank": len(c.loops), "count": "0", "in_stride": "0"}
        fields.update(table_at="0", table="0", in_offset=c.offset, run=c.run)  # 0: no loops/tables
        if c.loops:
            fields["count"] = ctx.array("count", "int32_t", np.array([lp.count for lp in c.loops]))
            fields["in_stride"] = ctx.array(
                "in_stride", "int32_t", np.array([lp.stride for lp in c.loops])
            )
        if tables:
            fields["table_at"] = ctx.array("table_at", "int32_t", np.array(table_at))
            fields["table"] = ctx.array("table", "int32_t", np.array(tables))
        p = ctx.params("tc_copy_params_t", fields)
        src = f"(const int8_t *){ctx.ptr(op.inputs[c.input])}"  # bytes, whatever the type
        dst = f"(int8_t *){ctx.ptr(op.outputs[c.output], const=False)}"
        if c.out_offset:
            dst = f"({dst} + {c.out_offset})"
        stmts.append(f"tc_copy_s8({p}, {src}, {dst});")
    return " ".join(stmts) or f"/* {op.kind.lower()}: no bytes to move */"


class CopyOperator(Operator):
    """Base of the data-movement units: ``prepare`` returns ``Copies``; the lowering is theirs."""

    def lower(self, op: Op, g: Graph, d: Copies, ctx: LowerCtx, choice: Choice) -> str:
        return lower_copies(op, ctx, d)
