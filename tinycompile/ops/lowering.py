"""Lowering: every prepared op (``prepare``) to one C statement plus const data, following the
planner's ``Choice`` per op; run once per build, after planning (``pipeline``). Tensor pointers
in the statements are symbolic (``TC_T<id>`` macros for activations, array symbols for
constants): the code generator defines the macros from the plan's offsets, so the flash figures
the plan reports are the very arrays the code generator emits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import CTYPES, Graph, Op
from .base import DEFAULT_CHOICE, Choice
from .cstructs import check_params
from .prepare import _BAD_VALUES, PreparedOp, named

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
        fields = check_params(ctype, fields)  # every field of the C typedef, in its order
        k = sum(1 for p in self.low.params if p.op_index == self.op.index)
        sym = f"tc_op{self.op.index}_params" + (str(k + 1) if k else "")
        self.low.params.append(ParamStruct(sym, ctype, dict(fields), self.op.index))
        return f"&{sym}"

    def scratch(self, nbytes: int) -> str:
        assert self.op is not None
        self.scratch_bytes = max(self.scratch_bytes, int(nbytes))
        return f"TC_SCRATCH{self.op.index}"


def lower(
    g: Graph, prepared: list[PreparedOp], choices: dict[int, Choice] | None = None
) -> Lowering:
    """Lower every prepared op under the planner's ``choices`` (op index -> Choice; the default
    choice elsewhere), in the order given."""
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
            raise named(op, e) from None
        if ctx.scratch_bytes > planned:
            raise RuntimeError(f"op {op.index} {op.kind} used more scratch than it prepared")
        low.ops.append(
            LoweredOp(op, stmt, planned, low.flash_bytes - before, p.data.macs, ctx.refusal)
        )
    return low
