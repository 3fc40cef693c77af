"""GATHER_ND (int8 params, constant int32 indices), as TFLM's gather_nd.cc: the last dim of the
indices holds ``nd`` coordinates into the leading dims of params; each index row selects one
slice of the remaining dims. Bytes move, nothing is requantized: the slices' offsets are
computed here and become an offset table of ``tc_copy_s8`` (firmware/kernels/tc_copy.c). TFLM
checks only that a slice lies inside params as a whole (a coordinate beyond its dim but inside
the flat size is accepted) and fails at run time otherwise; the same check refuses here.
Indices computed at run time are refused.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp

MAX_INDICES_ND = 5  # TFLM's MAX_INDICES_ND


@register
class GatherNdOp(dm.CopyOperator):
    kinds = ("GATHER_ND",)

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects params, indices and 1 output")
        dm.check_int8_io(op, g, [0], [0])
        p, it = inp(op, g, 0).shape, inp(op, g, 1)
        if it.dtype != "int32":
            raise fail(op, f"{it.dtype} indices are not supported (TFLM takes int32)")
        if len(p) < 1 or len(it.shape) < 1:
            raise fail(op, "params and indices must be at least vectors")
        nd = int(it.shape[-1])
        if nd > len(p) or nd > MAX_INDICES_ND:
            raise fail(op, f"index depth {nd} above the params rank or {MAX_INDICES_ND} (TFLM)")
        idx = dm.const_ints(op, g, 1, "indices").reshape(-1, nd) if nd else None
        slice_size = int(np.prod(p[nd:], dtype=np.int64))
        n_slices = int(np.prod(it.shape[:-1], dtype=np.int64))
        flat = int(np.prod(p, dtype=np.int64))
        dm.check_shape(op, g, 0, [*it.shape[:-1], *p[nd:]])
        st = dm.strides(p)
        table = []
        for k in range(n_slices):
            pos = sum(int(idx[k, j]) * st[j] for j in range(nd)) if nd else 0
            if pos < 0 or pos + slice_size > flat:
                raise fail(
                    op, f"index row {k} selects bytes outside params (TFLM fails at run time)"
                )
            table.append(pos)
        loops = [dm.Loop(n_slices, table=tuple(table)), dm.Loop(slice_size, 1)]
        return dm.Copies(copies=(dm.simplify(op, 0, loops),))
