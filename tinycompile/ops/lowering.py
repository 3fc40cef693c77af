"""The ops stage's driver: prepare every op once, then lower each to one C statement plus
const data, following the planner's choices.

``prepare_graph`` (on a validated graph) decodes options, folds constant aliases and prepares
every live op (the first op that cannot be handled raises a CompileError naming it);
``check_graph`` lists every problem of a graph instead of stopping at the first. ``lower``
runs the units' lowerings with the planner's ``Choice`` per op. Tensor pointers in the
statements are symbolic (``TC_T<id>`` macros for activations, array symbols for constants): the
code generator defines the macros from the plan's offsets, so the flash figures the plan reports
are the very arrays the code generator emits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import CTYPES, Graph, Op, problems
from .base import (
    DEFAULT_CHOICE,
    OPS,
    Choice,
    Operator,
    Prepared,
    check_int16,
    decode,
    decode_op,
    fail,
    load_all,
    own_types,
    unit_of,
)
from .base import unsupported as unsupported_error

CTYPE_NP = {
    "int8_t": np.int8,
    "uint8_t": np.uint8,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "float": np.float32,
}


@dataclass
class ConstArray:
    symbol: str
    ctype: str
    values: np.ndarray  # 1-D, dtype matching ctype
    op_index: int  # op that registered it (-1 for shared tensor data)
    comment: str = ""

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes)


@dataclass
class ParamStruct:
    symbol: str
    ctype: str
    fields: dict[str, object]
    op_index: int


@dataclass(frozen=True)
class PreparedOp:
    """A live op with its unit and what the unit's ``prepare`` computed."""

    op: Op
    unit: Operator
    data: Prepared


@dataclass
class LoweredOp:
    op: Op
    stmt: str
    scratch_bytes: int
    flash_bytes: int = 0
    macs: int = 0
    refusal: str | None = None  # stmt is a C expression, nonzero when it refused (why: this)


@dataclass
class Lowering:
    ops: list[LoweredOp]
    arrays: dict[str, ConstArray] = field(default_factory=dict)
    params: list[ParamStruct] = field(default_factory=list)

    @property
    def flash_bytes(self) -> int:
        """Bytes of const arrays (weights, biases, multipliers, tables)."""
        return sum(a.nbytes for a in self.arrays.values())


class _Ctx:
    """The LowerCtx handed to op lowerings (see ``base.LowerCtx``)."""

    def __init__(self, g: Graph, low: Lowering) -> None:
        self.g = g
        self.low = low
        self.op: Op | None = None
        self.scratch_bytes = 0
        self.refusal: str | None = None
        self._tensor_syms: dict[int, str] = {}

    def refuses(self, reason: str) -> None:
        self.refusal = reason

    def ptr(self, tid: int, *, const: bool = True) -> str:
        t = self.g.t(tid)
        q = "const " if const else ""
        if t.is_const:
            return f"((const {t.ctype} *){self._tensor_array(tid)})"
        return f"(({q}{t.ctype} *)TC_T{tid})"

    def _tensor_array(self, tid: int) -> str:
        sym = self._tensor_syms.get(tid)
        if sym is None:
            t = self.g.t(tid)
            sym = f"tc_const_t{tid}"
            vals = np.ascontiguousarray(t.data).reshape(-1)
            self.low.arrays[sym] = ConstArray(sym, CTYPES[t.dtype], vals, -1, f"tensor {tid}")
            self._tensor_syms[tid] = sym
        return sym

    def array(self, base: str, ctype: str, values: np.ndarray) -> str:
        assert self.op is not None
        if ctype not in CTYPE_NP:
            raise ValueError(f"unsupported array type {ctype}")
        safe = "".join(c if c.isalnum() or c == "_" else "_" for c in base)[:32]
        sym = f"tc_op{self.op.index}_{safe}"
        n = 2
        while sym in self.low.arrays:
            sym = f"tc_op{self.op.index}_{safe}{n}"
            n += 1
        vals = np.ascontiguousarray(np.asarray(values).reshape(-1).astype(CTYPE_NP[ctype]))
        self.low.arrays[sym] = ConstArray(sym, ctype, vals, self.op.index)
        return sym

    def params(self, ctype: str, fields: dict[str, object]) -> str:
        assert self.op is not None
        k = sum(1 for p in self.low.params if p.op_index == self.op.index)
        sym = f"tc_op{self.op.index}_params" + (str(k + 1) if k else "")
        self.low.params.append(ParamStruct(sym, ctype, dict(fields), self.op.index))
        return f"&{sym}"

    def scratch(self, nbytes: int) -> str:
        assert self.op is not None
        self.scratch_bytes = max(self.scratch_bytes, int(nbytes))
        return f"TC_SCRATCH{self.op.index}"


