"""The options pass: each op's raw options (what the model file said, in its own vocabulary)
become the typed attributes its operator unit parses from them (``Operator.attrs``).

Attributes already set win (tests and the ONNX frontend set some directly). An op whose options
its unit refuses, or whose kind has no unit, keeps its raw options: preparing it reports the
problem, naming the op (``pipeline``), so that every problem of a model is listed at once.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import CompileError
from ..ir import Graph
from ..ops import decode_op


def decode_options(g: Graph) -> Graph:
    """A copy of ``g`` whose ops carry typed attributes and no raw options."""
    ops = []
    for op in g.ops:
        if op.options is not None:
            new = replace(op, attrs=dict(op.attrs))
            try:
                decode_op(new)
            except CompileError:
                new = op  # refused: prepare names it
            op = new
        ops.append(op)
    return replace(g, ops=ops)
