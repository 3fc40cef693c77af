"""Preparing: every live op of a passed graph once, through its unit's ``prepare``, every problem
collected (``problems``: each naming its op) rather than stopping at the first.

``problems`` lists what is wrong with a graph as read (unsupported operators, structure and
types: ``ir.problems``); ``prepare_ops`` then prepares the ops of the graph after the passes. An
op whose raw options the options pass could not decode (``passes.decode``) is reported here with
its unit's reason. Ops whose outputs are all constants (folded) are skipped: nothing runs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import CompileError
from ..ir import Graph, Op
from ..ir import problems as structural_problems
from .base import Operator, Prepared, check_int16, decode_op, fail, load_all, own_types
from .base import unsupported as unsupported_error

_BAD_VALUES = (ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError)


@dataclass(frozen=True)
class PreparedOp:
    """A live op with its unit and what the unit's ``prepare`` computed."""

    op: Op
    unit: Operator
    data: Prepared


def named(op: Op, e: Exception) -> CompileError:
    """``e`` as a CompileError naming ``op``."""
    if isinstance(e, CompileError):
        return e if e.op_index is not None else fail(op, e.reason)
    return fail(op, f"cannot lower: {e}")


@dataclass
class Problems:
    """What ``problems`` found: graph-level problems (``head`` before any op's, ``tail``
    after), per-op ones, and the ops not to prepare (refused already)."""

    head: list[CompileError]
    by_op: list[CompileError]
    tail: list[CompileError]
    bad: set[int]

    @property
    def graph_level(self) -> bool:
        return bool(self.head or self.tail)


def problems(g: Graph) -> Problems:
    """Unsupported operators, then structure and types (``ir.problems``, which skips the
    unsupported ops)."""
    units = load_all()
    unsupported = [op for op in g.ops if op.kind not in units]
    bad = {op.index for op in unsupported}
    structural = structural_problems(g, bad, own_types(g))
    by_op = [unsupported_error(op) for op in unsupported]
    by_op += [e for e in structural if e.op_index is not None]
    n_head = 0  # graph-level problems ir.problems lists before any op's
    while n_head < len(structural) and structural[n_head].op_index is None:
        n_head += 1
    tail = [e for e in structural[n_head:] if e.op_index is None]
    bad |= {e.op_index for e in structural if e.op_index is not None}
    return Problems(structural[:n_head], by_op, tail, bad)


def prepare_ops(
    g: Graph, skip: set[int] | None = None
) -> tuple[list[PreparedOp], list[CompileError]]:
    """Prepare every live op of ``g`` (after the passes) once, in model order, except those in
    ``skip``; returns the prepared ops and the problems found (each naming its op, in op
    order)."""
    units = load_all()
    skip = skip or set()
    out: list[PreparedOp] = []
    found: list[CompileError] = []
    for op in g.ops:  # options first: a refused option says more than what follows from it
        if op.index not in skip and op.options is not None:
            try:
                decode_op(replace(op, attrs=dict(op.attrs)))  # the reason it was refused
            except CompileError as e:
                found.append(e)
                skip = skip | {op.index}
    for op in g.ops:
        if op.index in skip or all(g.t(t).is_const for t in op.outputs):
            continue
        unit = units[op.kind]
        try:
            check_int16(op, g, unit)
            out.append(PreparedOp(op, unit, unit.prepare(op, g)))
        except (CompileError, *_BAD_VALUES) as e:
            found.append(named(op, e))
    return out, found
