"""A schedule placed under given choices: the planner's view of each prepared op (``Step``), the
placement of a schedule's buffers (``place``), the best schedule's (``layout``), and the state
region of variable tensors."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir import Graph, Op
from ..ops import DEFAULT_CHOICE, Choice, PreparedOp
from .allocator import Allocator, Buffer, align, default_allocator, live_bytes
from .lifetimes import Step, lifetimes
from .schedule import best_schedule


@dataclass
class Layout:
    """A schedule placed under given choices (what the policy compares)."""

    order: list[int]  # positions into the prepared ops, in execution order
    steps: list[Step]  # in execution order
    buffers: list[Buffer]
    storage: dict[int, int]  # tensor id -> buffer id
    live: list[int]  # live bytes per step
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
                p.data.in_place_shrinks,
                p.data.in_place_grows,
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


def naive_arena(g: Graph, prepared: list[PreparedOp]) -> int:
    """The arena with none of the planner's tricks: model order, every tensor its own buffer
    (no in-place convolutions, no elementwise sharing; reshapes still alias, as in TFLM), no
    optional scratch, first-fit placement."""
    choices = {p.op.index: Choice(in_place=False, use_scratch=False) for p in prepared}
    steps = [replace(st, elementwise=False) for st in steps_of(prepared, choices)]
    return place(g, steps, list(range(len(steps)))).arena_bytes


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
