"""ONNX_RESIZE_NEAREST: onnxruntime's Resize in nearest mode on NHWC int8 (bytes move, nothing is
requantized). The source row and column of every output index are computed here once, in
float32 as onnxruntime's upsample code computes them: the original coordinate from the
``coordinate_transformation_mode`` (half_pixel, asymmetric, pytorch_half_pixel,
tf_half_pixel_for_nn, align_corners) with ``scale = float(out) / float(in)`` (or the model's
scale), then the ``nearest_mode`` (round_prefer_floor, round_prefer_ceil, floor, ceil, or
Resize-10's "simple": truncation when upsampling, the ceiling when downsampling), clamped to the
input. An axis whose scale is exactly 1 is copied one to one, without the transformation (as
onnxruntime does; ``tf_half_pixel_for_nn`` with ``ceil`` would otherwise shift it). They become
offset tables of ``tc_copy_s8`` (firmware/kernels/tc_copy.c).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp, out

F32 = np.float32
MODES = ("half_pixel", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "align_corners")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


def original(i: int, scale: np.float32, n_out: int, n_in: int, mode: str) -> np.float32:
    """The input coordinate of output index ``i`` (float32)."""
    x = F32(i)
    if mode == "half_pixel":
        return F32(F32(F32(x + F32(0.5)) / scale) - F32(0.5))
    if mode == "asymmetric":
        return F32(x / scale)
    if mode == "pytorch_half_pixel":
        return F32(F32(F32(x + F32(0.5)) / scale) - F32(0.5)) if n_out > 1 else F32(0.0)
    if mode == "tf_half_pixel_for_nn":
        return F32(F32(x + F32(0.5)) / scale)
    if n_out == 1:  # align_corners
        return F32(0.0)
    return F32(F32(x * F32(n_in - 1)) / F32(n_out - 1))


def nearest_index(v: np.float32, mode: str, n_in: int, down: bool = False) -> int:
    """The nearest input index of coordinate ``v``, clamped to [0, n_in) (``down``: the axis
    shrinks, for "simple")."""
    f = float(v)
    if mode == "round_prefer_floor":
        k = math.floor(f) if f == int(f) + 0.5 else _round_away(f)
    elif mode == "round_prefer_ceil":
        k = math.ceil(f) if f == int(f) + 0.5 else _round_away(f)
    elif mode == "floor":
        k = math.floor(f)
    elif mode == "simple":
        k = math.ceil(f) if down else math.trunc(f)
    else:
        k = math.ceil(f)
    return min(max(int(k), 0), n_in - 1)


def source_indices(scale: np.float32, n_out: int, n_in: int, mode: str, near: str) -> list[int]:
    """The input index of each output index along one axis (one to one at scale 1)."""
    if scale == F32(1.0) and n_out == n_in:
        return list(range(n_out))
    return [nearest_index(original(i, scale, n_out, n_in, mode), near, n_in, bool(scale < 1))
            for i in range(n_out)]  # fmt: skip


def _round_away(f: float) -> int:
    """std::round: halves away from zero."""
    return int(math.floor(abs(f) + 0.5)) * (1 if f >= 0 else -1)


@register
class OnnxResizeNearestOp(dm.CopyOperator):
    kinds = ("ONNX_RESIZE_NEAREST",)

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        dm.check_int8_io(op, g, [0], [0])
        x, y = inp(op, g, 0), out(op, g)
        if len(x.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
            raise fail(op, "resizes NHWC height and width only")
        mode, near = op.attrs["coordinate_mode"], op.attrs["nearest_mode"]
        if mode not in MODES or near not in NEAREST:
            raise fail(op, f"coordinate mode {mode} / nearest mode {near} is not supported")
        n, h, w, c = x.shape
        _, oh, ow, _ = y.shape
        sh, sw = (F32(s) for s in op.attrs["scales"])
        rows = tuple(k * w * c for k in source_indices(sh, oh, h, mode, near))
        cols = tuple(k * c for k in source_indices(sw, ow, w, mode, near))
        loops = [dm.Loop(n, h * w * c), dm.Loop(oh, table=rows), dm.Loop(ow, table=cols)]
        loops.append(dm.Loop(c, 1))
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
