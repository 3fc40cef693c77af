"""TRANSPOSE (int8 and int16), as TFLM's transpose.cc (reference transpose.h): output dim i is input
dim ``perm[i]``; bytes move, nothing is requantized. The constant permutation becomes compile-time
copy loops (``datamove``); kernel: ``tc_copy_s8`` (firmware/kernels/tc_copy.c). TFLM refuses a
non-constant permutation, one that is not a permutation of the input's dims, and inputs of rank
above 5 (transpose_common.cc), so these are refused here too.
"""

from __future__ import annotations

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp

MAX_RANK = 5  # TFLM: "Transpose op only supports 1D-5D input arrays"


@register
class TransposeOp(dm.CopyOperator):
    kinds = ("TRANSPOSE",)
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects an input, a permutation and 1 output")
        dm.check_io(op, g, [0], [0], dm.INT8_16)
        shape = inp(op, g, 0).shape
        rank = len(shape)
        if rank > MAX_RANK:
            raise fail(op, f"rank {rank} input (TFLM transposes up to rank {MAX_RANK})")
        perm = [int(p) for p in dm.const_ints(op, g, 1, "permutation")]
        if sorted(perm) != list(range(rank)):
            raise fail(op, f"permutation {perm} is not a permutation of {rank} dims")
        dm.check_shape(op, g, 0, [shape[p] for p in perm])
        st = dm.strides(shape)
        loops = [dm.Loop(shape[p], st[p]) for p in perm]
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
