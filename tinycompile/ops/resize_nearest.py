"""RESIZE_NEAREST_NEIGHBOR (int8 and int16), as TFLM's resize_nearest_neighbor.cc (reference
resize_nearest_neighbor.h): output pixel (y, x) copies the input pixel of ``GetNearestNeighbor``
along each axis, computed here once in float32 exactly as TFLM computes it (align_corners,
half_pixel_centers). The source rows and columns become offset tables of ``tc_copy_s8``
(firmware/kernels/tc_copy.c); bytes move, nothing is requantized. TFLM wants a rank-4 input and a
constant int32 size of 2 elements, so does this unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp


def nearest(i: int, n_in: int, n_out: int, align_corners: bool, half_pixel: bool) -> int:
    """TFLM's GetNearestNeighbor: the source index of output index ``i`` (float32 maths)."""
    f32 = np.float32
    if align_corners and n_out > 1:
        scale = f32(n_in - 1) / f32(n_out - 1)
    else:
        scale = f32(n_in) / f32(n_out)
    v = (f32(i) + f32(0.5 if half_pixel else 0.0)) * scale
    if align_corners:
        r = np.floor(v)
        src = int(r) + (1 if v - r >= f32(0.5) else 0)  # std::round: halves away from zero
    else:
        src = int(np.floor(v))
    src = min(src, n_in - 1)
    return max(0, src) if half_pixel else src


@register
class ResizeNearestOp(dm.CopyOperator):
    kinds = ("RESIZE_NEAREST_NEIGHBOR",)
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "align_corners": bool(options.get("align_corners", False)),
            "half_pixel_centers": bool(options.get("half_pixel_centers", False)),
        }

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects an input, a size and 1 output")
        dm.check_io(op, g, [0], [0], dm.INT8_16)
        shape = inp(op, g, 0).shape
        if len(shape) != 4:
            raise fail(op, f"rank {len(shape)} input (TFLM resizes rank-4 NHWC only)")
        size = dm.const_ints(op, g, 1, "size")
        if size.size != 2 or min(size) < 1:
            raise fail(op, f"size {size.tolist()} is not 2 positive values")
        n, h, w, c = shape
        oh, ow = int(size[0]), int(size[1])
        dm.check_shape(op, g, 0, [n, oh, ow, c])
        ac, hp = op.attrs.get("align_corners", False), op.attrs.get("half_pixel_centers", False)
        rows = tuple(nearest(y, h, oh, ac, hp) * w * c for y in range(oh))
        cols = tuple(nearest(x, w, ow, ac, hp) * c for x in range(ow))
        loops = [dm.Loop(n, h * w * c), dm.Loop(oh, table=rows), dm.Loop(ow, table=cols)]
        loops.append(dm.Loop(c, 1))
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
