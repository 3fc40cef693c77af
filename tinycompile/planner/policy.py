"""The planner's memory policy: which convolutions run in place and which take their optional
scratch (a column buffer that speeds them up), judged by the placed arena.

1. Lean: every op without its optional scratch.
2. In place (TinyEngine-style): every op whose unit offers an in-place variant and whose input
   dies at its step is tried in place all at once, kept when the arena shrinks; then each such
   op's choice is flipped in turn and kept when that shrinks the arena further (one layer in
   place can spoil another's gain: an expanding layer's buffer grows downwards into bytes the
   layers before it could use). The arena of this lean plan is the budget: speed never costs
   memory.
3. Speed where it is free: op by op, most MACs first, the optional scratch is granted (an op
   running in place is first tried out of place with it, then in place with it) whenever the
   placed arena stays within the budget.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Graph
from ..ops import DEFAULT_CHOICE, Choice, PreparedOp
from .lifetimes import Lifetimes, input_dies
from .plan import Layout, layout


def choose(
    g: Graph,
    prepared: list[PreparedOp],
    choices: dict[int, Choice],
    lay: Layout,
    *,
    reorder: bool = True,
) -> tuple[Layout, dict[int, Choice]]:
    """Choices for the ops ``choices`` leaves open, and their layout (``lay``: the layout under
    ``choices`` as given, kept when nothing beats it)."""
    forced = set(choices)
    lean = dict(choices)
    for p in prepared:
        if p.data.scratch and p.op.index not in choices:
            lean[p.op.index] = replace(DEFAULT_CHOICE, use_scratch=False)
    lean_lay = layout(g, prepared, lean, reorder=reorder)
    if lean_lay.arena_bytes <= lay.arena_bytes:
        lay, choices = lean_lay, lean
    lay, choices = _in_place(g, prepared, choices, lay, reorder)
    return _grant_scratch(g, prepared, choices, lay, reorder, forced)


def _get(choices: dict[int, Choice], index: int) -> Choice:
    return choices.get(index, DEFAULT_CHOICE)


def _in_place(
    g: Graph, prepared: list[PreparedOp], choices: dict[int, Choice], lay: Layout, reorder: bool
) -> tuple[Layout, dict[int, Choice]]:
    step_of = {st.op.index: s for s, st in enumerate(lay.steps)}
    lt = Lifetimes(lay.buffers, lay.storage)
    ops = [
        p.op
        for p in prepared
        if p.data.in_place_scratch is not None and input_dies(g, lay.steps, lt, step_of[p.op.index])
    ]
    if not ops:
        return lay, choices
    trial = dict(choices)
    for op in ops:
        trial[op.index] = replace(_get(choices, op.index), in_place=True)
    q = layout(g, prepared, trial, reorder=reorder)
    if q.arena_bytes < lay.arena_bytes:
        lay, choices = q, trial
    for op in ops:  # then op by op: one layer's choice can spoil another's
        c = _get(choices, op.index)
        trial = {**choices, op.index: replace(c, in_place=not c.in_place)}
        q = layout(g, prepared, trial, reorder=reorder)
        if q.arena_bytes < lay.arena_bytes:
            lay, choices = q, trial
    return lay, choices


def _grant_scratch(
    g: Graph,
    prepared: list[PreparedOp],
    choices: dict[int, Choice],
    lay: Layout,
    reorder: bool,
    forced: set[int],
) -> tuple[Layout, dict[int, Choice]]:
    budget = lay.arena_bytes
    waiting = [
        p
        for p in prepared
        if p.data.scratch and p.op.index not in forced and not _get(choices, p.op.index).use_scratch
    ]
    for p in sorted(waiting, key=lambda p: (-p.data.macs, p.op.index)):
        now = _get(choices, p.op.index)
        tries = [replace(now, in_place=False, use_scratch=True)]
        if now.in_place:
            tries.append(replace(now, use_scratch=True))
        for c in tries:
            trial = {**choices, p.op.index: c}
            q = layout(g, prepared, trial, reorder=reorder)
            if q.arena_bytes <= budget:
                lay, choices = q, trial
                break
    return lay, choices
