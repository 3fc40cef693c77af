"""The planner's memory policy: which convolutions run in place and which optional scratch
buffers are refused, judged by the placed arena.

- In place (TinyEngine-style): every op whose unit offers an in-place variant and whose input
  dies at its step is first tried in place all at once; the result is kept only when the arena
  shrinks.
- Optional scratch (a convolution's im2col buffer) trades SRAM for speed: where it sits at the
  SRAM peak, the layers are tried without it, and the smaller arena kept (a few rounds).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import Graph
from ..ops import DEFAULT_CHOICE, Choice, PreparedOp
from .lifetimes import Lifetimes, input_dies
from .plan import Layout, layout

SCRATCH_ROUNDS = 4


def choose(
    g: Graph,
    prepared: list[PreparedOp],
    choices: dict[int, Choice],
    lay: Layout,
    *,
    reorder: bool = True,
) -> tuple[Layout, dict[int, Choice]]:
    """Improve on ``lay`` (placed under ``choices``); returns the kept layout and choices."""
    lay, choices = _in_place(g, prepared, choices, lay, reorder)
    return _drop_peak_scratch(g, prepared, choices, lay, reorder)


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
    return (q, trial) if q.arena_bytes < lay.arena_bytes else (lay, choices)


def _drop_peak_scratch(
    g: Graph, prepared: list[PreparedOp], choices: dict[int, Choice], lay: Layout, reorder: bool
) -> tuple[Layout, dict[int, Choice]]:
    for _ in range(SCRATCH_ROUNDS):
        peak = lay.peak_bytes
        at_peak = [
            st.op.index for s, st in enumerate(lay.steps) if lay.live[s] == peak and st.scratch
        ]
        if not at_peak:
            return lay, choices
        trial = dict(choices)
        for i in at_peak:
            trial[i] = replace(_get(choices, i), use_scratch=False)
        q = layout(g, prepared, trial, reorder=reorder)
        if q.arena_bytes >= lay.arena_bytes:
            return lay, choices
        lay, choices = q, trial
    return lay, choices
