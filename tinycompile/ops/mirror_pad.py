"""MIRROR_PAD (int8), as TFLM's mirror_pad.cc: every output index of a dim maps to an input
index, mirrored at the edges without repeating the edge (REFLECT) or repeating it (SYMMETRIC);
the mapping (TFLM's, clamped as TFLM clamps it) is computed here per dim and becomes offset
tables of ``tc_copy_s8`` (firmware/kernels/tc_copy.c). Bytes move, nothing is requantized.
Constant int32/int64 paddings only; TFLM's limits (at most the dim, less than it for REFLECT,
no negative padding) are checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp

MODES = {0: "REFLECT", 1: "SYMMETRIC"}


def source_index(j: int, before: int, size: int, offset: int) -> int:
    """The input index output index ``j`` of a dim reads (``offset``: 1 REFLECT, 0 SYMMETRIC)."""
    if j < before:
        edge = before + offset - 1
        return edge - min(j, edge - offset)
    j -= before
    if j >= size:
        edge = size - 1 - offset
        return edge - min(j - size, edge)
    return j


@register
class MirrorPadOp(dm.CopyOperator):
    kinds = ("MIRROR_PAD",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"mode": MODES.get(int(options.get("mode", 0)), "?")}

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects an input, a paddings tensor and 1 output")
        dm.check_int8_io(op, g, [0], [0])
        mode = op.attrs.get("mode", "REFLECT")
        if mode not in MODES.values():
            raise fail(op, f"mirror padding mode {mode} is not supported")
        offset = 1 if mode == "REFLECT" else 0
        shape = inp(op, g, 0).shape
        pads = dm.const_ints(op, g, 1, "paddings")
        if pads.size != 2 * len(shape):
            raise fail(op, f"{pads.size} padding values for a rank-{len(shape)} input")
        loops, out_shape = [], []
        for d, (n, s) in enumerate(zip(shape, dm.strides(shape), strict=True)):
            before, after = int(pads[2 * d]), int(pads[2 * d + 1])
            if min(before, after) < 0 or max(before, after) > n - offset:
                raise fail(
                    op, f"padding ({before}, {after}) of a dim of {n} is out of {mode}'s range"
                )
            m = n + before + after
            out_shape.append(m)
            if before == after == 0:
                loops.append(dm.Loop(n, s))
            else:
                table = tuple(source_index(j, before, n, offset) * s for j in range(m))
                loops.append(dm.Loop(m, table=table))
        dm.check_shape(op, g, 0, out_shape)
        return dm.Copies(macs=0, copies=(dm.simplify(op, 0, loops),))
