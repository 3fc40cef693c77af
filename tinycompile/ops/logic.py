"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT on bool tensors and SELECT_V2 (bool condition, int8 or
int16 values), as TensorFlow Lite Micro computes them.

LOGICAL_AND / LOGICAL_OR broadcast through TFLM's ``BroadcastBinaryFunction4DSlow`` (broadcasting
above rank 4 is refused), LOGICAL_NOT is elementwise.cc's bool case. SELECT_V2 (select.cc) copies
``condition ? x : y`` with no requantization (TFLM checks none; the converter gives x, y and the
output one quantization), broadcasting the three through ``BroadcastSelect5DSlow`` (above rank 5
refused). TFLM has no SELECT (v1) kernel. Kernels: firmware/kernels/tc_logic.c.
"""

from __future__ import annotations

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out
from .nary import check_broadcast, loop_fields, require_dtype


def _broadcast_rank(op: Op, g: Graph, limit: int) -> None:
    """TFLM's slow broadcast paths have a fixed rank: refuse broadcasting above it."""
    shapes = {tuple(g.t(t).shape) for t in op.inputs}
    if len(shapes) > 1 and len(out(op, g).shape) > limit:
        raise fail(op, f"broadcasting above rank {limit} is not supported (TFLM)")


def _bools(op: Op, g: Graph) -> None:
    for t in [*op.inputs, *op.outputs]:
        require_dtype(op, g.t(t), ("bool",), "input" if t in op.inputs else "output")


@register
class LogicalOp(Operator):
    kinds = ("LOGICAL_AND", "LOGICAL_OR")
    elementwise = True
    checks_types = True

    def prepare(self, op: Op, g: Graph) -> Prepared:
        check_broadcast(op, g, 2)
        _bools(op, g)
        _broadcast_rank(op, g, 4)
        return Prepared(macs=out(op, g).size)

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        fields = loop_fields(ctx, [inp(op, g, 0), inp(op, g, 1)], out(op, g))
        fields["is_or"] = int(op.kind == "LOGICAL_OR")
        p = ctx.params("tc_logical_params_t", fields)
        args = f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}"
        return f"tc_logical_b({p}, {args}, {ctx.ptr(op.outputs[0], const=False)});"


@register
class LogicalNotOp(Operator):
    kinds = ("LOGICAL_NOT",)
    elementwise = True
    checks_types = True

    def prepare(self, op: Op, g: Graph) -> Prepared:
        if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
            raise fail(op, "expects one input and one output")
        _bools(op, g)
        if inp(op, g).shape != out(op, g).shape:
            raise fail(op, "input and output shapes differ")
        return Prepared(macs=out(op, g).size)

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
        return f"tc_logical_not_b({out(op, g).size}, {src}, {dst});"


@register
class SelectOp(Operator):
    kinds = ("SELECT_V2",)
    checks_types = True

    def prepare(self, op: Op, g: Graph) -> Prepared:
        check_broadcast(op, g, 3)
        c, x, y, o = inp(op, g, 0), inp(op, g, 1), inp(op, g, 2), out(op, g)
        require_dtype(op, c, ("bool",), "condition")
        require_dtype(op, x, ("int8", "int16"), "value")
        for t in (y, o):
            if t.dtype != x.dtype:
                raise fail(op, f"tensor {t.id} is {t.dtype}, not {x.dtype} as input 1")
            require_dtype(op, t, (x.dtype,), "value")
        if not (c.size == x.size == y.size == o.size == 1):
            _broadcast_rank(op, g, 5)
        return Prepared(macs=o.size)

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        ins = [inp(op, g, i) for i in range(3)]
        p = ctx.params("tc_select_params_t", loop_fields(ctx, ins, out(op, g)))
        fn = "tc_select_s16" if ins[1].dtype == "int16" else "tc_select_s8"
        args = ", ".join(ctx.ptr(t) for t in op.inputs)
        return f"{fn}({p}, {args}, {ctx.ptr(op.outputs[0], const=False)});"
