"""The planner's entry: from a graph and its prepared ops to a ``Placement``: the schedule, the
per-op choices (in place, optional scratch), the placed buffers, the state region, and, where
streaming is asked or needed, the rewritten graph with its STREAM op to prepare.

The planner prepares and lowers nothing: it reads what each op's ``prepare`` said it could do
(``ops.Prepared``) and decides. A streamed segment's STREAM op comes back with a stand-in
``Prepared`` holding the memory the planner gave it (``Placement.to_prepare``); the pipeline
prepares that op once and checks it asks for the same memory (``tinycompile.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph
from ..ops import DEFAULT_CHOICE, Choice, PreparedOp
from .allocator import Buffer, align
from .layout import Layout, layout, state_region


@dataclass
class Placement:
    """What the planner decided for one graph."""

    graph: Graph  # the graph planned: the passes' graph, or a rewritten copy (streaming)
    prepared: list[PreparedOp]  # the graph's live ops in model order (stand-ins: ``to_prepare``)
    layout: Layout
    choices: dict[int, Choice]  # op index -> the planner's choice (absent: the default)
    state: dict[int, int]  # variable tensor id -> state offset
    state_bytes: int  # the state region: a static buffer of its own, never in the arena
    to_prepare: tuple[int, ...] = ()  # positions in ``prepared`` of ops made by the planner
    unstreamed_arena: int | None = None  # the arena without the streamed segment (if any)
    unstreamed: Graph | None = None  # the graph before streaming (if streamed)
    unstreamed_prepared: list[PreparedOp] | None = None  # its prepared ops
    lean_arena: int | None = None  # the arena without the scratch bought for speed (if any)
    speed_ops: tuple[int, ...] = ()  # ops whose scratch was bought beyond the lean arena

    @property
    def order(self) -> list[int]:
        return self.layout.order

    @property
    def buffers(self) -> list[Buffer]:
        return self.layout.buffers

    @property
    def arena_bytes(self) -> int:
        return self.layout.arena_bytes

    @property
    def peak_bytes(self) -> int:
        return self.layout.peak_bytes

    @property
    def sram_bytes(self) -> int:
        """Arena plus state: the model's SRAM."""
        return self.arena_bytes + self.state_bytes

    def offset(self, tid: int) -> int:
        b = self.layout.buffers[self.layout.storage[tid]]
        return b.tensor_offset(b.offset, align(self.graph.t(tid).nbytes))


def plan(
    g: Graph,
    prepared: list[PreparedOp],
    *,
    reorder: bool = True,
    choices: dict[int, Choice] | None = None,
    search: bool = True,
    stream: str | int = "off",
    budget: int | None = None,
    speed: int | None = 0,
) -> Placement:
    """Schedule, choose and place the ``prepared`` ops of ``g``.

    ``choices`` forces choices for some ops (tests, tools); with ``search`` the policy then
    looks for in-place and scratch choices that shrink the arena (``policy``). ``stream``
    ("off", "auto" with a ``budget`` of SRAM for arena and state, "min", or a number of
    layers) runs the first layers by rows where that is asked or needed (``streams``); the
    placement's graph is then a rewritten copy of ``g``. ``speed``: arena bytes the policy may
    add beyond the lean arena to give layers their optional scratch (None: no limit; ``policy``
    step 4), capped so that a plan which fits ``budget`` still fits, and none in a streamed
    plan."""
    base = _place(g, prepared, reorder, choices, search, speed)
    if base.speed_ops and budget is not None and base.sram_bytes > budget:
        room = budget - base.state_bytes - (base.lean_arena or 0)  # what the board leaves
        base = _place(g, prepared, reorder, choices, search, max(room, 0))
    if stream == "off" or (stream == "auto" and (budget is None or base.sram_bytes <= budget)):
        return base
    if base.speed_ops:
        base = _place(g, prepared, reorder, choices, search, 0)
    from .streams import choose_stream

    def again(
        g2: Graph,
        prepared2: list[PreparedOp],
        more: dict[int, Choice] | None = None,
        full: bool = True,
    ) -> Placement:
        forced = {**(choices or {}), **(more or {})}
        if not full:  # a quick look: model order, no search
            return _place(g2, prepared2, False, forced, False)
        return _place(g2, prepared2, reorder, forced, search)

    return choose_stream(g, prepared, base, stream, budget, again)


def _place(
    g: Graph,
    prepared: list[PreparedOp],
    reorder: bool,
    choices: dict[int, Choice] | None,
    search: bool,
    speed: int | None = 0,
) -> Placement:
    from .policy import choose

    chosen = dict(choices or {})
    lay = layout(g, prepared, chosen, reorder=reorder)
    lean, bought = 0, ()
    if search:
        lay, chosen, lean, bought = choose(g, prepared, chosen, lay, reorder=reorder, extra=speed)
    kept = {k: v for k, v in chosen.items() if v != DEFAULT_CHOICE}
    state, state_bytes = state_region(g, [p.op for p in prepared])
    p = Placement(g, prepared, lay, kept, state, state_bytes)
    if bought:
        p.lean_arena, p.speed_ops = lean, bought
    return p
