"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (int8), as TFLM's space_to_batch_nd.cc and
batch_to_space_nd.cc (reference space_to_batch_nd.h / batch_to_space_nd.h): rank 3 or 4 NHWC
(rank 3 as a width of 1), constant int32 block shape and paddings / crops. Older converters emit
them around a dilated CONV_2D. Bytes move, nothing is requantized: output batch
``(sh * bw + sw) * B + b`` holds the input pixels ``(h * bh + sh, w * bw + sw)``, which is one
``tc_copy_s8`` (firmware/kernels/tc_copy.c) of six loops for SPACE_TO_BATCH_ND and one with
row and column offset tables (the crops folded in) for BATCH_TO_SPACE_ND.

TFLM pads SPACE_TO_BATCH_ND with ``SpaceToBatchParams::output_offset``, which its kernel never
sets (uninitialised arena memory: runs of TFLM's interpreter were seen to pad with 0, 80, 115
and 116; tflite-micro issue 1646), so a non-zero padding has no reference to be bit-exact with
and is refused.
"""

from __future__ import annotations

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp


def _geometry(op: Op, g: Graph) -> tuple[tuple[int, int, int, int], int, int, list[int]]:
    """(B, H, W, C) of the input, block (bh, bw), and (top, bottom, left, right) paddings."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise fail(op, "expects an input, a block shape, paddings/crops and 1 output")
    dm.check_int8_io(op, g, [0], [0])
    shape = inp(op, g, 0).shape
    rank = len(shape)
    if rank not in (3, 4):
        raise fail(op, f"rank {rank} input (TFLM takes rank 3 or 4)")
    spatial = rank - 2
    block = [int(v) for v in dm.const_ints(op, g, 1, "block shape")]
    pads = [int(v) for v in dm.const_ints(op, g, 2, "paddings/crops")]
    if len(block) != spatial or len(pads) != 2 * spatial:
        raise fail(op, f"block shape {block} / paddings {pads} do not fit a rank-{rank} input")
    if min(block) < 1 or min(pads) < 0:
        raise fail(op, f"block shape {block} / paddings {pads} must be positive")
    if rank == 3:
        b, h, c = shape
        return (b, h, 1, c), block[0], 1, [*pads, 0, 0]
    return tuple(shape), block[0], block[1], pads


def _out_shape(op: Op, g: Graph, dims: list[int]) -> None:
    """The output has NHWC ``dims`` (without the width of a rank-3 tensor)."""
    if len(inp(op, g, 0).shape) == 3:
        dims = [dims[0], dims[1], dims[3]]
    dm.check_shape(op, g, 0, dims)


@register
class SpaceToBatchOp(dm.CopyOperator):
    kinds = ("SPACE_TO_BATCH_ND",)

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        (b, h, w, c), bh, bw, pads = _geometry(op, g)
        if any(pads):
            raise fail(
                op,
                f"paddings {pads}: TFLM pads with an uninitialised value (its output_offset is "
                "never set), so there is no reference to be bit-exact with",
            )
        if h % bh or w % bw:
            raise fail(op, f"spatial size {h}x{w} is not a multiple of the block {bh}x{bw}")
        oh, ow = h // bh, w // bw
        _out_shape(op, g, [b * bh * bw, oh, ow, c])
        loops = [
            dm.Loop(bh, w * c),
            dm.Loop(bw, c),
            dm.Loop(b, h * w * c),
            dm.Loop(oh, bh * w * c),
            dm.Loop(ow, bw * c),
            dm.Loop(c, 1),
        ]
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))


@register
class BatchToSpaceOp(dm.CopyOperator):
    kinds = ("BATCH_TO_SPACE_ND",)

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        (ib, h, w, c), bh, bw, (top, bottom, left, right) = _geometry(op, g)
        if ib % (bh * bw):
            raise fail(op, f"input batch {ib} is not a multiple of the block {bh}x{bw}")
        b = ib // (bh * bw)
        oh, ow = h * bh - top - bottom, w * bw - left - right
        if oh < 0 or ow < 0:
            raise fail(op, f"crops {[top, bottom, left, right]} exceed the output")
        _out_shape(op, g, [b, oh, ow, c])
        batch = h * w * c  # input bytes per batch
        rows = tuple(
            ((y + top) % bh) * bw * b * batch + ((y + top) // bh) * w * c for y in range(oh)
        )
        cols = tuple(((x + left) % bw) * b * batch + ((x + left) // bw) * c for x in range(ow))
        loops = [dm.Loop(b, batch), dm.Loop(oh, table=rows), dm.Loop(ow, table=cols), dm.Loop(c, 1)]
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
