"""Row streaming: running a chain of layers one output row at a time, each intermediate tensor
held in a window of a few rows instead of whole (TinyEngine/MCUNetV2's patch-based inference,
here without recomputation: every row is computed once).

A layer is streamable along H when each output row ``r`` reads a known band of rows of each
activation input (``Reach``): a convolution's window (``k`` rows, ``stride``, ``dil``,
``pad`` rows above), or the same row (elementwise ops over tensors of one shape). ``schedule``
orders the rows of a segment's layers demand-first (a row is computed when a later layer, or
the segment's output, needs it), which keeps every window as small as the reaches allow, and
sizes each window from that order. Windows slide: rows stay in order from the window's start,
and when a new row would not fit, the rows still needed move down (``tc_rows_down``) by the
rows no reader needs any more.

The same arithmetic runs per output pixel whether a layer runs whole or by rows: a row call is
the layer's kernel on a band of input rows with the padding it would have seen there
(``RowCall``), so the results are the whole layer's bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..ir import Graph


@dataclass(frozen=True)
class Reach:
    """Which input rows output row ``r`` reads: rows ``r * stride - pad`` up to
    ``(k - 1) * dil`` further, clipped to the input."""

    k: int = 1
    stride: int = 1
    dil: int = 1
    pad: int = 0

    def band(self, r: int, h_in: int) -> tuple[int, int, int]:
        """(first row, rows, padding rows above it) of the clipped band row ``r`` reads."""
        lo = r * self.stride - self.pad
        hi = min(lo + (self.k - 1) * self.dil, h_in - 1)
        first = max(lo, 0)
        return first, hi - first + 1, first - lo


@dataclass(frozen=True)
class RowLayer:
    """One layer of a segment as the scheduler sees it."""

    out: int  # tensor id of its output
    ins: tuple[tuple[int, Reach], ...]  # (tensor id, reach) of each activation input


@dataclass(frozen=True)
class RowCall:
    """One row of one layer: ``layer``'s output row ``row``; ``bands`` gives, per activation
    input, its (first row, rows, padding rows above) band."""

    layer: int
    row: int
    bands: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Move:
    """Before a write into ``tensor``'s window: its rows from ``from_row`` on (``rows`` of them)
    move to the window's start."""

    tensor: int
    from_row: int  # window slot of the first row kept
    rows: int


