"""The plan: a schedule, the planner's choices, the placed buffers and what they cost."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

from ..ir import Graph, Op, validate
from ..ops import (
    DEFAULT_CHOICE,
    Choice,
    Lowering,
    PreparedOp,
    lower,
    own_types,
    prepare_graph,
)
from .allocator import Allocator, Buffer, align, default_allocator, live_bytes
from .lifetimes import Step, lifetimes
from .schedule import best_schedule


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
    choices: dict[int, Choice]  # op index -> the planner's choice (absent: the default)
    state: dict[int, int] = field(default_factory=dict)  # variable tensor id -> state offset
    state_bytes: int = 0  # the state region: a static buffer of its own, never in the arena
    unstreamed_arena: int | None = None  # the arena without the streamed segment (if any)
    unstreamed: Graph | None = None  # the model's graph before streaming (if streamed)
    lean_arena: int | None = None  # the arena without the scratch bought for speed (if any)
    speed_ops: tuple[int, ...] = ()  # ops whose scratch was bought beyond the lean arena

    @property
    def flash_bytes(self) -> int:
        return self.lowering.flash_bytes

    @property
    def sram_bytes(self) -> int:
        """Arena plus state: the model's SRAM."""
        return self.arena_bytes + self.state_bytes

    def offset(self, tid: int) -> int:
        b = self.buffers[self.storage[tid]]
        return b.tensor_offset(b.offset, align(self.graph.t(tid).nbytes))

    def peak_layers(self) -> list[LayerPlan]:
        """The layers whose step reaches the peak of live bytes."""
        return [la for la in self.layers if la.live_bytes == self.peak_bytes]

    def in_place(self, op_index: int) -> bool:
        """Whether the planner runs op ``op_index``'s in-place variant."""
        return self.choices.get(op_index, DEFAULT_CHOICE).in_place


@dataclass
class Layout:
    """A schedule placed under given choices (what the policy compares)."""

    order: list[int]
    steps: list[Step]  # in execution order
    buffers: list[Buffer]
    storage: dict[int, int]
    live: list[int]
    arena_bytes: int

    @property
    def peak_bytes(self) -> int:
        return max(self.live) if self.live else 0


def steps_of(prepared: list[PreparedOp], choices: dict[int, Choice]) -> list[Step]:
    """The planner's view of each prepared op (model order) under ``choices``."""
    out = []
    for p in prepared:
        c = choices.get(p.op.index, DEFAULT_CHOICE)
        out.append(
            Step(
                p.op,
                c.scratch_bytes(p.data),
                p.unit.alias,
                p.unit.elementwise,
                c.in_place,
                p.data.macs,
                p.data.in_place_shifts,
            )
        )
    return out


def place(
    g: Graph, steps: list[Step], order: list[int], allocator: Allocator | None = None
) -> Layout:
    """Lifetimes of ``steps`` run in ``order``, placed by ``allocator``."""
    run = [steps[i] for i in order]
    lt = lifetimes(g, run)
    live = live_bytes(lt.buffers, len(run))
    arena = (allocator or default_allocator()).place(lt.buffers)
    return Layout(order, run, lt.buffers, lt.storage, live, arena)


def layout(
    g: Graph, prepared: list[PreparedOp], choices: dict[int, Choice], *, reorder: bool = True
) -> Layout:
    """The best schedule under ``choices``, placed."""
    steps = steps_of(prepared, choices)
    order = list(range(len(steps)))
    if reorder:
        ops = [p.op for p in prepared]
        order = best_schedule(g, ops, lambda o: place(g, steps, o).arena_bytes)
    return place(g, steps, order)


def naive_arena(g: Graph) -> int:
    """The arena with none of the planner's tricks: model order, every tensor its own buffer
    (no in-place convolutions, no elementwise sharing; reshapes still alias, as in TFLM), no
    optional scratch, first-fit placement. ``g`` is not modified."""
    g = copy.deepcopy(g)
    validate(g, own_types=own_types(g))
    prepared = prepare_graph(g)
    choices = {p.op.index: Choice(in_place=False, use_scratch=False) for p in prepared}
    steps = [replace(st, elementwise=False) for st in steps_of(prepared, choices)]
    return place(g, steps, list(range(len(steps)))).arena_bytes


