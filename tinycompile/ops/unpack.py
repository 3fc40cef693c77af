"""UNPACK (int8 and int16), as TFLM's unpack.cc: output k is the input's slice k along ``axis``,
that dim removed; bytes move, nothing is requantized. One ``tc_copy_s8`` call per output
(firmware/kernels/tc_copy.c), loops from ``datamove``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp


@register
class UnpackOp(dm.CopyOperator):
    kinds = ("UNPACK",)
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"num": int(options.get("num", 0)), "axis": int(options.get("axis", 0))}

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 1 or not op.outputs:
            raise fail(op, "expects 1 input and at least 1 output")
        dm.check_io(op, g, [0], list(range(len(op.outputs))), dm.INT8_16)
        shape = inp(op, g, 0).shape
        rank = len(shape)
        axis = op.attrs.get("axis", 0)
        a = axis + rank if axis < 0 else axis
        if not 0 <= a < rank:
            raise fail(op, f"axis {axis} out of range for rank {rank}")
        if shape[a] != len(op.outputs) or op.attrs.get("num", shape[a]) != shape[a]:
            raise fail(op, f"{len(op.outputs)} outputs for an axis of {shape[a]}")
        st = dm.strides(shape)
        out_shape = [*shape[:a], *shape[a + 1 :]]
        loops = [dm.Loop(c, s) for c, s in zip(out_shape, st[:a] + st[a + 1 :], strict=True)]
        copies = []
        for k in range(len(op.outputs)):
            dm.check_shape(op, g, k, out_shape)
            copies.append(dm.simplify(op, k * st[a], loops, output=k))
        return dm.Copies(copies=tuple(copies))
