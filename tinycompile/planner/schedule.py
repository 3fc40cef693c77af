"""Op ordering. For branching graphs (residual adds, concatenations) the order decides which
tensors coexist, hence the peak SRAM. We evaluate a few valid topological orders and keep the
one whose placed arena is smallest (ties: the model's own order)."""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Graph, Op


def _deps(g: Graph, ops: list[Op]) -> list[set[int]]:
    """Each op's predecessors: the producers of its inputs, and the previous reader of each
    variable tensor it reads (state updates keep the model's order)."""
    prod = {tid: i for i, op in enumerate(ops) for tid in op.outputs}
    deps = [{prod[t] for t in op.inputs if t in prod} for op in ops]
    last_reader: dict[int, int] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            if t >= 0 and g.t(t).variable:
                if t in last_reader and last_reader[t] != i:
                    deps[i].add(last_reader[t])
                last_reader[t] = i
    return deps


def _greedy(g: Graph, ops: list[Op], deps: list[set[int]], prefer_depth: bool) -> list[int]:
    n = len(ops)
    users: dict[int, int] = {}
    for op in ops:
        for t in op.inputs:
            users[t] = users.get(t, 0) + 1
    done: list[int] = []
    done_set: set[int] = set()
    remaining = dict(users)
    while len(done) < n:
        ready = [i for i in range(n) if i not in done_set and deps[i] <= done_set]

        def cost(i: int) -> tuple[int, int, int]:
            op = ops[i]
            out = sum(g.t(t).nbytes for t in op.outputs)
            freed = sum(
                g.t(t).nbytes
                for t in set(op.inputs)
                if t >= 0
                and not g.t(t).is_const
                and not g.t(t).variable
                and remaining.get(t, 0) == 1
                and t not in g.outputs
            )
            near = 0 if (done and prefer_depth and done[-1] in deps[i]) else 1
            return (near, out - freed, i) if prefer_depth else (out - freed, near, i)

        pick = min(ready, key=cost)
        done.append(pick)
        done_set.add(pick)
        for t in ops[pick].inputs:
            if t in remaining:
                remaining[t] -= 1
    return done


def best_schedule(g: Graph, ops: list[Op], arena_of: Callable[[list[int]], int]) -> list[int]:
    """The order (positions into ``ops``, the live ops in model order) whose placed arena,
    as ``arena_of`` measures it, is smallest."""
    n = len(ops)
    base = list(range(n))
    deps = _deps(g, ops)
    if all(deps[i] <= {i - 1} for i in range(n)):
        return base  # a chain: only one order
    candidates = [base, _greedy(g, ops, deps, False), _greedy(g, ops, deps, True)]
    best = base
    best_size = arena_of(base)
    for order in candidates[1:]:
        size = arena_of(order)
        if size < best_size:
            best, best_size = order, size
    return best
