"""The fill-like operators: FILL, ZEROS_LIKE, SHAPE, BROADCAST_ARGS, BROADCAST_TO and CAST, as
TensorFlow Lite Micro computes them.

What is known at compile time is folded (``Operator.fold``, ``passes.fold``): SHAPE always (the
input's static shape, int32), ZEROS_LIKE always (zeros of the input's type: the raw value 0, not
the zero point, as TFLM), FILL of a constant value, BROADCAST_ARGS of constant shapes, and
BROADCAST_TO / CAST of a constant. Where such a result is a graph output, or the value is an
activation, it runs: ``tc_fill`` repeats one value (firmware/kernels/tc_fill.c). FILL needs
constant dims equal to the output shape (TFLM's check); value types int8, int32, float32
(TFLM's); ZEROS_LIKE int8, int32, int64, float32. BROADCAST_TO: constant int32/int64 shape, rank
up to 5 (TFLM's), any element type, through the data-movement copy (``tc_copy_s8`` on bytes).
CAST: int8, int16, int32, float32 and bool to int8, int16, int32, float32 (cast.cc: C
conversions, integers wrap, floats truncate; TFLM has no bool output).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import CTYPES, DTYPE_BYTES, DTYPE_CODES, Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, load_all, register
from .common import inp, out
from .datamove import Copies, CopyOperator, Loop, const_ints, lower_copies, simplify, strides

FILL_TYPES = ("int8", "int32", "float32")
ZEROS_LIKE_TYPES = ("int8", "int32", "int64", "float32")
CAST_FROM = ("int8", "int16", "int32", "float32", "bool")
CAST_TO = ("int8", "int16", "int32", "float32")
BROADCAST_TO_MAX_RANK = 5  # broadcast_to.cc's kMaxDims


def _ports(op: Op, n_in: int) -> bool:
    return len(op.inputs) == n_in and len(op.outputs) == 1 and -1 not in op.inputs


def static_value(g: Graph, tid: int) -> np.ndarray | None:
    """Tensor ``tid``'s value when known at compile time: a constant's data, or what its
    producer's ``fold`` computes (a SHAPE that is also a graph output stays unfolded)."""
    t = g.t(tid)
    if t.is_const:
        return t.data
    for op in g.ops:
        if tid in op.outputs:
            unit = load_all().get(op.kind)
            vals = unit.fold(op, g) if unit is not None else None
            return None if vals is None else np.asarray(vals[op.outputs.index(tid)])
    return None


