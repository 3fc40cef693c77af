"""PACK (int8 and int16), as TFLM's pack.cc: the inputs, all of one shape, stacked along a new
``axis`` of the output; bytes move, nothing is requantized (TFLM checks no quantization). Stacking
is a concatenation of each input's blocks of ``prod(shape[axis:])`` elements, so the kernel is
CONCATENATION's ``tc_concat_s8`` (firmware/kernels/tc_shape.c).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import datamove as dm
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp


@dataclass(frozen=True, kw_only=True)
class Pack(Prepared):
    outer: int  # product of the output dims before the axis
    chunk: int  # elements of each input per outer step


@register
class PackOp(Operator):
    kinds = ("PACK",)
    int16 = True  # int8 or int16 elements (16x8), moved alike

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"values_count": int(options.get("values_count", 0)), "axis": options.get("axis", 0)}

    def prepare(self, op: Op, g: Graph) -> Pack:
        if not op.inputs or len(op.outputs) != 1:
            raise fail(op, "expects at least 1 input and 1 output")
        dm.check_io(op, g, list(range(len(op.inputs))), [0], dm.INT8_16)
        shape = inp(op, g, 0).shape
        n = len(op.inputs)
        if op.attrs.get("values_count", n) != n:
            raise fail(op, f"values_count {op.attrs['values_count']} for {n} inputs")
        if any(g.t(t).shape != shape for t in op.inputs):
            raise fail(op, "inputs of differing shapes")
        axis = int(op.attrs.get("axis", 0))
        a = axis + len(shape) + 1 if axis < 0 else axis
        if not 0 <= a <= len(shape):
            raise fail(op, f"axis {axis} out of range for rank {len(shape) + 1}")
        dm.check_shape(op, g, 0, [*shape[:a], n, *shape[a:]])
        outer = int(np.prod(shape[:a], dtype=np.int64))
        return Pack(outer=outer, chunk=int(np.prod(shape[a:], dtype=np.int64)))

    def lower(self, op: Op, g: Graph, d: Pack, ctx: LowerCtx, choice: Choice) -> str:
        elem = dm.ELEM_SIZE[g.t(op.outputs[0]).dtype]
        return dm.concat_call(op, ctx, d.outer, [d.chunk] * len(op.inputs), elem)