def plan(
    g: Graph,
    *,
    reorder: bool = True,
    choices: dict[int, Choice] | None = None,
    search: bool = True,
    stream: str | int = "off",
    budget: int | None = None,
    speed: int | None = 0,
) -> Plan:
    """Validate, prepare, schedule, choose and place; then lower every op once under the choices.

    ``choices`` forces choices for some ops (tests, tools); with ``search`` the policy then
    looks for in-place and scratch choices that shrink the arena (``policy``). ``stream``
    ("off", "auto" with a ``budget`` of SRAM for arena and state, "min", or a number of
    layers) runs the first
    layers by rows where that is asked or needed (``streams``); the plan's graph is then a
    rewritten copy of ``g``. ``speed``: arena bytes the policy may add beyond the lean arena to
    give layers their optional scratch (None: no limit; ``policy`` step 4), capped so that a
    plan which fits ``budget`` still fits, and none in a streamed plan."""
    base = _plan(g, reorder, choices, search, speed)
    if base.speed_ops and budget is not None and base.sram_bytes > budget:
        room = budget - base.state_bytes - (base.lean_arena or 0)  # what the board leaves
        base = _plan(g, reorder, choices, search, max(room, 0))
    if stream == "off" or (stream == "auto" and (budget is None or base.sram_bytes <= budget)):
        return base
    if base.speed_ops:
        base = _plan(g, reorder, choices, search, 0)
    from .streams import choose_stream

    def again(g2: Graph, more: dict[int, Choice] | None = None) -> Plan:
        return _plan(g2, reorder, {**(choices or {}), **(more or {})}, search)

    return choose_stream(g, base, stream, budget, again)


def _plan(
    g: Graph,
    reorder: bool,
    choices: dict[int, Choice] | None,
    search: bool,
    speed: int | None = 0,
) -> Plan:
    from .policy import choose

    validate(g, own_types=own_types(g))
    prepared = prepare_graph(g)
    chosen = dict(choices or {})
    lay = layout(g, prepared, chosen, reorder=reorder)
    if not search:
        return finish(g, prepared, chosen, lay)
    lay, chosen, lean, bought = choose(g, prepared, chosen, lay, reorder=reorder, extra=speed)
    p = finish(g, prepared, chosen, lay)
    if bought:
        p.lean_arena, p.speed_ops = lean, bought
    return p


def finish(g: Graph, prepared: list[PreparedOp], choices: dict[int, Choice], lay: Layout) -> Plan:
    """Lower under ``choices`` and describe the placed layout per layer."""
    low = lower(g, prepared, choices)
    layers = []
    for s, (i, st) in enumerate(zip(lay.order, lay.steps, strict=True)):
        lo = low.ops[i]
        layers.append(
            LayerPlan(
                s,
                st.op.index,
                st.op.kind,
                g.t(st.op.outputs[0]).shape,
                st.macs,
                lo.flash_bytes,
                lay.live[s],
                lo.scratch_bytes,
                st.alias,
            )
        )
    peak = lay.peak_bytes
    peak_step = lay.live.index(peak) if lay.live else 0
    kept = {k: v for k, v in choices.items() if v != DEFAULT_CHOICE}
    state, state_bytes = state_region(g, [p.op for p in prepared])
    return Plan(
        g,
        low,
        lay.order,
        lay.buffers,
        lay.storage,
        layers,
        lay.arena_bytes,
        peak,
        peak_step,
        kept,
        state,
        state_bytes,
    )


def state_region(g: Graph, ops: list[Op]) -> tuple[dict[int, int], int]:
    """Offsets of the variable tensors the ops read (by tensor id, aligned) in the state
    region, and its size. State lives for the program's lifetime: it has no place in the
    arena's lifetimes."""
    offsets: dict[int, int] = {}
    size = 0
    used = sorted({t for op in ops for t in op.inputs if t >= 0 and g.t(t).variable})
    for tid in used:
        offsets[tid] = size
        size += align(g.t(tid).nbytes)
    return offsets, size
