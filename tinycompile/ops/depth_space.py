"""DEPTH_TO_SPACE and SPACE_TO_DEPTH (int8, NHWC), as TFLM's depth_to_space.cc and
space_to_depth.cc: with block b, DEPTH_TO_SPACE moves channel block (i, j) of each pixel to
pixel (h*b + i, w*b + j); SPACE_TO_DEPTH is its inverse. Bytes move, nothing is requantized. Both
are six-loop views of the input (``datamove``), copied by ``tc_copy_s8``
(firmware/kernels/tc_copy.c). TFLM wants rank 4, a positive block, and channels (DEPTH_TO_SPACE)
or height and width (SPACE_TO_DEPTH) divisible by it; so does this unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp


@register
class DepthSpaceOp(dm.CopyOperator):
    kinds = ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"block_size": int(options.get("block_size", 0))}

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            raise fail(op, "expects 1 input and 1 output")
        dm.check_int8_io(op, g, [0], [0])
        shape = inp(op, g, 0).shape
        b = op.attrs.get("block_size", 0)
        if len(shape) != 4:
            raise fail(op, f"rank {len(shape)} input (TFLM takes rank 4, NHWC)")
        if b < 1:
            raise fail(op, f"block size {b}")
        n, h, w, c = shape
        L = dm.Loop
        if op.kind == "DEPTH_TO_SPACE":
            if c % (b * b):
                raise fail(op, f"{c} channels are not divisible by block {b} squared")
            co = c // (b * b)
            dm.check_shape(op, g, 0, [n, h * b, w * b, co])
            # output order (n, h, i, w, j, c')
            loops = [L(n, h * w * c), L(h, w * c), L(b, b * co), L(w, c), L(b, co), L(co, 1)]
        else:
            if h % b or w % b:
                raise fail(op, f"{h}x{w} is not divisible by block {b}")
            dm.check_shape(op, g, 0, [n, h // b, w // b, c * b * b])
            # output order (n, h', w', i, j, c)
            loops = [L(n, h * w * c), L(h // b, b * w * c), L(w // b, b * c)]
            loops += [L(b, w * c), L(b, c), L(c, 1)]
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