def _broadcast_args(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    try:
        return np.array(np.broadcast_shapes(tuple(a.tolist()), tuple(b.tolist())))
    except ValueError:
        return None


@dataclass(frozen=True, kw_only=True)
class Fill(Prepared):
    count: int  # copies of the value
    elem_bytes: int
    value: tuple[float, ...] | None  # a constant value (or the whole constant result), else None


@register
class FillOp(Operator):
    """FILL, ZEROS_LIKE, SHAPE, BROADCAST_ARGS: folded, or (graph outputs, FILL of an
    activation) one value repeated by ``tc_fill``."""

    kinds = ("FILL", "ZEROS_LIKE", "SHAPE", "BROADCAST_ARGS")
    checks_types = True

    def fold(self, op: Op, g: Graph) -> list[np.ndarray] | None:
        if not _ports(op, 2 if op.kind in ("FILL", "BROADCAST_ARGS") else 1):
            return None
        o = out(op, g)
        if op.kind == "SHAPE":
            return [np.array(inp(op, g).shape, np.int64)] if o.dtype == "int32" else None
        if op.kind == "ZEROS_LIKE":
            return [np.zeros(o.shape)] if o.dtype in ZEROS_LIKE_TYPES else None
        if op.kind == "BROADCAST_ARGS":
            sa, sb = static_value(g, op.inputs[0]), static_value(g, op.inputs[1])
            if sa is None or sb is None:
                return None
            r = _broadcast_args(sa.reshape(-1), sb.reshape(-1))
            return [r] if r is not None and r.size == o.size else None
        a, b = inp(op, g, 0), inp(op, g, 1)
        if not (a.is_const and b.is_const):
            return None
        if b.size != 1 or b.dtype != o.dtype or tuple(a.data.reshape(-1)) != o.shape:
            return None
        return [np.full(o.shape, b.data.reshape(-1)[0])]

    def prepare(self, op: Op, g: Graph) -> Fill:
        if not _ports(op, 2 if op.kind in ("FILL", "BROADCAST_ARGS") else 1):
            raise fail(op, f"expects {2 if op.kind in ('FILL', 'BROADCAST_ARGS') else 1} inputs")
        o = out(op, g)
        if op.kind == "FILL":
            dims, value = inp(op, g, 0), inp(op, g, 1)
            if not dims.is_const:
                raise fail(op, "the dims tensor must be constant (as TFLM requires)")
            if tuple(int(v) for v in dims.data.reshape(-1)) != tuple(o.shape):
                raise fail(op, f"dims {dims.data.reshape(-1).tolist()} differ from the output")
            if value.size != 1 or value.dtype != o.dtype or o.dtype not in FILL_TYPES:
                raise fail(op, f"value must be one {'/'.join(FILL_TYPES)} of the output's type")
            vals = None if not value.is_const else tuple(value.data.reshape(-1).tolist())
            return Fill(macs=o.size, count=o.size, elem_bytes=DTYPE_BYTES[o.dtype], value=vals)
        folded = self.fold(op, g)
        if folded is None:
            raise fail(op, f"{o.dtype} output or these inputs are not supported")
        vals = tuple(np.asarray(folded[0]).reshape(-1).tolist())
        if op.kind == "ZEROS_LIKE":
            return Fill(macs=o.size, count=o.size, elem_bytes=DTYPE_BYTES[o.dtype], value=(0,))
        return Fill(macs=o.size, count=1, elem_bytes=o.nbytes, value=vals)

    def lower(self, op: Op, g: Graph, d: Fill, ctx: LowerCtx, choice: Choice) -> str:
        o = out(op, g)
        dst = ctx.ptr(op.outputs[0], const=False)
        if d.value is None:  # FILL of an activation
            src = ctx.ptr(op.inputs[1])
        else:
            n = len(d.value)
            src = ctx.array(op.kind.lower(), CTYPES[o.dtype], np.array(d.value).reshape(n))
        return f"tc_fill({d.count}, {d.elem_bytes}, {src}, {dst});"


@register
class BroadcastToOp(CopyOperator):
    kinds = ("BROADCAST_TO",)
    checks_types = True

    def fold(self, op: Op, g: Graph) -> list[np.ndarray] | None:
        if not _ports(op, 2) or not inp(op, g).is_const:
            return None
        x, o = inp(op, g), out(op, g)
        try:
            return [np.broadcast_to(x.data, o.shape)] if x.dtype == o.dtype else None
        except ValueError:
            return None

    def prepare(self, op: Op, g: Graph) -> Copies:
        if not _ports(op, 2):
            raise fail(op, "expects an input, a shape tensor and one output")
        x, o = inp(op, g), out(op, g)
        shape = const_ints(op, g, 1, "shape")
        if x.dtype != o.dtype:
            raise fail(op, f"input is {x.dtype}, output {o.dtype}")
        if len(o.shape) > BROADCAST_TO_MAX_RANK:
            raise fail(op, f"rank above {BROADCAST_TO_MAX_RANK} is not supported (TFLM)")
        if tuple(shape.tolist()) != tuple(o.shape):
            raise fail(op, f"shape {shape.tolist()} differs from the output {list(o.shape)}")
        try:
            if np.broadcast_shapes(x.shape, o.shape) != tuple(o.shape):
                raise ValueError
        except ValueError:
            raise fail(op, f"{list(x.shape)} does not broadcast to {list(o.shape)}") from None
        eb = DTYPE_BYTES[x.dtype]
        ext = (1,) * (len(o.shape) - len(x.shape)) + tuple(x.shape)
        st = strides(ext)
        loops = [Loop(n, 0 if e == 1 else s * eb) for n, e, s in zip(o.shape, ext, st, strict=True)]
        loops.append(Loop(eb, 1))
        return Copies(macs=o.size, copies=(simplify(op, 0, loops),))

    def lower(self, op: Op, g: Graph, d: Copies, ctx: LowerCtx, choice: Choice) -> str:
        stmt = lower_copies(op, ctx, d)
        if inp(op, g).dtype != "int8":  # the byte copy takes int8_t pointers
            src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
            stmt = stmt.replace(src, f"(const int8_t *){src}").replace(dst, f"(int8_t *){dst}")
        return stmt


@dataclass(frozen=True, kw_only=True)
class Cast(Prepared):
    src: str
    dst: str


@register
class CastOp(Operator):
    kinds = ("CAST",)
    checks_types = True

    def fold(self, op: Op, g: Graph) -> list[np.ndarray] | None:
        if not _ports(op, 1) or not inp(op, g).is_const:
            return None
        x, o = inp(op, g), out(op, g)
        if x.dtype not in CAST_FROM or o.dtype not in CAST_TO or x.size != o.size:
            return None
        v = x.data.astype(np.float32 if x.dtype == "float32" else np.int64)
        if x.dtype == "float32" and o.dtype != "float32":
            v = np.trunc(v).astype(np.int64)
        return [v.astype(o.dtype)]

    def prepare(self, op: Op, g: Graph) -> Cast:
        if not _ports(op, 1):
            raise fail(op, "expects one input and one output")
        x, o = inp(op, g), out(op, g)
        if x.dtype not in CAST_FROM:
            raise fail(op, f"{x.dtype} input is not supported ({'/'.join(CAST_FROM)})")
        if o.dtype not in CAST_TO:
            raise fail(op, f"{o.dtype} output is not supported ({'/'.join(CAST_TO)}, as TFLM)")
        if x.size != o.size:
            raise fail(op, f"input has {x.size} elements, output {o.size}")
        return Cast(macs=o.size, src=x.dtype, dst=o.dtype)

    def lower(self, op: Op, g: Graph, d: Cast, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params(
            "tc_cast_params_t",
            {"size": out(op, g).size, "from": DTYPE_CODES[d.src], "to": DTYPE_CODES[d.dst]},
        )
        src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
        return f"tc_cast({p}, {src}, {dst});"