@dataclass
class RowSchedule:
    """A segment's row order and window sizes.

    ``steps`` is the order of row calls with the window moves before them; ``slots[t]`` is the
    rows of tensor ``t``'s window (windowed tensors only); ``where[i]`` gives, for step ``i``
    (a RowCall), the window slot of each windowed input band's first row and of the output
    row (None for whole tensors: the row index itself is the place)."""

    steps: list[RowCall | Move] = field(default_factory=list)
    slots: dict[int, int] = field(default_factory=dict)
    where: dict[int, tuple[tuple[int | None, ...], int | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class Segment:
    """The planner's layout of a streamed segment (``planner.streams``), carried by its STREAM op
    (``attrs["segment"]``) to the unit that lowers it (``ops.stream``): the layers as prepared
    (``PreparedOp``s, producers first), their row reaches, the row schedule and the windows
    (tensor id, byte offset in the op's workspace), bytes per row of every tensor it touches."""

    layers: tuple[Any, ...]  # ops.prepare.PreparedOp (that module imports this one)
    rows: tuple[RowLayer, ...]
    sched: RowSchedule
    windows: tuple[tuple[int, int], ...]
    row_bytes: tuple[tuple[int, int], ...]
    workspace: int  # bytes of the windows
    macs: int
    scratch: int  # the largest optional scratch of its layers


def schedule(
    layers: Sequence[RowLayer], heights: dict[int, int], windowed: set[int]
) -> RowSchedule:
    """Demand-first row order of ``layers`` (topological), window sizes of the ``windowed``
    tensors (the others are whole: inputs and outputs of the segment) and where each row call
    finds its rows. ``heights``: rows of every tensor involved."""
    producer = {la.out: i for i, la in enumerate(layers)}
    done = {la.out: 0 for la in layers}
    calls: list[RowCall] = []

    def ensure(i: int, upto: int) -> None:
        la = layers[i]
        while done[la.out] <= upto:
            r = done[la.out]
            bands = tuple(reach.band(r, heights[tid]) for tid, reach in la.ins)
            for (tid, _), (first, n, _) in zip(la.ins, bands, strict=True):
                if tid in producer and n > 0:
                    ensure(producer[tid], first + n - 1)
            calls.append(RowCall(i, r, bands))
            done[la.out] = r + 1

    read_inside = {tid for la in layers for tid, _ in la.ins}
    sinks = [
        i for i, la in enumerate(layers) if la.out not in read_inside or la.out not in windowed
    ]
    while any(done[layers[i].out] < heights[layers[i].out] for i in sinks):
        # the sink furthest behind (as a fraction of its rows) goes next: outputs of different
        # heights advance together, so the windows feeding them stay small
        i = min(
            (i for i in sinks if done[layers[i].out] < heights[layers[i].out]),
            key=lambda i: (done[layers[i].out] / heights[layers[i].out], i),
        )
        ensure(i, done[layers[i].out])
    return _windows(layers, calls, windowed)


def _windows(layers: Sequence[RowLayer], calls: list[RowCall], windowed: set[int]) -> RowSchedule:
    """Window sizes and slots for a row order: a window holds every row from the lowest one a
    later call still reads to the one being written."""
    last_read: dict[tuple[int, int], int] = {}
    for s, c in enumerate(calls):
        for (tid, _), (first, n, _) in zip(layers[c.layer].ins, c.bands, strict=True):
            for row in range(first, first + n):
                last_read[(tid, row)] = s
    slots = dict.fromkeys(windowed, 1)
    for s, c in enumerate(calls):
        tid = layers[c.layer].out
        if tid not in windowed:
            continue
        lowest = min((x for x in range(c.row) if last_read.get((tid, x), -1) >= s), default=c.row)
        slots[tid] = max(slots[tid], c.row - lowest + 1)
    base = dict.fromkeys(windowed, 0)
    out = RowSchedule(slots=slots)
    for c in calls:
        la = layers[c.layer]
        if la.out in windowed and c.row - base[la.out] >= slots[la.out]:
            new = c.row - slots[la.out] + 1
            out.steps.append(Move(la.out, new - base[la.out], c.row - new))
            base[la.out] = new
        ins = tuple(
            first - base[tid] if tid in windowed else None
            for (tid, _), (first, _, _) in zip(la.ins, c.bands, strict=True)
        )
        dst = c.row - base[la.out] if la.out in windowed else None
        out.where[len(out.steps)] = (ins, dst)
        out.steps.append(c)
    return out


def check(
    layers: Sequence[RowLayer], sched: RowSchedule, windowed: set[int], heights: dict[int, int]
) -> None:
    """Replay ``sched`` on row labels and raise AssertionError if a call would read a row that
    is not where the schedule says (overwritten, moved away, not yet written) or a window
    overflows: the schedule's own proof, run on every segment the compiler emits."""
    win: dict[int, list[int | None]] = {t: [None] * sched.slots[t] for t in windowed}
    written: dict[int, set[int]] = {}
    for s, st in enumerate(sched.steps):
        if isinstance(st, Move):
            w = win[st.tensor]
            kept = w[st.from_row : st.from_row + st.rows]
            win[st.tensor] = kept + [None] * (len(w) - len(kept))
            continue
        la = layers[st.layer]
        ins, dst = sched.where[s]
        for (tid, _), (first, n, _), slot in zip(la.ins, st.bands, ins, strict=True):
            for j in range(n):
                if tid in windowed:
                    assert slot is not None and 0 <= slot + j < len(win[tid]), "band off window"
                    assert win[tid][slot + j] == first + j, f"row {first + j} of t{tid} missing"
                elif tid in written:
                    assert first + j in written[tid], f"row {first + j} of t{tid} not written"
        if la.out in windowed:
            assert dst is not None and 0 <= dst < len(win[la.out]), "write off window"
            win[la.out][dst] = st.row
        else:
            written.setdefault(la.out, set()).add(st.row)
    for la in layers:
        if la.out not in windowed:
            assert written.get(la.out) == set(range(heights[la.out])), f"t{la.out} incomplete"


def variants(calls: Sequence[RowCall], layer: int) -> list[tuple[tuple[int, int], ...]]:
    """The distinct (rows, padding above) band shapes of ``layer``'s calls, in first-use order:
    one kernel parameter set each."""
    seen: dict[tuple[tuple[int, int], ...], None] = {}
    for c in calls:
        if c.layer == layer:
            seen.setdefault(tuple((n, pad) for _, n, pad in c.bands), None)
    return list(seen)


def row_view(g: Graph, tids: Sequence[int]) -> Graph:
    """``g`` with tensors ``tids`` (NHWC, batch 1) seen as one row each: what an elementwise
    op's lowering reads its sizes from when it runs a row at a time."""
    tensors = list(g.tensors)
    for tid in tids:
        t = tensors[tid]
        tensors[tid] = replace(t, shape=(1, 1, *t.shape[2:]))
    return replace(g, tensors=tensors)
