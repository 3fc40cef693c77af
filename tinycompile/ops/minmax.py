"""MAXIMUM and MINIMUM (int8, broadcasting), as TFLM's maximum_minimum.cc computes them: the raw
int8 values compared, no requantization (the converter gives inputs and output one
quantization; TFLM checks nothing and neither do we). TFLM broadcasts through a rank-5
``NdArrayDesc``: broadcasting above rank 5 is refused. Kernels: ``tc_maximum_s8``,
``tc_minimum_s8`` (firmware/kernels/tc_binary.c). Run in place over input 0 when sizes allow.
"""

from __future__ import annotations

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import inp, out

MAX_BROADCAST_RANK = 5  # reference_ops::MaximumMinimumBroadcastSlow's N


def check_broadcast_rank(op: Op, g: Graph, limit: int) -> None:
    """TFLM's slow broadcast paths have a fixed rank: refuse broadcasting above it."""
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if tuple(a.shape) != tuple(b.shape) and len(o.shape) > limit:
        raise fail(op, f"broadcasting above rank {limit} is not supported (TFLM)")


@register
class MinMaxOp(Operator):
    kinds = ("MAXIMUM", "MINIMUM")
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Prepared:
        check_binary(op, g)
        check_broadcast_rank(op, g, MAX_BROADCAST_RANK)
        return Prepared(macs=out(op, g).size)

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        fn = f"tc_{op.kind.lower()}_s8"
        p = ctx.params("tc_bcast_params_t", shape_fields(op, g, ctx))
        return binary_call(fn, op, ctx, p)
