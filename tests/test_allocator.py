"""The arena allocator on made-up buffers (no model): offsets never overlap for buffers live at
a common step, growing buffers are small before they grow, and the best-of-orders allocator
reaches the live-bytes bound where a placement exists that reaches it."""

from __future__ import annotations

import itertools
import random

import pytest

from tinycompile.planner.allocator import (
    BestOf,
    Buffer,
    FirstFit,
    arena_size,
    default_allocator,
    live_bytes,
)


def _bufs(spec: list[tuple[int, int, int]]) -> list[Buffer]:
    """(size, first, last) -> buffers with ids in order."""
    return [Buffer(i, n, f, last) for i, (n, f, last) in enumerate(spec)]


def _check_no_overlap(buffers: list[Buffer]) -> None:
    for a, b in itertools.combinations(buffers, 2):
        if not a.meets(b):
            continue
        for s in range(max(a.first, b.first), min(a.last, b.last) + 1):
            # the bytes each occupies at step s, computed here from the definitions: a buffer
            # growing upwards from its offset, one growing downwards from its end
            sa, sb = a.size_at(s), b.size_at(s)
            lo_a = a.offset + a.nbytes - sa if a.down else a.offset
            lo_b = b.offset + b.nbytes - sb if b.down else b.offset
            assert lo_a + sa <= lo_b or lo_b + sb <= lo_a, f"{a.id} and {b.id} overlap at {s}"


def test_disjoint_lifetimes_share_offset_zero() -> None:
    bufs = _bufs([(64, 0, 1), (32, 2, 3), (128, 4, 4)])
    assert default_allocator().place(bufs) == 128
    assert [b.offset for b in bufs] == [0, 0, 0]


def test_chain_reaches_the_bound() -> None:
    # a chain a -> b -> c -> d: each step holds one input and one output
    bufs = _bufs([(100, 0, 1), (40, 1, 2), (90, 2, 3), (10, 3, 3)])
    arena = default_allocator().place(bufs)
    _check_no_overlap(bufs)
    assert arena == max(live_bytes(bufs, 4)) == 140


def test_first_fit_follows_its_order() -> None:
    """First fit in the given order: a short-lived small buffer placed first pushes the large
    one up; sorted by size the large one goes first and the arena is smaller."""
    spec = [(16, 0, 0), (64, 0, 2), (16, 1, 2), (48, 1, 1)]
    given = _bufs(spec)
    a = FirstFit().place(given)
    by_size = _bufs(spec)
    b = FirstFit(key=lambda x: (-x.nbytes, x.id)).place(by_size)
    _check_no_overlap(given)
    _check_no_overlap(by_size)
    assert b <= a
    assert BestOf([FirstFit(), FirstFit(key=lambda x: (-x.nbytes, x.id))]).place(_bufs(spec)) == b


def test_growing_buffer_is_small_before_it_grows() -> None:
    """An in-place buffer of 32 B growing to 96 B at step 2: a buffer live only at steps 0..1
    may sit right above its first 32 bytes."""
    grow = Buffer(0, 96, 0, 3, grow=[(0, 32), (2, 96)])
    early = Buffer(1, 64, 0, 1)
    bufs = [grow, early]
    arena = default_allocator().place(bufs)
    _check_no_overlap(bufs)
    assert live_bytes(bufs, 4) == [96, 96, 96, 96]
    assert arena == 96
    assert grow.size_at(1) == 32 and grow.size_at(2) == 96


def test_buffer_growing_downwards_lends_its_lower_bytes() -> None:
    """An expanding in-place layer: input 20 B at steps 1..2 growing to 40 B at step 2,
    downwards. Before it grows its lower 20 bytes are free, so the layer before it (20 B,
    steps 0..1) fits under it while the model input (60 B, step 0) takes the rest: the arena
    is the live-bytes bound, 80 B. Tensors of the grown buffer end together."""
    grow = Buffer(0, 40, 1, 2, grow=[(1, 20), (2, 40)], down=True)
    before = Buffer(1, 20, 0, 1)
    model_in = Buffer(2, 60, 0, 0)
    bufs = [grow, before, model_in]
    arena = default_allocator().place(bufs)
    _check_no_overlap(bufs)
    assert max(live_bytes(bufs, 3)) == 80 and arena == 80
    assert grow.span_at(grow.offset, 1) == (grow.offset + 20, grow.offset + 40)
    assert grow.tensor_offset(grow.offset, 20) == grow.offset + 20
    assert grow.tensor_offset(grow.offset, 40) == grow.offset


@pytest.mark.parametrize("seed", range(40))
def test_random_buffers_never_overlap(seed: int) -> None:
    rng = random.Random(seed)
    steps = rng.randint(1, 12)
    spec = []
    for _ in range(rng.randint(1, 14)):
        first = rng.randrange(steps)
        spec.append((8 * rng.randint(1, 32), first, rng.randint(first, steps - 1)))
    bufs = _bufs(spec)
    for b in bufs:  # some grow, upwards or downwards, at a step of their life
        if b.last > b.first and rng.random() < 0.4:
            at = rng.randint(b.first + 1, b.last)
            b.grow = [(b.first, 8 * rng.randint(1, b.nbytes // 8)), (at, b.nbytes)]
            b.down = rng.random() < 0.5
    arena = default_allocator().place(bufs)
    _check_no_overlap(bufs)
    assert arena == arena_size(bufs, {b.id: b.offset for b in bufs})
    assert arena >= max(live_bytes(bufs, steps))
    # never worse than any single order it tries
    for key in (None, lambda x: (-x.nbytes, x.id)):
        assert arena <= FirstFit(key).place(_bufs(spec))
