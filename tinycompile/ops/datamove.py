"""Shared machinery of the data-movement operators (TRANSPOSE, STRIDED_SLICE, SLICE, SPLIT,
SPLIT_V, UNPACK, GATHER, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE, SPACE_TO_DEPTH): each
operator describes every output as a *view* of one input -- an input byte offset and loops in
output order, each moving the input position by a stride or through a table of offsets -- and
this module simplifies the loops at compile time (drops unit loops, merges contiguous ones,
turns the innermost contiguous loop into a run of elements) and lowers them to ``tc_copy_s8``
(firmware/kernels/tc_copy.c), one call per output.

Views count elements; the lowering multiplies offsets, strides, tables and runs by the element
size (1 for int8, 2 for int16: 16x8 models), so one byte copy serves every element type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail

MAX_LOOPS = 6  # TC_COPY_MAX_DIMS


@dataclass(frozen=True)
class Loop:
    """One loop of a view: ``count`` steps, each moving the input by ``stride`` elements, or to
    ``table[i]`` elements (relative to the view's offset) when a table is given."""

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
    out_offset: int = 0  # output elements before the first one written

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


ELEM_SIZE = {"int8": 1, "int16": 2}


def check_io(
    op: Op, g: Graph, inputs: list[int], outputs: list[int], dtypes: tuple[str, ...] = ("int8",)
) -> int:
    """The data inputs and outputs share one of ``dtypes`` (the elements are copied, as TFLM
    does, whatever their quantization); returns the element size in bytes."""
    tids = [*(op.inputs[i] for i in inputs), *(op.outputs[i] for i in outputs)]
    if min(tids) < 0:
        raise fail(op, "a data tensor is absent")
    kinds = {g.t(tid).dtype for tid in tids}
    for tid in tids:
        t = g.t(tid)
        if t.dtype not in dtypes:
            raise fail(op, f"{t.dtype} tensor {tid} is not supported ({' or '.join(dtypes)} only)")
    if len(kinds) > 1:
        raise fail(op, f"data tensors of mixed types {sorted(kinds)} (TFLM needs one type)")
    return ELEM_SIZE[kinds.pop()]


def check_int8_io(op: Op, g: Graph, inputs: list[int], outputs: list[int]) -> None:
    """The data inputs and outputs are int8 (operators TFLM runs on int8 only)."""
    check_io(op, g, inputs, outputs)


INT8_16 = ("int8", "int16")  # what TFLM's int16-capable data-movement kernels take


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


def byte_ptr(ptr: str, *, const: bool = True) -> str:
    """``ptr`` (a typed tensor pointer expression) as the int8 pointer a byte kernel takes."""
    return f"({'const ' if const else ''}int8_t *){ptr}"


def _arr(ctx: LowerCtx, name: str, values: list[int]) -> str:
    """A const int32 array, or a null pointer when there are no values."""
    return ctx.array(name, "int32_t", np.array(values)) if values else "0"


def lower_copies(op: Op, ctx: LowerCtx, d: Copies, elem: int = 1) -> str:
    """One ``tc_copy_s8`` call per prepared copy (outputs of no bytes get none), moving
    ``elem``-byte elements."""
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
                tables.extend(t * elem for t in lp.table)
        fields: dict[str, object] = {  # every field, in tc_copy_params_t's order
            "rank": len(c.loops),
            "count": _arr(ctx, "count", [lp.count for lp in c.loops]),
            "in_stride": _arr(ctx, "in_stride", [lp.stride * elem for lp in c.loops]),
            "table_at": _arr(ctx, "table_at", table_at if tables else []),
            "table": _arr(ctx, "table", tables),
            "in_offset": c.offset * elem,
            "run": c.run * elem,
        }
        p = ctx.params("tc_copy_params_t", fields)
        src = ctx.ptr(op.inputs[c.input])
        dst = ctx.ptr(op.outputs[c.output], const=False)
        if c.out_offset:  # elements of the typed pointer, before it becomes a byte pointer
            dst = f"({dst} + {c.out_offset})"
        if elem != 1:
            src, dst = byte_ptr(src), byte_ptr(dst, const=False)
        stmts.append(f"tc_copy_s8({p}, {src}, {dst});")
    return " ".join(stmts) or f"/* {op.kind.lower()}: no bytes to move */"


class CopyOperator(Operator):
    """Base of the data-movement units: ``prepare`` returns ``Copies``; the lowering is theirs."""

    def lower(self, op: Op, g: Graph, d: Copies, ctx: LowerCtx, choice: Choice) -> str:
        return lower_copies(op, ctx, d, ELEM_SIZE[g.t(op.outputs[0]).dtype])


def concat_call(op: Op, ctx: LowerCtx, outer: int, chunks: list[int], elem: int) -> str:
    """``tc_concat_s8`` (CONCATENATION, PACK): per outer step, ``chunks[i]`` elements of each
    input in turn."""
    p = ctx.params(
        "tc_concat_params_t",
        {
            "n_inputs": len(op.inputs),
            "outer": outer,
            "chunk": ctx.array("chunk", "int32_t", np.array(chunks) * elem),
        },
    )
    ins = ", ".join(byte_ptr(ctx.ptr(t)) if elem != 1 else ctx.ptr(t) for t in op.inputs)
    dst = ctx.ptr(op.outputs[0], const=False)
    dst = byte_ptr(dst, const=False) if elem != 1 else dst
    return f"tc_concat_s8({p}, (const int8_t *const[]){{{ins}}}, {dst});"
