"""The streaming pass: where whole tensors do not fit, run the first layers of the schedule one
output row at a time (a STREAM op, ``ops.stream``), their intermediate tensors held in
windows of a few rows (MCUNetV2's patch-based inference for the memory-heavy first stage,
without its recomputation: rows are computed once, in demand order).

Candidates are the prefixes of the plain plan's execution order made of layers that can run
by rows (``Operator.row_reach``: convolutions, depthwise convolutions, same-shape ADDs, batch
1): the first ``k`` ops become one STREAM op whose outputs are the tensors read after it, and
the rest of the graph is planned as usual around it. Each candidate is planned in full and
judged by its placed arena.

- ``stream="min"``: the smallest arena (ties: the shortest segment: fewer row calls).
- ``stream="auto"`` with a budget (SRAM for arena and state): nothing when the plain plan
  fits; else the shortest segment that fits, or the smallest arena when none does.
- ``stream=k``: the first ``k`` ops, as asked.

The cost is time, not arithmetic: each layer's kernel runs once per output row on a band of
rows (the per-call setup and the window moves, ``tc_rows_down``, come on top); MACs are the
same, and the outputs are bit for bit the whole layers' (the same kernels, the same padding).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CompileError
from ..ir import Graph, Op
from ..ops import DEFAULT_CHOICE, Choice, prepare_graph

if TYPE_CHECKING:
    from .plan import Plan

MIN_LAYERS = 2  # a one-layer segment keeps no tensor in a window: nothing to gain


def streamable_prefix(g: Graph, order: list[Op]) -> int:
    """How many ops at the start of ``order`` can run by rows."""
    prepared = {p.op.index: p for p in prepare_graph(copy.deepcopy(g))}
    n = 0
    for op in order:
        p = prepared.get(op.index)
        if p is None or p.unit.row_reach(p.op, g, p.data) is None:
            break
        n += 1
    return n


def stream_graph(g: Graph, order: list[Op], k: int) -> Graph:
    """A copy of ``g`` whose first ``k`` ops of ``order`` form one STREAM op (first, with the
    index of its first layer; every other op keeps the model's order)."""
    if k < MIN_LAYERS:
        raise CompileError(f"a streamed segment needs at least {MIN_LAYERS} layers, not {k}")
    g2 = copy.deepcopy(g)
    by_index = {op.index: op for op in g2.ops}
    seg = [by_index[op.index] for op in order[:k]]
    inside = {op.index for op in seg}
    produced = {t for op in seg for t in op.outputs}
    rest = [op for op in g2.ops if op.index not in inside]
    read_after = {t for op in rest for t in op.inputs} | set(g2.outputs)
    outputs = sorted(t for t in produced if t in read_after)
    inputs = sorted(
        {
            t
            for op in seg
            for t in op.inputs
            if t >= 0 and t not in produced and not g2.t(t).is_const and not g2.t(t).variable
        }
    )
    # the segment is a prefix of a schedule: it reads only graph inputs, so it may go first
    g2.ops = [Op(seg[0].index, "STREAM", inputs, outputs, attrs={"layers": seg}), *rest]
    return g2


def choose_stream(
    g: Graph,
    base: Plan,
    stream: str | int,
    budget: int | None,
    plan: Callable[[Graph, dict[int, Choice] | None], Plan],
) -> Plan:
    """The plan with the streamed segment ``stream`` asks for (see the module docstring);
    ``base`` is the plain plan of ``g``, ``plan`` plans a rewritten graph (with more forced
    choices)."""
    order = [base.lowering.ops[i].op for i in base.order]
    n = streamable_prefix(g, order)
    if isinstance(stream, int):
        if not MIN_LAYERS <= stream <= n:
            raise CompileError(
                f"cannot stream the first {stream} layers: the first {n} can run by rows"
                f" (a segment needs {MIN_LAYERS} or more)",
                source=g.source or None,
            )
        return _mark(plan(stream_graph(g, order, stream), None), base)
    if stream not in ("auto", "min"):
        raise CompileError(f"unknown streaming mode {stream!r} (off, auto, min or a number)")
    best = base
    for k in range(MIN_LAYERS, n + 1):
        g2 = stream_graph(g, order, k)
        p = plan(g2, None)
        if stream == "auto" and budget is not None and p.sram_bytes <= budget:
            return _mark(_fast(p, g2, budget, plan), base)
        if p.arena_bytes < best.arena_bytes:
            best = p
    return best if best is base else _mark(best, base)


def _fast(
    p: Plan, g2: Graph, budget: int, plan: Callable[[Graph, dict[int, Choice] | None], Plan]
) -> Plan:
    """``p`` with its segment's optional scratch (the layers' column buffers: on Cortex-M4/M7
    the row calls otherwise lose their column GEMM) when that still fits ``budget``."""
    stream = next(op for op in g2.ops if op.kind == "STREAM")
    if p.choices.get(stream.index, DEFAULT_CHOICE).use_scratch:
        return p
    fast = plan(g2, {stream.index: Choice(use_scratch=True)})
    return fast if fast.sram_bytes <= budget else p


def _mark(p: Plan, base: Plan) -> Plan:
    p.unstreamed_arena = base.arena_bytes
    p.unstreamed = base.graph
    return p


def describe(p: Plan) -> list[str]:
    """What streaming does in plan ``p`` and what it costs, for `plan`'s text (empty when
    nothing is streamed)."""
    from ..ops.rows import Move
    from ..ops.stream import StreamOp

    out = []
    for op in p.graph.ops:
        if op.kind != "STREAM":
            continue
        d = StreamOp().prepare(op, p.graph)
        rb = dict(d.row_bytes)
        layers = [la.op for la in d.layers]
        names = " ".join(f"#{la.index}" for la in layers)
        whole = sum(p.graph.t(t).nbytes for t, _ in d.windows)
        rows = "/".join(str(d.sched.slots[t]) for t, _ in d.windows)
        moves = [s for s in d.sched.steps if isinstance(s, Move)]
        moved = sum(m.rows * rb[m.tensor] for m in moves)
        calls = len(d.sched.steps) - len(moves)
        out += [
            f"streamed: ops {names} run one output row at a time",
            f"  {len(d.windows)} intermediate tensors ({whole:,} B whole) live in windows of"
            f" {rows} rows: {d.workspace:,} B",
            f"  cost: time only (MACs unchanged, nothing recomputed): {calls} row calls instead"
            f" of {len(layers)},",
            f"  {moved:,} B of window moves",
        ]
    if out and p.unstreamed_arena is not None:
        out.append(f"  arena without streaming: {p.unstreamed_arena:,} B")
    return out


def streamed_ops(g: Graph) -> list[int]:
    """Indices of the model's ops that ``g`` runs by rows (none when nothing is streamed)."""
    return [la.index for op in g.ops if op.kind == "STREAM" for la in op.attrs["layers"]]
