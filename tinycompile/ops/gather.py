"""GATHER (int8 params, constant int32 indices), as TFLM's gather.cc: along ``axis``, after
``batch_dims`` leading dims shared by params and indices, output block (b, o, i) is params block
(b, o, indices[b, i]); bytes move, nothing is requantized. The constant indices become offset
tables of ``tc_copy_s8`` (firmware/kernels/tc_copy.c): one call, or one per batch when both
batch_dims and outer dims are present. TFLM fails at run time on an index outside the axis and
takes only int32 indices; both are refused here, and so are indices computed at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import fail, register
from .common import inp


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


@register
class GatherOp(dm.CopyOperator):
    kinds = ("GATHER",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "axis": int(options.get("axis", 0)),
            "batch_dims": int(options.get("batch_dims", 0)),
        }

    def prepare(self, op: Op, g: Graph) -> dm.Copies:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects params, indices and 1 output")
        dm.check_int8_io(op, g, [0], [0])
        p, it = inp(op, g, 0).shape, inp(op, g, 1)
        if it.dtype != "int32":
            raise fail(op, f"{it.dtype} indices are not supported (TFLM takes int32)")
        idx = dm.const_ints(op, g, 1, "indices").reshape(it.shape or (1,))
        axis, bd = op.attrs.get("axis", 0), op.attrs.get("batch_dims", 0)
        axis = axis + len(p) if axis < 0 else axis
        bd = bd + len(it.shape) if bd < 0 else bd
        if not (0 <= bd <= axis < len(p) and bd <= len(it.shape)):
            raise fail(op, f"axis {axis} / batch_dims {bd} out of range")
        if tuple(p[:bd]) != tuple(it.shape[:bd]):
            raise fail(op, "batch dims of params and indices differ")
        if idx.size and (idx.min() < 0 or idx.max() >= p[axis]):
            raise fail(op, f"an index is outside the axis of {p[axis]} (TFLM fails at run time)")
        dm.check_shape(op, g, 0, [*p[:axis], *it.shape[bd:], *p[axis + 1 :]])
        n_b, n_o, n_a = _prod(p[:bd]), _prod(p[bd:axis]), p[axis]
        inner, n_i = _prod(p[axis + 1 :]), _prod(it.shape[bd:])
        idx = idx.reshape(n_b, n_i)
        rows = [[int(b * n_o * n_a + v) * inner for v in idx[b]] for b in range(n_b)]
        if n_b == 1 or n_o == 1:  # (batch, index) pairs in one table
            table = tuple(x for r in rows for x in r)
            loops = [dm.Loop(n_o, n_a * inner), dm.Loop(n_b * n_i, table=table), dm.Loop(inner, 1)]
            return dm.Copies(copies=(dm.simplify(op, 0, loops),))
        copies = []
        for b in range(n_b):
            table = tuple(x - b * n_o * n_a * inner for x in rows[b])
            loops = [dm.Loop(n_o, n_a * inner), dm.Loop(n_i, table=table), dm.Loop(inner, 1)]
            offset, out_offset = b * n_o * n_a * inner, b * n_o * n_i * inner
            copies.append(dm.simplify(op, offset, loops, out_offset=out_offset))
        return dm.Copies(copies=tuple(copies))
