"""STREAM: a segment of layers run one output row at a time (``ops.rows``), made by the planner
(``planner.streams``) where the arena must shrink below what whole tensors allow.

The op's attributes hold the segment's layers (``layers``: the model's own ops) in an order
where producers come first, and the planner's layout of it (``segment``: the layers as they were
prepared, once, before planning; the row schedule and the windows); ``prepare`` only hands that
on. Its inputs are the activations the segment reads whole (earlier tensors), its outputs the
tensors later layers read (written whole, row by row). Every other tensor of the segment lives
in a window of a few rows in the op's workspace. The lowering emits, per layer and per band
shape (top, middle, bottom rows), the layer's own kernel call with its geometry cut to the band
(``Operator.lower_row``), and a compile-time step table: which call, at which byte offsets, in
which order, with the window moves between them. Nothing is recomputed: MACs are the layers'
own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .prepare import PreparedOp
from .rows import Move, RowCall, RowLayer, RowSchedule, Segment, variants


@dataclass(frozen=True, kw_only=True)
class Stream(Prepared):
    layers: tuple[PreparedOp, ...]
    rows: tuple[RowLayer, ...]
    sched: RowSchedule
    windows: tuple[tuple[int, int], ...]  # (tensor id, workspace offset) per windowed tensor
    row_bytes: tuple[tuple[int, int], ...]  # (tensor id, bytes per row) of every tensor


@register
class StreamOp(Operator):
    kinds = ("STREAM",)
    internal = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def prepare(self, op: Op, g: Graph) -> Stream:
        seg = op.attrs.get("segment")
        if not isinstance(seg, Segment):
            raise fail(op, "a STREAM op is made by the planner, with its segment's layout")
        return Stream(
            macs=seg.macs,
            scratch=seg.scratch,
            workspace=seg.workspace,
            layers=seg.layers,
            rows=seg.rows,
            sched=seg.sched,
            windows=seg.windows,
            row_bytes=seg.row_bytes,
        )

    def lower(self, op: Op, g: Graph, d: Stream, ctx: LowerCtx, choice: Choice) -> str:
        region = f"((uint8_t *){ctx.scratch(choice.scratch_bytes(d))})"
        win = dict(d.windows)
        rb = dict(d.row_bytes)
        sub_ctx = _RowCtx(ctx, f"({region} + {choice.scratch_offset(d)})")
        sub_choice = Choice(in_place=False, use_scratch=choice.use_scratch)
        calls = [c for c in d.sched.steps if isinstance(c, RowCall)]
        cases: list[str] = []
        case_of: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
        move_case: dict[int, int] = {}
        for t, off in d.windows:
            move_case[t] = len(cases)
            cases.append(f"tc_rows_down({region} + {off}, s[1], s[2]);")
        for i, (la, rl) in enumerate(zip(d.layers, d.rows, strict=True)):
            for v in variants(calls, i):
                names = {}
                for j, (t, _) in enumerate(rl.ins):
                    names.setdefault(t, _operand(g, t, f"s[{1 + j}]", win, region, const=True))
                names[rl.out] = _operand(g, rl.out, "s[3]", win, region, const=False)
                sub_ctx.names = names
                stmt = la.unit.lower_row(la.op, g, la.data, sub_ctx, sub_choice, v)
                case_of[(i, v)] = len(cases)
                cases.append(f"{stmt} /* op {la.op.index} {la.op.kind}, rows {v} */")
        if sub_ctx.scratch_bytes > (d.scratch if choice.use_scratch else 0):
            raise ValueError("a streamed layer wants more scratch than the segment prepared")
        table = []
        for s, st in enumerate(d.sched.steps):
            if isinstance(st, Move):
                r = rb[st.tensor]
                table.append((move_case[st.tensor], st.from_row * r, st.rows * r, 0))
                continue
            rl = d.rows[st.layer]
            ins, dst = d.sched.where[s]
            offs = [
                (slot if slot is not None else first) * rb[t]
                for (t, _), (first, _, _), slot in zip(rl.ins, st.bands, ins, strict=True)
            ]
            offs += [0] * (2 - len(offs))
            out_off = (dst if dst is not None else st.row) * rb[rl.out]
            key = (st.layer, tuple((n, pad) for _, n, pad in st.bands))
            table.append((case_of[key], offs[0], offs[1], out_off))
        arr = np.array(table, dtype=np.int64).reshape(-1)
        ctype = "uint16_t" if arr.max(initial=0) < 1 << 16 else "uint32_t"
        steps = ctx.array("steps", ctype, arr)
        body = "\n".join(f"        case {k}: {c} break;" for k, c in enumerate(cases))
        return (
            "{\n"
            f"    for (uint32_t i = 0; i < {len(table)}u; i++) {{\n"
            f"        const {ctype} *s = &{steps}[4u * i];\n"
            "        switch (s[0]) {\n"
            f"{body}\n"
            "        default: break;\n"
            "        }\n"
            "    }\n"
            "    }"
        )


def _operand(g: Graph, t: int, field: str, win: dict[int, int], region: str, const: bool) -> str:
    """The C pointer of a row call's operand: a window slot or a row of a whole tensor, at the
    byte offset the step table's ``field`` holds."""
    q = "const " if const else ""
    base = f"({region} + {win[t]})" if t in win else f"((uint8_t *)TC_T{t})"
    return f"(({q}{g.t(t).ctype} *)({base} + {field}))"


class _RowCtx:
    """The LowerCtx of a row call: activations are the step's operands (``names``), constant
    arrays are shared by the layer's band shapes (registered once per content), scratch is the
    stream's optional scratch."""

    def __init__(self, ctx: LowerCtx, scratch: str) -> None:
        self.ctx = ctx
        self.scratch_expr = scratch
        self.scratch_bytes = 0
        self.names: dict[int, str] = {}
        self._arrays: dict[tuple[str, bytes], str] = {}

    def ptr(self, tid: int, *, const: bool = True) -> str:
        if tid in self.names:
            return self.names[tid]
        return self.ctx.ptr(tid, const=const)

    def array(self, base: str, ctype: str, values: np.ndarray) -> str:
        v = np.ascontiguousarray(values)
        key = (ctype, v.tobytes() + str(v.dtype).encode())
        if key not in self._arrays:
            self._arrays[key] = self.ctx.array(base, ctype, values)
        return self._arrays[key]

    def params(self, ctype: str, fields: dict[str, object]) -> str:
        return self.ctx.params(ctype, fields)

    def scratch(self, nbytes: int) -> str:
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return self.scratch_expr

    def refuses(self, reason: str) -> None:
        raise ValueError(f"a layer that may refuse its input cannot be streamed ({reason})")
