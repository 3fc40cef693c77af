"""RESHAPE, SQUEEZE, EXPAND_DIMS: aliases. The planner gives the output the input's bytes, so
the lowering is only a comment; reshapes of constants are folded at compile time."""

from __future__ import annotations

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out


@register
class ReshapeOp(Operator):
    kinds = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
    alias = True
    int16 = True  # bytes are bytes: any element type

    def prepare(self, op: Op, g: Graph) -> Prepared:
        if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
            raise fail(op, "expects a data input and 1 output")
        x, o = inp(op, g, 0), out(op, g)
        if x.dtype != o.dtype:
            raise fail(op, f"input type {x.dtype} differs from output type {o.dtype}")
        if x.size != o.size:
            raise fail(op, f"input has {x.size} elements, output {o.size}")
        return Prepared()

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        shape = "x".join(str(d) for d in out(op, g).shape) or "scalar"
        return f"/* {op.kind.lower()}: output aliases input ({shape}) */"
