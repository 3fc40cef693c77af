"""Op ordering. For branching graphs (residual adds, concatenations) the order decides which
tensors coexist, hence the peak SRAM. We evaluate a few valid topological orders and keep the
one whose placed arena is smallest (ties: the model's own order)."""

from __future__ import annotations

from ..ir import Graph
from ..passes.lower import Lowering


def _deps(g: Graph, low: Lowering) -> list[set[int]]:
    prod = {tid: i for i, lo in enumerate(low.ops) for tid in lo.op.outputs}
    return [{prod[t] for t in lo.op.inputs if t in prod} for lo in low.ops]


def _greedy(g: Graph, low: Lowering, deps: list[set[int]], prefer_depth: bool) -> list[int]:
    n = len(low.ops)
    users: dict[int, int] = {}
    for lo in low.ops:
        for t in lo.op.inputs:
            users[t] = users.get(t, 0) + 1
    done: list[int] = []
    done_set: set[int] = set()
    remaining = dict(users)
    while len(done) < n:
        ready = [i for i in range(n) if i not in done_set and deps[i] <= done_set]

        def cost(i: int) -> tuple[int, int, int]:
            lo = low.ops[i]
            out = sum(g.t(t).nbytes for t in lo.op.outputs)
            freed = sum(
                g.t(t).nbytes
                for t in set(lo.op.inputs)
                if t >= 0
                and not g.t(t).is_const
                and remaining.get(t, 0) == 1
                and t not in g.outputs
            )
            near = 0 if (done and prefer_depth and done[-1] in deps[i]) else 1
            return (near, out - freed, i) if prefer_depth else (out - freed, near, i)

        pick = min(ready, key=cost)
        done.append(pick)
        done_set.add(pick)
        for t in low.ops[pick].op.inputs:
            if t in remaining:
                remaining[t] -= 1
    return done


def best_schedule(g: Graph, low: Lowering) -> list[int]:
    from . import place

    n = len(low.ops)
    base = list(range(n))
    deps = _deps(g, low)
    if all(deps[i] <= {i - 1} for i in range(n)):
        return base  # a chain: only one order
    candidates = [base, _greedy(g, low, deps, False), _greedy(g, low, deps, True)]
    best = base
    best_size = place(g, low, base).arena_bytes
    for order in candidates[1:]:
        size = place(g, low, order).arena_bytes
        if size < best_size:
            best, best_size = order, size
    return best
