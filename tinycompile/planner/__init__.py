"""Memory planner: op schedule, tensor lifetimes, aliases, in-place reuse, arena offsets.

SRAM: a buffer lives from the step that writes it to the last step that reads it (graph inputs
from the start, graph outputs to the end); an op's inputs, outputs and scratch coexist at its
step. The peak is the largest sum of live bytes at any step: a lower bound for any placement.
The arena size is what the chosen placement needs; we try several greedy orders and keep the
best, and report both figures. Flash: the const arrays of the lowering, per layer and in total.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Graph
from ..passes.lower import Lowering
from .schedule import best_schedule

ALIGN = 8


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    """One arena allocation, shared by every tensor aliased or placed in place onto it."""

    id: int
    nbytes: int
    first: int
    last: int
    tensors: list[int] = field(default_factory=list)
    scratch_of: int | None = None  # op index for scratch buffers
    offset: int = -1
    # (step, bytes): the buffer grows at an in-place step whose output is larger than its input;
    # ``nbytes`` is the final (largest) size
    grow: list[tuple[int, int]] = field(default_factory=list)

    def size_at(self, step: int) -> int:
        """Bytes the buffer occupies at ``step`` (sizes only grow over its life)."""
        size = self.nbytes if not self.grow else self.grow[0][1]
        for s, n in self.grow[1:]:
            if s <= step:
                size = n
        return size


@dataclass
class LayerPlan:
    step: int
    op_index: int
    kind: str
    out_shape: tuple[int, ...]
    macs: int
    flash_bytes: int
    live_bytes: int
    scratch_bytes: int
    alias: bool


@dataclass
class Plan:
    graph: Graph
    lowering: Lowering
    order: list[int]  # positions into lowering.ops, in execution order
    buffers: list[Buffer]
    storage: dict[int, int]  # tensor id -> buffer id
    layers: list[LayerPlan]
    arena_bytes: int
    peak_bytes: int
    peak_step: int

    @property
    def flash_bytes(self) -> int:
        return self.lowering.flash_bytes

    def offset(self, tid: int) -> int:
        return self.buffers[self.storage[tid]].offset

    def peak_layers(self) -> list[LayerPlan]:
        """The layers whose step reaches the peak of live bytes."""
        return [la for la in self.layers if la.live_bytes == self.peak_bytes]


def plan(g: Graph, low: Lowering, *, reorder: bool = True) -> Plan:
    """Schedule the lowered ops and place every activation buffer in one arena."""
    order = best_schedule(g, low) if reorder else list(range(len(low.ops)))
    return place(g, low, order)


def place(g: Graph, low: Lowering, order: list[int]) -> Plan:
    steps = [low.ops[i] for i in order]
    n = len(steps)
    last_use: dict[int, int] = {}
    for s, lo in enumerate(steps):
        for tid in lo.op.inputs:
            if tid >= 0 and not g.t(tid).is_const:
                last_use[tid] = s
    for tid in g.outputs:
        last_use[tid] = max(n - 1, 0)

    buffers: list[Buffer] = []
    storage: dict[int, int] = {}

    def new_buffer(tid: int, first: int) -> None:
        b = Buffer(
            len(buffers),
            _align(g.t(tid).nbytes),
            first,
            max(first, last_use.get(tid, first)),
            [tid],
        )
        buffers.append(b)
        storage[tid] = b.id

    def join(tid: int, bid: int, step: int) -> None:
        b = buffers[bid]
        b.tensors.append(tid)
        b.last = max(b.last, last_use.get(tid, b.last))
        size = _align(g.t(tid).nbytes)
        if size > b.nbytes:  # in place onto a smaller input: grow from this step on
            if not b.grow:
                b.grow.append((b.first, b.nbytes))
            b.grow.append((step, size))
            b.nbytes = size
        storage[tid] = bid

    for tid in g.inputs:
        new_buffer(tid, 0)
    for s, lo in enumerate(steps):
        op = lo.op
        src = op.inputs[0] if op.inputs else -1
        src_live = src >= 0 and src in storage
        for k, tid in enumerate(op.outputs):
            if k == 0 and src_live and lo.alias and g.t(src).nbytes == g.t(tid).nbytes:
                join(tid, storage[src], s)
                continue
            # elementwise ops run in place on equal sizes; ops whose kernel was lowered for it
            # (attrs["inplace"], e.g. pointwise/depthwise convolutions) on any sizes: the
            # shared buffer is as large as the larger tensor
            same = g.t(src).nbytes == g.t(tid).nbytes if src_live else False
            if (
                k == 0
                and src_live
                and ((lo.inplace and same) or op.attrs.get("inplace"))
                and _dies_here(buffers[storage[src]], last_use, s, g)
            ):
                join(tid, storage[src], s)
                continue
            new_buffer(tid, s)
        if lo.scratch_bytes:
            buffers.append(
                Buffer(len(buffers), _align(lo.scratch_bytes), s, s, [], scratch_of=op.index)
            )

    # live bytes per step (the lower bound on any placement)
    live = [0] * max(n, 1)
    for b in buffers:
        for s in range(b.first, b.last + 1):
            live[s] += b.size_at(s)
    peak = max(live) if live else 0
    peak_step = live.index(peak) if live else 0

    arena = _place_best(buffers)
    layers = []
    for s, lo in enumerate(steps):
        out = g.t(lo.op.outputs[0])
        layers.append(
            LayerPlan(
                s,
                lo.op.index,
                lo.op.kind,
                out.shape,
                lo.macs,
                lo.flash_bytes,
                live[s],
                lo.scratch_bytes,
                lo.alias,
            )
        )
    return Plan(g, low, order, buffers, storage, layers, arena, peak, peak_step)


def _dies_here(b: Buffer, last_use: dict[int, int], step: int, g: Graph) -> bool:
    """True when no tensor of buffer ``b`` is read after ``step`` nor is a graph output."""
    return all(last_use.get(t, -1) <= step and t not in g.outputs for t in b.tensors)


def _place_best(buffers: list[Buffer]) -> int:
    """Greedy first-fit placement under several orders; keep the smallest arena."""
    keys = [
        lambda b: (-b.nbytes, b.first, b.id),
        lambda b: (-(b.last - b.first + 1) * b.nbytes, b.id),
        lambda b: (-(b.last - b.first), -b.nbytes, b.id),
        lambda b: (b.first, -b.nbytes, b.id),
    ]
    best: tuple[int, list[int]] | None = None
    for key in keys:
        offsets = _first_fit(sorted(buffers, key=key))
        size = max((offsets[b.id] + b.nbytes for b in buffers), default=0)
        if best is None or size < best[0]:
            best = (size, [offsets[b.id] for b in buffers])
    assert best is not None
    for b, off in zip(buffers, best[1], strict=True):
        b.offset = off
    return best[0]


def _first_fit(ordered: list[Buffer]) -> dict[int, int]:
    """Lowest offset for each buffer that clears every placed buffer it is live with. Sizes
    are taken over the common window only (a growing buffer is small before it grows)."""
    placed: list[tuple[int, Buffer]] = []
    offsets: dict[int, int] = {}
    for b in ordered:
        spans = []  # (other's start, other's end, b's size) over each common window
        for off, o in placed:
            if o.last < b.first or b.last < o.first:
                continue
            hi = min(b.last, o.last)
            spans.append((off, off + o.size_at(hi), b.size_at(hi)))
        spans.sort()
        best = 0
        for cand in sorted({0, *(end for _, end, _ in spans)}):
            if all(cand + need <= start or end <= cand for start, end, need in spans):
                best = cand
                break
        offsets[b.id] = best
        placed.append((best, b))
    return offsets
