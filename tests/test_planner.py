"""Memory planner invariants on every committed model: placements never overlap while live,
every op's operands are live at its step, the arena is at least the live-bytes bound, the
schedule is a valid topological order, and state (variable tensors) has its own region."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import op_models, whole_models

from tinycompile import api

MODELS = whole_models() + op_models()


def _check(p) -> None:
    g = p.graph
    steps = [p.lowering.ops[i].op for i in p.order]
    # valid topological order
    written = set(g.inputs)
    for op in steps:
        for t in op.inputs:
            ok = t < 0 or g.t(t).is_const or g.t(t).variable or t in written
            assert ok, f"op {op.index} reads {t} too early"
        written.update(op.outputs)
    # state: every variable tensor read has its own slot in the state region, none in the arena
    slots = sorted((off, g.t(t).nbytes) for t, off in p.state.items())
    for (a, na), (b, _) in zip(slots, slots[1:], strict=False):
        assert a + na <= b
    assert not slots or slots[-1][0] + slots[-1][1] <= p.state_bytes
    for op in steps:
        for t in op.inputs:
            if t >= 0 and g.t(t).variable:
                assert t in p.state and t not in p.storage
    # every operand's buffer is live at its op's step
    for s, op in enumerate(steps):
        for t in [*op.inputs, *op.outputs]:
            if t >= 0 and not g.t(t).is_const and not g.t(t).variable:
                b = p.buffers[p.storage[t]]
                assert b.first <= s <= b.last, f"tensor {t} not live at step {s}"
                assert p.offset(t) + g.t(t).nbytes <= p.arena_bytes
                assert g.t(t).nbytes <= b.size_at(s), f"tensor {t} larger than its buffer at {s}"
                lo, hi = _span(b, s)
                assert lo <= p.offset(t) and p.offset(t) + g.t(t).nbytes <= hi, (t, s, b)
    # live buffers never overlap in memory, at any step (a buffer may grow at an in-place step)
    bs = p.buffers
    for i, a in enumerate(bs):
        for b in bs[i + 1 :]:
            for s in range(max(a.first, b.first), min(a.last, b.last) + 1):
                (la, ha), (lb, hb) = _span(a, s), _span(b, s)
                assert ha <= lb or hb <= la, (s, a, b)
    # a buffer shared by several tensors (alias / in place) holds them in sequence
    assert p.arena_bytes >= p.peak_bytes
    assert p.layers[p.peak_step].live_bytes == p.peak_bytes


def _span(b, step: int) -> tuple[int, int]:
    """The bytes buffer b occupies at ``step``: growing upwards it keeps its offset, growing
    downwards (an expanding in-place layer) its end."""
    n = b.size_at(step)
    return (b.offset + b.nbytes - n, b.offset + b.nbytes) if b.down else (b.offset, b.offset + n)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: Path(m).stem)
def test_plan_invariants(model: Path) -> None:
    _check(api.plan(model))


@pytest.mark.parametrize("model", whole_models(), ids=lambda m: Path(m).stem)
def test_reorder_never_worse(model: Path) -> None:
    assert api.plan(model).arena_bytes <= api.plan(model, reorder=False).arena_bytes


def test_peak_bound_reached_on_chains() -> None:
    """On straight chains a first-fit placement should meet the live-bytes bound exactly."""
    for m in whole_models():
        p = api.plan(m)
        if m.stem in ("kws_dscnn", "ad_autoencoder", "digits"):
            assert p.arena_bytes == p.peak_bytes, (m.stem, p.arena_bytes, p.peak_bytes)
