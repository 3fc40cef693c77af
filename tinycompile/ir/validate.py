"""Structural checks on a graph: single assignment, order, dtypes of graph inputs/outputs
(int8, int16 or float32; outputs may also be int32, the indices of ARG_MAX / ARG_MIN, or bool,
the results of comparisons and logical operators).

Float activations are refused here; int16 activations (16x8 quantization) are each operator
unit's business (``Operator.int16``: units that do not handle them are refused by the ops stage
with "int16 activations are not supported for OP (16x8)").

Variable tensors (state, ``Tensor.variable``) are written by no op: the op reading one updates it
in place. They count as produced, may not be graph inputs, outputs or op outputs, and their
dtype (int16 state) is the reading op's business.

``problems`` lists every problem found; ``validate`` raises the first. Ops in ``skip`` (the
ones a later stage already refuses, such as unsupported operators) are not checked, and the
tensors they would produce count as produced: an LSTM's state tensors or a custom op's inputs
are then not reported as "never produced" in place of the operator itself.
"""

from __future__ import annotations

from collections.abc import Collection

from ..errors import CompileError
from .graph import Graph


def validate(g: Graph, skip: Collection[int] = (), own_types: Collection[int] = ()) -> None:
    """Raise CompileError when the graph is not a well-formed DAG in execution order."""
    found = problems(g, skip, own_types)
    if found:
        raise found[0]


def problems(
    g: Graph, skip: Collection[int] = (), own_types: Collection[int] = ()
) -> list[CompileError]:
    """Every structural and type problem of the graph: constant graph inputs first, then by op,
    then the graph's outputs and the types of its inputs and outputs. The activation types of
    the ops in ``own_types`` are left to their units (which refuse them with their reason)."""
    out: list[CompileError] = []
    written: set[int] = set()
    for tid in g.inputs:
        if g.t(tid).is_const:
            out.append(CompileError(f"graph input tensor {tid} is a constant"))
        written.add(tid)
    for t in g.tensors:
        if t.variable:
            if t.id in g.inputs or t.id in g.outputs:
                out.append(CompileError(f"variable tensor {t.id} is a graph input or output"))
            written.add(t.id)
    produced_by_skipped = {t for op in g.ops if op.index in skip for t in op.outputs}
    producers: dict[int, int] = {}
    by_op: list[CompileError] = []
    for op in g.ops:
        if op.index in skip:
            written.update(op.outputs)
            continue
        here = _op_problems(g, op, written, producers, produced_by_skipped)
        by_op.extend(CompileError(r, op_index=op.index, op_kind=op.kind) for r in here)
        for tid in op.outputs:
            producers.setdefault(tid, op.index)
            written.add(tid)
    by_op.extend(_type_problems(g, {*skip, *own_types}))
    out.extend(sorted(by_op, key=lambda e: e.op_index or 0))
    for tid in g.outputs:
        if g.t(tid).is_const:
            out.append(CompileError(f"graph output tensor {tid} is a constant"))
        elif tid not in written:
            out.append(CompileError(f"graph output tensor {tid} is never produced"))
    for tid in sorted(set(g.inputs) | set(g.outputs)):
        t = g.t(tid)
        if t.dtype in ("int8", "int16", "float32"):
            continue
        if t.dtype == "int32" and tid in g.outputs and tid not in g.inputs:
            continue  # indices (ARG_MAX / ARG_MIN), QUANTIZE's (TFLM's keyword models' tail)
        if t.dtype == "int32" and tid not in g.outputs and _quantized_input(g, tid):
            continue  # requantized by QUANTIZE (int32 -> int8 / int16), as TFLM allows
        if t.dtype == "int32" and _only_output_shape(g, tid):
            continue  # TRANSPOSE_CONV's output_shape fed at run time, never read (as TFLM)
        if t.dtype == "bool" and tid in g.outputs and tid not in g.inputs:
            continue  # a comparison's or logical operator's result
        out.append(
            CompileError(
                f"graph input/output tensor {tid} is {t.dtype}; only int8, int16 and float32"
                " are supported (and int32 or bool outputs, int32 inputs read by QUANTIZE only)"
            )
        )
    return out


def _quantized_input(g: Graph, tid: int) -> bool:
    """Input ``tid`` has per-tensor quantization and only QUANTIZE ops read it."""
    q = g.t(tid).quant
    readers = [op for op in g.ops if tid in op.inputs]
    ok = q is not None and not q.per_channel
    return ok and bool(readers) and all(op.kind == "QUANTIZE" for op in readers)


def _only_output_shape(g: Graph, tid: int) -> bool:
    """Whether graph input ``tid`` is read only as TRANSPOSE_CONV's output_shape (input 0),
    which TFLM never reads (the output tensor's static shape is used), as in TFLM's int16
    integration-test models."""
    if tid not in g.inputs or tid in g.outputs:
        return False
    readers = [op for op in g.ops if tid in op.inputs]
    return bool(readers) and all(
        op.kind == "TRANSPOSE_CONV" and tid not in op.inputs[1:] for op in readers
    )


def _op_problems(
    g: Graph, op, written: set[int], producers: dict[int, int], skipped_outputs: set[int]
) -> list[str]:
    if op.inputs and op.inputs[0] < 0:
        # -1 marks an absent optional operand; no operator's first input is optional
        return ["first input is absent (-1)"]
    out = []
    for tid in op.inputs:
        if tid < 0:
            continue
        t = g.t(tid)
        if not t.is_const and tid not in written and tid not in skipped_outputs:
            later = any(tid in o.outputs for o in g.ops)
            why = "is produced later (cycle or wrong order)" if later else "is never produced"
            out.append(f"input tensor {tid} {why}")
    for tid in op.outputs:
        if g.t(tid).variable:
            out.append(f"output tensor {tid} is a variable (state is updated by its reader)")
        elif tid in producers or tid in g.inputs:
            out.append(f"output tensor {tid} is written twice")
    return out


_FLOAT_BOUNDARY = {"QUANTIZE", "DEQUANTIZE"}


def _type_problems(g: Graph, skip: Collection[int]) -> list[CompileError]:
    """Float activations, with a message that says what to do instead (one per op)."""
    out = []
    for op in g.ops:
        if op.kind in _FLOAT_BOUNDARY or op.index in skip:
            continue
        for tid in [*op.inputs, *op.outputs]:
            if tid < 0:
                continue
            t = g.t(tid)
            if t.is_const or t.variable:
                continue
            if t.dtype == "float32":
                out.append(
                    CompileError(
                        f"float32 activations (tensor {tid}): only INT8-quantized models are"
                        " supported; convert with full-integer post-training quantization",
                        op_index=op.index,
                        op_kind=op.kind,
                    )
                )
                break
    return out
