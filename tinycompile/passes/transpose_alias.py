"""The transpose pass: a TRANSPOSE that only moves axes of size 1 (an NCHW grayscale input made
NHWC, a [1, N] row made a column) keeps every byte where it was: it becomes a RESHAPE, which
costs no copy and no arena (the output aliases the input).

Exact by construction: with the non-unit axes in the same relative order, the element at each
flat position is the same before and after. Only int8/int16 TRANSPOSEs whose input and output
share dtype and quantization are rewritten (a TRANSPOSE moves bytes, it never requantizes), with
a constant permutation; everything else is left to the TRANSPOSE unit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Op


def transposes_to_reshapes(g: Graph) -> Graph:
    """A copy of ``g`` whose byte-preserving TRANSPOSEs are RESHAPEs."""
    ops = [_as_reshape(g, op) if op.kind == "TRANSPOSE" else op for op in g.ops]
    return replace(g, ops=ops)


def _as_reshape(g: Graph, op: Op) -> Op:
    if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
        return op
    x, perm_t, y = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
    if perm_t.data is None or x.data is not None or x.dtype != y.dtype or x.variable:
        return op
    if x.dtype not in ("int8", "int16") or not _same_quant(x.quant, y.quant):
        return op
    perm = [int(p) for p in np.asarray(perm_t.data).reshape(-1)]
    if sorted(perm) != list(range(len(x.shape))) or [x.shape[p] for p in perm] != list(y.shape):
        return op  # malformed: the unit refuses it with its reason
    kept = [p for p in perm if x.shape[p] != 1]
    if kept != sorted(kept):
        return op  # a real transposition
    return Op(op.index, "RESHAPE", [op.inputs[0]], list(op.outputs))


def _same_quant(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    return (
        np.array_equal(a.scale, b.scale)  # type: ignore[attr-defined]
        and np.array_equal(a.zero_point, b.zero_point)  # type: ignore[attr-defined]
    )
