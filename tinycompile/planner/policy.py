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
4. Speed bought with memory, only when asked (``extra`` bytes, `--speed-sram`): the scratch
   still refused is granted op by op while the arena stays within the lean arena + ``extra``.
   The cost model is MACs per byte of arena the grant adds (a column buffer speeds up every MAC
   of its layer by about the same factor), so the layers that gain most per byte go first; a
   layer running out of place whose kernel has a stand-in for the scratch
   (``Prepared.scratch_stand_in``) gains nothing and is not bought for.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Graph
from ..ops import DEFAULT_CHOICE, Choice, PreparedOp
from .layout import Layout, layout
from .lifetimes import Lifetimes, input_dies


def choose(
    g: Graph,
    prepared: list[PreparedOp],
    choices: dict[int, Choice],
    lay: Layout,
    *,
    reorder: bool = True,
    extra: int | None = 0,
) -> tuple[Layout, dict[int, Choice], int, tuple[int, ...]]:
    """Choices for the ops ``choices`` leaves open, their layout (``lay``: the layout under
    ``choices`` as given, kept when nothing beats it), the lean arena, and the ops whose scratch
    was bought beyond it with the ``extra`` bytes the caller allows for speed (None: no
    limit)."""
    forced = set(choices)
    lean = dict(choices)
    for p in prepared:
        if p.data.scratch and p.op.index not in choices:
            lean[p.op.index] = replace(DEFAULT_CHOICE, use_scratch=False)
    lean_lay = layout(g, prepared, lean, reorder=reorder)
    if lean_lay.arena_bytes <= lay.arena_bytes:
        lay, choices = lean_lay, lean
    lay, choices = _in_place(g, prepared, choices, lay, reorder)
    lean = lay.arena_bytes
    lay, choices = _grant_scratch(g, prepared, choices, lay, reorder, forced, lean, False)
    if extra is not None and extra <= 0:
        return lay, choices, lean, ()
    free = choices
    limit = None if extra is None else lean + extra
    lay, choices = _grant_scratch(g, prepared, choices, lay, reorder, forced, limit, True)
    bought = [i for i, c in choices.items() if c.use_scratch and not _get(free, i).use_scratch]
    return lay, choices, lean, tuple(sorted(bought))


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
    budget: int | None,
    per_byte: bool,
) -> tuple[Layout, dict[int, Choice]]:
    """Grant optional scratch op by op while the arena stays within ``budget`` (None: no limit),
    most MACs first, an op in place first tried out of place (the arena is free to spend up to
    the budget); ``per_byte``: most MACs per byte of scratch first, an op in place first tried
    in place with it (the cheaper of the two)."""
    waiting = [
        p
        for p in prepared
        if p.data.scratch and p.op.index not in forced and not _get(choices, p.op.index).use_scratch
    ]

    def rank(p: PreparedOp) -> tuple[float, int]:
        return (-p.data.macs / p.data.scratch if per_byte else -p.data.macs, p.op.index)

    for p in sorted(waiting, key=rank):
        now = _get(choices, p.op.index)
        tries = [replace(now, in_place=False, use_scratch=True)]
        if per_byte and p.data.scratch_stand_in:
            tries = []  # out of place it is as fast without: nothing worth buying there
        if now.in_place:
            tries.insert(0 if per_byte else len(tries), replace(now, use_scratch=True))
        for c in tries:
            trial = {**choices, p.op.index: c}
            q = layout(g, prepared, trial, reorder=reorder)
            if budget is None or q.arena_bytes <= budget:
                lay, choices = q, trial
                break
    return lay, choices