def fold_constants(g: Graph) -> None:
    """Alias ops (reshape, squeeze) of constant tensors become constants themselves."""
    load_all()
    for op in g.ops:
        unit = OPS.get(op.kind)
        if unit is None or not unit.alias or not op.inputs or op.inputs[0] < 0:
            continue  # (an absent first input is refused elsewhere: ir.problems)
        if g.t(op.inputs[0]).is_const:
            src = g.t(op.inputs[0])
            for tid in op.outputs:
                dst = g.t(tid)
                if dst.size == src.size:
                    dst.data = src.data.reshape(dst.shape)


_BAD_VALUES = (ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError)


def _named(op: Op, e: Exception) -> CompileError:
    if isinstance(e, CompileError):
        return e if e.op_index is not None else fail(op, e.reason)
    return fail(op, f"cannot lower: {e}")


def prepare_graph(g: Graph) -> list[PreparedOp]:
    """Decode options, fold constant aliases and prepare every live op (ops whose outputs are
    all constants are skipped), in model order. The graph is assumed well formed
    (``ir.validate``)."""
    decode(g)
    fold_constants(g)
    out = []
    for op in g.ops:
        if all(g.t(t).is_const for t in op.outputs):
            continue
        unit = unit_of(op)
        try:
            check_int16(op, g, unit)
            out.append(PreparedOp(op, unit, unit.prepare(op, g)))
        except (CompileError, *_BAD_VALUES) as e:
            raise _named(op, e) from None
    return out


def check_graph(g: Graph) -> list[CompileError]:
    """Every problem of a graph at once: unsupported operators, structure and types
    (``ir.problems``, which skips the unsupported ops), then each remaining op's options and
    configuration (its unit's ``attrs`` and ``prepare``); op problems in op order, between the
    graph-level ones ``ir.problems`` puts first and last. Empty when the graph can be planned.
    Decodes options like ``prepare_graph``."""
    units = load_all()
    unsupported = [op for op in g.ops if op.kind not in units]
    bad = {op.index for op in unsupported}
    structural = problems(g, bad, own_types(g))
    by_op = [unsupported_error(op) for op in unsupported]
    by_op += [e for e in structural if e.op_index is not None]
    n_head = 0  # graph-level problems ir.problems lists before any op's
    while n_head < len(structural) and structural[n_head].op_index is None:
        n_head += 1
    head = structural[:n_head]
    tail = [e for e in structural[n_head:] if e.op_index is None]
    if not head and not tail:
        bad |= {e.op_index for e in structural if e.op_index is not None}
        by_op += _op_problems(g, bad)
    # with graph-level problems, preparing ops would only add noise
    return head + sorted(by_op, key=lambda e: e.op_index or 0) + tail


def _op_problems(g: Graph, bad: set[int]) -> list[CompileError]:
    """What each op's unit refuses (options, then configuration), skipping the ops in ``bad``."""
    units = load_all()
    found = []
    for op in g.ops:
        if op.index not in bad:
            try:
                decode_op(op)
            except CompileError as e:
                found.append(e)
                bad.add(op.index)
    fold_constants(g)
    for op in g.ops:
        if op.index in bad or all(g.t(t).is_const for t in op.outputs):
            continue
        try:
            check_int16(op, g, units[op.kind])
            units[op.kind].prepare(op, g)
        except (CompileError, *_BAD_VALUES) as e:
            found.append(_named(op, e))
    return found


def lower(
    g: Graph,
    prepared: list[PreparedOp] | None = None,
    choices: dict[int, Choice] | None = None,
) -> Lowering:
    """Lower every prepared op (``prepare_graph(g)`` when not given) under the planner's
    ``choices`` (op index -> Choice; the default choice elsewhere)."""
    prepared = prepare_graph(g) if prepared is None else prepared
    choices = choices or {}
    low = Lowering(ops=[])
    ctx = _Ctx(g, low)
    for p in prepared:
        op = p.op
        choice = choices.get(op.index, DEFAULT_CHOICE)
        try:
            planned = choice.scratch_bytes(p.data)
            before = low.flash_bytes
            ctx.op = op
            ctx.scratch_bytes = 0
            ctx.refusal = None
            stmt = p.unit.lower(op, g, p.data, ctx, choice)
        except (CompileError, *_BAD_VALUES) as e:
            raise _named(op, e) from None
        if ctx.scratch_bytes > planned:
            raise RuntimeError(f"op {op.index} {op.kind} used more scratch than it prepared")
        low.ops.append(
            LoweredOp(op, stmt, planned, low.flash_bytes - before, p.data.macs, ctx.refusal)
        )
    return low
