"""EMBEDDING_LOOKUP and DYNAMIC_UPDATE_SLICE (int8), byte moves whose indices may be read at
run time; kernels in firmware/kernels/tc_index_move.c. Nothing is requantized.

EMBEDDING_LOOKUP, as TFLM's embedding_lookup.cc (EvalSimple): int32 ids (a vector), an int8
table of rank 2 or more, output row i = table row ids[i]. An id outside the table fails TFLM's
Invoke; so does the layer (``tc_invoke()`` stops and returns 1 + the layer) unless the ids are
constant, when they are checked here. The hybrid form (int8 table, float32 output) is refused.

DYNAMIC_UPDATE_SLICE (int8, int16), as TFLM's dynamic_update_slice.cc: the operand with the
update written at the start indices, each clamped into the operand; runs in place over the
operand. Constant int32/int64 indices are stored as int32 (clamped, as TFLM clamps them);
run-time ones must be int32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out

REFUSAL = "an id outside the table"  # TFLM: "EMBEDDING_LOOKUP: index out of bounds"
MAX_RANK = 6  # TC_UPDATE_SLICE_MAX_DIMS (TFLM: RuntimeShape's 6)


@dataclass(frozen=True, kw_only=True)
class Lookup(Prepared):
    fields: tuple[tuple[str, int], ...]
    checked: bool  # ids read at run time: the layer may refuse


@register
class EmbeddingLookupOp(Operator):
    kinds = ("EMBEDDING_LOOKUP",)

    def prepare(self, op: Op, g: Graph) -> Lookup:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects ids, a table and 1 output")
        ids, table, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if ids.dtype != "int32" or len(ids.shape) != 1:
            raise fail(op, f"ids must be an int32 vector (are {ids.dtype} {list(ids.shape)})")
        if o.dtype == "float32":
            raise fail(op, "float32 output (the hybrid lookup) is not supported")
        dm.check_int8_io(op, g, [1], [0])
        if len(table.shape) < 2:
            raise fail(op, "the table must have rank 2 or more (TFLM)")
        dm.check_shape(op, g, 0, [ids.shape[0], *table.shape[1:]])
        rows = int(table.shape[0])
        if ids.is_const:
            v = dm.const_ints(op, g, 0, "ids")
            if v.size and (v.min() < 0 or v.max() >= rows):
                raise fail(op, f"an id is outside the table of {rows} rows (TFLM fails)")
        fields = {"n_ids": ids.shape[0], "rows": rows, "row_bytes": table.size // max(rows, 1)}
        return Lookup(fields=tuple(fields.items()), checked=not ids.is_const)

    def lower(self, op: Op, g: Graph, d: Lookup, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_embedding_lookup_params_t", dict(d.fields))
        args = ", ".join(
            [p, ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1]), ctx.ptr(op.outputs[0], const=False)]
        )
        if d.checked:
            ctx.refuses(REFUSAL)
            return f"tc_embedding_lookup_s8({args})"
        return f"(void)tc_embedding_lookup_s8({args});"


@dataclass(frozen=True, kw_only=True)
class UpdateSlice(Prepared):
    dims: tuple[int, ...]
    update_dims: tuple[int, ...]
    start: tuple[int, ...] | None  # constant start indices (clamped), else read at run time


@register
class DynamicUpdateSliceOp(Operator):
    kinds = ("DYNAMIC_UPDATE_SLICE",)
    elementwise = True
    int16 = True  # TFLM updates int16 too: 2-byte elements

    def prepare(self, op: Op, g: Graph) -> UpdateSlice:
        if len(op.inputs) != 3 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects an operand, an update, start indices and 1 output")
        x, u, s = inp(op, g, 0), inp(op, g, 1), inp(op, g, 2)
        if not x.dtype == u.dtype == out(op, g).dtype or x.dtype not in ("int8", "int16"):
            raise fail(op, "operand, update and output must all be int8 or all int16")
        rank = len(x.shape)
        if not 1 <= rank <= MAX_RANK or len(u.shape) != rank:
            raise fail(op, f"operand rank {rank} / update rank {len(u.shape)} (1 to {MAX_RANK})")
        if any(b > a for a, b in zip(x.shape, u.shape, strict=True)):
            raise fail(op, f"update {list(u.shape)} larger than the operand {list(x.shape)}")
        if s.dtype not in ("int32", "int64") or tuple(s.shape) != (rank,):
            raise fail(op, f"start indices must be {rank} int32/int64 values")
        dm.check_shape(op, g, 0, x.shape)
        start = None
        if s.is_const:
            v = dm.const_ints(op, g, 2, "start indices")
            start = tuple(int(min(max(0, v[d]), x.shape[d] - u.shape[d])) for d in range(rank))
        elif s.dtype != "int32":
            raise fail(op, "int64 start indices computed at run time are not supported")
        return UpdateSlice(dims=x.shape, update_dims=u.shape, start=start)

    def lower(self, op: Op, g: Graph, d: UpdateSlice, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params(
            "tc_update_slice_params_t",
            {
                "rank": len(d.dims),
                "dims": ctx.array("dims", "int32_t", np.array(d.dims)),
                "update_dims": ctx.array("update_dims", "int32_t", np.array(d.update_dims)),
                "elem_bytes": g.t(op.inputs[0]).nbytes // max(g.t(op.inputs[0]).size, 1),
            },
        )
        if d.start is not None:
            start = ctx.array("start", "int32_t", np.array(d.start))
        else:
            start = ctx.ptr(op.inputs[2])
        operand, update = (f"(const int8_t *){ctx.ptr(t)}" for t in op.inputs[:2])
        dst = f"(int8_t *){ctx.ptr(op.outputs[0], const=False)}"
        return f"tc_update_slice_s8({p}, {operand}, {update}, {start}, {dst});"
