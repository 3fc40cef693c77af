"""The streaming pass: where whole tensors do not fit, run the first layers of the schedule one
output row at a time (a STREAM op, ``ops.stream``), their intermediate tensors held in
windows of a few rows (MCUNetV2's patch-based inference for the memory-heavy first stage,
without its recomputation: rows are computed once, in demand order).

Candidates are runs of consecutive ops of the plain plan's execution order made of layers that
can run by rows (``Operator.row_reach``: convolutions, depthwise convolutions, pooling,
same-shape ADDs and MULs, CONCATENATION along W or C; batch 1), starting where such a run
starts (the first op, or one after an op that cannot run by rows: a TRANSPOSE at an NCHW input,
a QUANTIZE of a float input): ``k`` ops from there become one STREAM op whose inputs are the
whole tensors it reads and whose outputs are the tensors read after it, and the rest of the
graph is planned as usual around it. Each candidate is planned in full and judged by its placed
arena.

- ``stream="min"``: the smallest arena (ties: the shortest segment: fewer row calls); then,
  in the graph so rewritten, one more segment the same way while the arena keeps shrinking
  (up to ``MAX_SEGMENTS``: a detector's head can peak again after its streamed stem).
- ``stream="auto"`` with a budget (SRAM for arena and state): nothing when the plain plan
  fits; else the shortest segment that fits, or the smallest arena when none does, and
  (should that not fit) further segments the same way.
- ``stream=k``: the first ``k`` ops of the first run, as asked.

The cost is time, not arithmetic: each layer's kernel runs once per output row on a band of
rows (the per-call setup and the window moves, ``tc_rows_down``, come on top); MACs are the
same, and the outputs are bit for bit the whole layers' (the same kernels, the same padding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import CompileError
from ..ir import Graph, Op
from ..ops import DEFAULT_CHOICE, Choice, Prepared, PreparedOp, fail, unit_of
from ..ops.rows import Move, RowLayer, Segment, check, schedule

if TYPE_CHECKING:
    from .plan import Placement

MIN_LAYERS = 2  # a one-layer segment keeps no tensor in a window: nothing to gain
MAX_SEGMENTS = 4  # "auto" / "min": segments added one at a time while the arena shrinks
# Past SCREEN_ABOVE candidates (a long run of streamable layers: MobileNetV2 has ~60), each is
# first placed quickly (model order, no in-place or scratch search: ~100x cheaper, its arena
# an upper bound in practice) and only a few are placed in full (``_screen``).
SCREEN_ABOVE, SCREEN_KEEP, SCREEN_SLACK = 12, 4, 1.25
ALIGN = 8  # each window starts on an 8-byte boundary
# places a rewritten graph: (graph, prepared, forced choices[, full search]) -> Placement
Again = Callable[..., "Placement"]


def streamable_runs(g: Graph, prepared: list[PreparedOp], order: list[Op]) -> list[tuple[int, int]]:
    """(start, length) of each maximal run of ops of ``order`` that can run by rows, at least
    ``MIN_LAYERS`` long."""
    by_index = {p.op.index: p for p in prepared}
    runs: list[tuple[int, int]] = []
    start = None
    for i, op in enumerate([*order, None]):
        p = by_index.get(op.index) if op is not None else None
        ok = p is not None and p.unit.row_reach(p.op, g, p.data) is not None
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            if i - start >= MIN_LAYERS:
                runs.append((start, i - start))
            start = None
    return runs


def segment(g: Graph, stream: Op, layers: list[PreparedOp]) -> Segment:
    """The layout of a streamed segment: each layer's row reach, the row schedule, and the
    windows of the tensors produced and read only inside (a CompileError naming the layer or
    tensor that cannot be streamed)."""
    rows = []
    for p in layers:
        reach = p.unit.row_reach(p.op, g, p.data)
        acts = [t for t in p.op.inputs if t >= 0 and not g.t(t).is_const]
        if reach is None or len(reach) != len(acts) or len(acts) > 2 or len(p.op.outputs) != 1:
            # (a step of the table holds two input offsets and one output offset)
            raise fail(p.op, "cannot run one output row at a time in a streamed segment")
        rows.append(RowLayer(p.op.outputs[0], tuple(zip(acts, reach, strict=True))))
    windowed = {t for p in layers for t in p.op.outputs} - set(stream.outputs)
    every = windowed | set(stream.inputs) | set(stream.outputs)
    for t in every:
        shape = g.t(t).shape
        if len(shape) != 4 or shape[0] != 1 or g.t(t).dtype != "int8":
            raise fail(stream, f"tensor {t} is not an int8 NHWC tensor of batch 1")
    hs = {t: g.t(t).shape[1] for t in every}
    sched = schedule(rows, hs, windowed)
    check(rows, sched, windowed, hs)
    row_bytes = {t: g.t(t).nbytes // hs[t] for t in every}
    windows, size = [], 0
    for t in sorted(windowed):
        windows.append((t, size))
        size += (sched.slots[t] * row_bytes[t] + ALIGN - 1) // ALIGN * ALIGN
    return Segment(
        layers=tuple(layers),
        rows=tuple(rows),
        sched=sched,
        windows=tuple(windows),
        row_bytes=tuple(sorted(row_bytes.items())),
        workspace=size,
        macs=sum(p.data.macs for p in layers),
        scratch=max((p.data.scratch for p in layers), default=0),
    )


def stream_graph(
    g: Graph, prepared: list[PreparedOp], order: list[Op], k: int, start: int = 0
) -> tuple[Graph, list[PreparedOp]]:
    """``g`` with the ``k`` ops of ``order`` from ``start`` made one STREAM op (with the index
    of its first layer, placed in the model's order where its first layer was, later if an
    op it reads from comes later: ``_topological``), and its prepared ops: the others' as they
    were, the STREAM op's a stand-in holding the memory its segment needs (``Placement.
    to_prepare``)."""
    if k < MIN_LAYERS:
        raise CompileError(f"a streamed segment needs at least {MIN_LAYERS} layers, not {k}")
    by_index = {p.op.index: p for p in prepared}
    seg = [by_index[op.index] for op in order[start : start + k]]
    inside = {p.op.index for p in seg}
    produced = {t for p in seg for t in p.op.outputs}
    rest = [op for op in g.ops if op.index not in inside]
    read_after = {t for op in rest for t in op.inputs} | set(g.outputs)
    outputs = sorted(t for t in produced if t in read_after)
    inputs = sorted(
        {
            t
            for p in seg
            for t in p.op.inputs
            if t >= 0 and t not in produced and not g.t(t).is_const and not g.t(t).variable
        }
    )
    op = Op(seg[0].op.index, "STREAM", inputs, outputs, attrs={"layers": [p.op for p in seg]})
    layout = segment(g, op, seg)
    op.attrs["segment"] = layout
    stand_in = Prepared(macs=layout.macs, scratch=layout.scratch, workspace=layout.workspace)
    ops = _topological([*rest, op])
    g2 = replace(g, ops=ops)
    made = PreparedOp(op, unit_of(op), stand_in)
    return g2, [
        made if o is op else by_index[o.index] for o in ops if o is op or o.index in by_index
    ]


def _topological(ops: list[Op]) -> list[Op]:
    """``ops`` in a valid order, each as early in the model's order (by index) as the ops
    writing its inputs allow (a STREAM op holds the index of its first layer)."""
    writer = {t: op for op in ops for t in op.outputs}
    done: set[int] = set()
    out: list[Op] = []
    pending = sorted(ops, key=lambda o: o.index)
    while pending:
        for i, op in enumerate(pending):
            deps = {id(writer[t]) for t in op.inputs if t in writer and writer[t] is not op}
            if deps <= done:
                out.append(op)
                done.add(id(op))
                del pending[i]
                break
        else:
            raise CompileError("a streamed segment would make the graph cyclic")
    return out


def choose_stream(
    g: Graph,
    prepared: list[PreparedOp],
    base: Placement,
    stream: str | int,
    budget: int | None,
    plan: Again,
) -> Placement:
    """The placement with the streamed segment ``stream`` asks for (see the module docstring);
    ``base`` is the plain placement of ``g``, ``plan`` places a rewritten graph (with more
    forced choices)."""
    order = [base.prepared[i].op for i in base.order]
    runs = streamable_runs(g, prepared, order)
    if isinstance(stream, int):
        start, n = runs[0] if runs else (0, 0)
        if not MIN_LAYERS <= stream <= n:
            what = "the first " if not start else ""
            where = f"the first {n}" if not start else f"{n} from step {start}"
            raise CompileError(
                f"cannot stream {what}{stream} layers: {where} can run by rows"
                f" (a segment needs {MIN_LAYERS} or more)",
                source=g.source or None,
            )
        return _mark(plan(*stream_graph(g, prepared, order, stream, start), None), base)
    if stream not in ("auto", "min"):
        raise CompileError(f"unknown streaming mode {stream!r} (off, auto, min or a number)")
    now = base
    for _ in range(MAX_SEGMENTS):
        more, fits = _one_more(now, stream, budget, plan)
        if fits:
            return _mark(_fast(more, budget, plan), base)
        if more.arena_bytes >= now.arena_bytes:
            break
        now = more
    return base if now is base else _mark(now, base)


def _one_more(
    now: Placement, stream: str, budget: int | None, plan: Again
) -> tuple[Placement, bool]:
    """One more segment in ``now`` (a placement, streamed or not): for "auto" the shortest that
    fits ``budget`` (then True), else the smallest arena (``now`` itself when nothing beats it).
    Ops already streamed are no candidates: a STREAM op cannot run by rows."""
    g, prepared = now.graph, now.prepared
    order = [prepared[i].op for i in now.order]
    runs = streamable_runs(g, prepared, order)
    cands = []  # (k, start, graph, prepared), shortest segments first
    for k in range(MIN_LAYERS, max((n for _, n in runs), default=0) + 1):
        for start, n in runs:
            if k > n:
                continue
            try:
                cands.append((k, start, *stream_graph(g, prepared, order, k, start)))
            except CompileError:  # (a tensor the segment cannot hold in a window)
                continue
    if len(cands) > SCREEN_ABOVE:
        cands = _screen(cands, stream, budget, plan)
    best = now
    for _, _, g2, prepared2 in cands:
        p = plan(g2, prepared2, None)
        if stream == "auto" and budget is not None and p.sram_bytes <= budget:
            return p, True
        if p.arena_bytes < best.arena_bytes:
            best = p
    return best, False


def _screen(cands: list, stream: str, budget: int | None, plan: Again) -> list:
    """The few candidates worth placing in full, shortest first: each placed quickly first;
    "auto" keeps the first SCREEN_KEEP within SCREEN_SLACK of the budget, then (should none of
    them fit) the SCREEN_KEEP smallest; "min" the SCREEN_KEEP smallest."""
    quick = [(plan(c[2], c[3], None, False), c) for c in cands]
    smallest = [c for _, c in sorted(quick, key=lambda q: (q[0].arena_bytes, q[1][0]))]
    keep = smallest[:SCREEN_KEEP]
    if stream == "auto" and budget is not None:
        near = [c for q, c in quick if q.sram_bytes <= budget * SCREEN_SLACK][:SCREEN_KEEP]
        keep = near + [c for c in keep if c not in near]
        return keep
    return sorted(keep, key=lambda c: c[0])


def _fast(p: Placement, budget: int, plan: Again) -> Placement:
    """``p`` with its segments' optional scratch (the layers' column buffers: on Cortex-M4/M7
    the row calls otherwise lose their column GEMM), segment by segment, where that still fits
    ``budget``."""
    forced: dict[int, Choice] = {}
    for stream in [op for op in p.graph.ops if op.kind == "STREAM"]:
        if p.choices.get(stream.index, DEFAULT_CHOICE).use_scratch:
            continue
        fast = plan(p.graph, p.prepared, {**forced, stream.index: Choice(use_scratch=True)})
        if fast.sram_bytes <= budget:
            p = fast
            forced[stream.index] = Choice(use_scratch=True)
    return p


def _mark(p: Placement, base: Placement) -> Placement:
    p.unstreamed_arena = base.arena_bytes
    p.unstreamed = base.graph
    p.unstreamed_prepared = base.prepared
    p.to_prepare = tuple(i for i, q in enumerate(p.prepared) if q.op.kind == "STREAM")
    return p


def describe(p: Placement) -> list[str]:
    """What streaming does in ``p`` (a placement or a compiled plan) and what it costs, for
    `plan`'s text (empty when nothing is streamed)."""
    out = []
    for op in p.graph.ops:
        if op.kind != "STREAM":
            continue
        d: Segment = op.attrs["segment"]
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
