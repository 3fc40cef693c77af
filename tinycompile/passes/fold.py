"""The constant pass: an alias op (reshape, squeeze: its output is its input's bytes) whose input
is a constant gives its outputs that constant's data, reshaped; the op then produces only
constants, and preparing skips it (nothing runs on the device). So does an op whose unit computes
its outputs at compile time (``Operator.fold``: SHAPE, FILL of a constant, ...), unless one of
them is a graph output (then it runs: a graph output is never a constant)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph
from ..ops import load_all


def fold_constants(g: Graph) -> Graph:
    """A copy of ``g`` with the outputs of alias ops of constants made constants."""
    units = load_all()
    tensors = list(g.tensors)
    for op in g.ops:
        unit = units.get(op.kind)
        if unit is not None and not unit.alias and not set(op.outputs) & set(g.outputs):
            vals = unit.fold(op, replace(g, tensors=tensors))
            for tid, v in zip(op.outputs, vals or [], strict=False):
                dst = tensors[tid]
                tensors[tid] = replace(dst, data=np.asarray(v, dst.dtype).reshape(dst.shape))
            continue
        if unit is None or not unit.alias or not op.inputs or op.inputs[0] < 0:
            continue  # (an absent first input is refused elsewhere: ir.problems)
        src = tensors[op.inputs[0]]
        if src.data is None:
            continue
        for tid in op.outputs:
            dst = tensors[tid]
            if dst.size == src.size:
                tensors[tid] = replace(dst, data=src.data.reshape(dst.shape))
    return replace(g, tensors=tensors)
