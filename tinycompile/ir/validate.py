"""Structural checks on a graph: single assignment, order, dtypes of graph inputs/outputs."""

from __future__ import annotations

from ..errors import CompileError
from .graph import Graph


def validate(g: Graph) -> None:
    """Raise CompileError when the graph is not a well-formed DAG in execution order."""
    written: set[int] = set()
    for tid in g.inputs:
        if g.t(tid).is_const:
            raise CompileError(f"graph input tensor {tid} is a constant")
        written.add(tid)
    producers: dict[int, int] = {}
    for op in g.ops:
        if op.inputs and op.inputs[0] < 0:
            # -1 marks an absent optional operand; no operator's first input is optional
            raise CompileError("first input is absent (-1)", op_index=op.index, op_kind=op.kind)
        for tid in op.inputs:
            if tid < 0:
                continue
            t = g.t(tid)
            if not t.is_const and tid not in written:
                later = any(tid in o.outputs for o in g.ops)
                why = "is produced later (cycle or wrong order)" if later else "is never produced"
                raise CompileError(f"input tensor {tid} {why}", op_index=op.index, op_kind=op.kind)
        for tid in op.outputs:
            if tid in producers or tid in g.inputs:
                raise CompileError(
                    f"output tensor {tid} is written twice", op_index=op.index, op_kind=op.kind
                )
            if g.t(tid).is_const:
                # an op writing a constant buffer: TFLite allows it only for folded ops
                pass
            producers[tid] = op.index
            written.add(tid)
    for tid in g.outputs:
        if tid not in written and not g.t(tid).is_const:
            raise CompileError(f"graph output tensor {tid} is never produced")
        if g.t(tid).is_const:
            raise CompileError(f"graph output tensor {tid} is a constant")
    _check_types(g)
    for tid in set(g.inputs) | set(g.outputs):
        t = g.t(tid)
        if t.dtype not in ("int8", "float32"):
            raise CompileError(
                f"graph input/output tensor {tid} is {t.dtype}; only int8 and float32 are supported"
            )


_FLOAT_BOUNDARY = {"QUANTIZE", "DEQUANTIZE"}


def _check_types(g: Graph) -> None:
    """Refuse float and int16 graphs with a message that says what to do instead."""
    for op in g.ops:
        if op.kind in _FLOAT_BOUNDARY:
            continue
        for tid in [*op.inputs, *op.outputs]:
            if tid < 0:
                continue
            t = g.t(tid)
            if t.is_const:
                continue
            if t.dtype == "float32":
                raise CompileError(
                    f"float32 activations (tensor {tid}): only INT8-quantized models are supported;"
                    " convert with full-integer post-training quantization",
                    op_index=op.index,
                    op_kind=op.kind,
                )
            if t.dtype == "int16":
                raise CompileError(
                    f"int16 activations (tensor {tid}, 16x8 quantization) are not supported;"
                    " quantize activations to int8",
                    op_index=op.index,
                    op_kind=op.kind,
                )
