"""Placing buffers in one arena: a small interface and the greedy first-fit behind it.

A ``Buffer`` is a request: a size (that may grow at given steps, for an in-place op writing a
larger output over its input, upwards from its offset or downwards from its end), a first and a
last step. Two buffers whose step ranges meet must
not overlap in memory; apart from that, any offsets are valid. An ``Allocator`` turns requests
into offsets (TFLM's ``memory_planner/`` interface in spirit, TinyEngine's swappable allocator).

``FirstFit`` places buffers in a given order, each at the lowest offset that clears every placed
buffer it is live with; ``BestOfOrders`` runs first fit under several orders (size, size x
lifetime, lifetime, start) and keeps the smallest arena. The live-bytes bound (the largest sum
of sizes live at one step) is a lower bound for any placement; ``live_bytes`` computes it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

ALIGN = 8


def align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    """One arena allocation, shared by every tensor aliased or placed in place onto it."""

    id: int
    nbytes: int  # the final (largest) size
    first: int
    last: int
    tensors: list[int] = field(default_factory=list)
    scratch_of: int | None = None  # op index for scratch buffers
    offset: int = -1
    # (step, bytes) from its first step on: the buffer grows at an in-place step whose output is
    # larger than its input, or shrinks after one whose output is narrower (``in_place_shrinks``)
    grow: list[tuple[int, int]] = field(default_factory=list)
    # True: it grows downwards (its tensors end together, at offset + nbytes; an expanding
    # in-place layer's output starts below its input); False: upwards (they start at offset)
    down: bool = False

    def size_at(self, step: int) -> int:
        """Bytes the buffer occupies at ``step``."""
        size = self.nbytes if not self.grow else self.grow[0][1]
        for s, n in self.grow[1:]:
            if s <= step:
                size = n
        return size

    def size_over(self, lo: int, hi: int) -> int:
        """The largest size over steps ``lo`` to ``hi`` (a buffer may shrink: ``grow``)."""
        return max([self.size_at(lo)] + [n for s, n in self.grow[1:] if lo < s <= hi])

    def span_over(self, offset: int, lo: int, hi: int) -> tuple[int, int]:
        """[start, end) covering what it occupies from step ``lo`` to ``hi`` at ``offset``."""
        size = self.size_over(lo, hi)
        if self.down:
            return offset + self.nbytes - size, offset + self.nbytes
        return offset, offset + size

    def span_at(self, offset: int, step: int) -> tuple[int, int]:
        """[start, end) it occupies at ``step`` when placed at ``offset``."""
        if self.down:
            return offset + self.nbytes - self.size_at(step), offset + self.nbytes
        return offset, offset + self.size_at(step)

    def tensor_offset(self, offset: int, nbytes: int) -> int:
        """Where a tensor of ``nbytes`` (aligned) sharing the buffer starts."""
        return offset + self.nbytes - nbytes if self.down else offset

    def meets(self, other: Buffer) -> bool:
        """Whether the two buffers are live at a common step."""
        return not (other.last < self.first or self.last < other.first)


def live_bytes(buffers: Sequence[Buffer], steps: int) -> list[int]:
    """Bytes live at each step: the lower bound on any placement is their maximum."""
    live = [0] * max(steps, 1)
    for b in buffers:
        for s in range(b.first, b.last + 1):
            live[s] += b.size_at(s)
    return live


def arena_size(buffers: Sequence[Buffer], offsets: dict[int, int]) -> int:
    return max((offsets[b.id] + b.nbytes for b in buffers), default=0)


class Allocator(ABC):
    """Turns buffer requests into arena offsets (by buffer id)."""

    @abstractmethod
    def offsets(self, buffers: Sequence[Buffer]) -> dict[int, int]: ...

    def place(self, buffers: Sequence[Buffer]) -> int:
        """Set every buffer's offset; return the arena size."""
        offs = self.offsets(buffers)
        for b in buffers:
            b.offset = offs[b.id]
        return arena_size(buffers, offs)


class FirstFit(Allocator):
    """Greedy first fit in the order ``key`` sorts the buffers (their given order if None).
    Spans are taken over the common window only (a growing buffer is small before it grows, a
    shrinking one after it shrinks, and a buffer growing downwards occupies only its top bytes
    before)."""

    def __init__(self, key: Callable[[Buffer], object] | None = None) -> None:
        self.key = key

    def offsets(self, buffers: Sequence[Buffer]) -> dict[int, int]:
        ordered = sorted(buffers, key=self.key) if self.key is not None else list(buffers)
        placed: list[tuple[int, Buffer]] = []
        offsets: dict[int, int] = {}
        for b in ordered:
            spans = []  # (other's start, other's end, b's span from offset 0) per common window
            for off, o in placed:
                if not b.meets(o):
                    continue
                lo, hi = max(b.first, o.first), min(b.last, o.last)
                spans.append((*o.span_over(off, lo, hi), b.span_over(0, lo, hi)))
            best = 0
            cands = {0}
            for _, end, (lo, _) in spans:
                cands.add(max(end - lo, 0))  # b's span starting right at another's end
            for cand in sorted(cands):
                if all(cand + bh <= start or end <= cand + bl for start, end, (bl, bh) in spans):
                    best = cand
                    break
            offsets[b.id] = best
            placed.append((best, b))
        return offsets


GREEDY_ORDERS: tuple[Callable[[Buffer], object], ...] = (
    lambda b: (-b.nbytes, b.first, b.id),
    lambda b: (-(b.last - b.first + 1) * b.nbytes, b.id),
    lambda b: (-(b.last - b.first), -b.nbytes, b.id),
    lambda b: (b.first, -b.nbytes, b.id),
)


class BestOf(Allocator):
    """Run several allocators and keep the smallest arena (the first on ties)."""

    def __init__(self, allocators: Sequence[Allocator]) -> None:
        self.allocators = list(allocators)

    def offsets(self, buffers: Sequence[Buffer]) -> dict[int, int]:
        best: tuple[int, dict[int, int]] | None = None
        for a in self.allocators:
            offs = a.offsets(buffers)
            size = arena_size(buffers, offs)
            if best is None or size < best[0]:
                best = (size, offs)
        return best[1] if best is not None else {}


def default_allocator() -> Allocator:
    """First fit under the four greedy orders, the smallest arena kept."""
    return BestOf([FirstFit(k) for k in GREEDY_ORDERS])
