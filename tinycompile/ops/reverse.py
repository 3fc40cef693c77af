"""REVERSE_V2 (int8, and int16 as TFLM), as TFLM's reverse.cc: the constant axes (int32,
negative ones counted from the end) run backwards; TFLM reverses only contiguous axes and
refuses others at run time, so they are refused here. Bytes move, nothing is requantized: each
reversed axis becomes a loop of negative stride (``datamove``), kernel ``tc_copy_s8``
(firmware/kernels/tc_copy.c); an int16 element is a run of 2 bytes.
"""

from __future__ import annotations

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp

MAX_RANK = 8  # TFLM's kMaxDimensions


def element_bytes(op: Op, g: Graph) -> int:
    """Bytes per element of the int8 or int16 data (input 0 and output 0 of one type)."""
    i, o = inp(op, g, 0), g.t(op.outputs[0])
    if i.dtype != o.dtype or i.dtype not in ("int8", "int16"):
        raise fail(op, f"{i.dtype} -> {o.dtype} is not supported (int8 or int16, one type)")
    return 2 if i.dtype == "int16" else 1


@register
class ReverseOp(dm.CopyOperator):
    kinds = ("REVERSE_V2",)
    int16 = True  # TFLM reverses int16 too: the same loops over 2-byte elements

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects an input, an axis tensor and 1 output")
        element_bytes(op, g)  # int8 or int16, one type: views count elements (datamove)
        shape = inp(op, g, 0).shape
        rank = len(shape)
        if rank > MAX_RANK:
            raise fail(op, f"rank {rank} input (TFLM reverses up to rank {MAX_RANK})")
        if inp(op, g, 1).dtype != "int32":
            raise fail(op, f"{inp(op, g, 1).dtype} axis tensor (TFLM takes int32)")
        axes = sorted(int(a) + rank if a < 0 else int(a) for a in dm.const_ints(op, g, 1, "axis"))
        if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
            raise fail(op, f"axes {axes} out of range for rank {rank}")
        if axes and axes != list(range(axes[0], axes[-1] + 1)):
            raise fail(op, f"non-contiguous axes {axes} (TFLM refuses them)")
        dm.check_shape(op, g, 0, shape)
        st = dm.strides(shape)
        offset = sum((shape[a] - 1) * st[a] for a in axes)
        loops = [
            dm.Loop(n, -s if d in axes else s)
            for d, (n, s) in enumerate(zip(shape, st, strict=True))
        ]
        return dm.Copies(copies=(dm.simplify(op, offset, loops),))
