"""Lowering pass: validate every op and turn it into one C statement plus const data.

Tensor pointers in the statements are symbolic (``TC_T<id>`` macros for activations, array
symbols for constants): the planner decides where activations live, and the code generator
defines the macros from the plan. So lowering runs once, before planning, and the flash figures
the planner reports are the very arrays the code generator will emit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import CTYPES, Graph, Op
from ..ops import OPS, load_all

CTYPE_NP = {
    "int8_t": np.int8,
    "uint8_t": np.uint8,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
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
    alias: bool
    inplace: bool
    macs: int
    flash_bytes: int = 0


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
    """The LowerCtx handed to op lowerings (see tinycompile.ops.LowerCtx)."""

    def __init__(self, g: Graph, low: Lowering) -> None:
        self.g = g
        self.low = low
        self.op: Op | None = None
        self.scratch_bytes = 0
        self._tensor_syms: dict[int, str] = {}

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
        d = OPS.get(op.kind)
        if d is not None and d.alias and op.inputs and g.t(op.inputs[0]).is_const:
            src = g.t(op.inputs[0])
            for tid in op.outputs:
                dst = g.t(tid)
                if dst.size == src.size:
                    dst.data = src.data.reshape(dst.shape)


def lower(g: Graph) -> Lowering:
    """Check and lower every op; raise CompileError naming the first op that cannot be."""
    load_all()
    fold_constants(g)
    low = Lowering(ops=[])
    ctx = _Ctx(g, low)
    live_ops = [op for op in g.ops if not all(g.t(t).is_const for t in op.outputs)]
    for op in live_ops:
        d = OPS.get(op.kind)
        if d is None:
            raise CompileError(
                f"operator {op.kind} is not supported", op_index=op.index, op_kind=op.kind
            )
        try:
            d.check(op, g)
            before = low.flash_bytes
            ctx.op = op
            ctx.scratch_bytes = 0
            stmt = d.lower(op, g, ctx)
            scratch = max(ctx.scratch_bytes, d.scratch(op, g))
            lo = LoweredOp(op, stmt, scratch, d.alias, d.inplace, int(d.macs(op, g)))
            lo.flash_bytes = low.flash_bytes - before
        except CompileError as e:
            if e.op_index is None:
                raise CompileError(e.reason, op_index=op.index, op_kind=op.kind) from None
            raise
        except (ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError) as e:
            raise CompileError(f"cannot lower: {e}", op_index=op.index, op_kind=op.kind) from None
        low.ops.append(lo)
    return low
