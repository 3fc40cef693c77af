"""ARG_MAX and ARG_MIN (int8 input, constant int32 axis, int32 output), as TFLM's
arg_min_max.cc computes them (reference/arg_min_max.h): along the axis, the index of the first
largest (smallest) value; a later equal value never replaces it, so ties go to the lowest index.
TFLM evaluates only int32 axis and int32 output tensors (an int64 output, TensorFlow's default
``output_type``, fails there), so both are refused otherwise. Kernel: ``tc_argminmax_s8``
(firmware/kernels/tc_argminmax.c).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, require_int8

OUTPUT_TYPES = {2: "int32", 4: "int64"}  # TFLite TensorType codes of ArgMax/ArgMinOptions


@dataclass(frozen=True, kw_only=True)
class ArgMinMax(Prepared):
    outer: int
    axis_size: int
    inner: int
    is_max: bool


@register
class ArgMinMaxOp(Operator):
    kinds = ("ARG_MAX", "ARG_MIN")

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        code = options.get("output_type", 4)  # the schema's default is INT64
        return {"output_type": OUTPUT_TYPES.get(code, f"type code {code}")}

    def prepare(self, op: Op, g: Graph) -> ArgMinMax:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects an input, an axis and one output")
        require_int8(op, g, [op.inputs[0]])
        i, a, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if o.dtype != "int32":
            raise fail(op, f"{o.dtype} output is not supported (TFLM computes int32 indices only)")
        if not a.is_const or a.dtype != "int32" or a.size != 1:
            raise fail(op, "the axis must be one constant int32 value (TFLM)")
        rank = len(i.shape)
        axis = int(a.data.reshape(-1)[0])
        if rank < 1 or not -rank <= axis < rank:
            raise fail(op, f"axis {axis} is out of range for rank {rank}")
        axis %= rank
        want = tuple(i.shape[:axis]) + tuple(i.shape[axis + 1 :])
        if tuple(o.shape) != want:
            raise fail(op, f"output shape {list(o.shape)} is not {list(want)}")
        outer = 1
        for n in i.shape[:axis]:
            outer *= n
        inner = 1
        for n in i.shape[axis + 1 :]:
            inner *= n
        return ArgMinMax(
            macs=i.size,
            outer=outer,
            axis_size=i.shape[axis],
            inner=inner,
            is_max=op.kind == "ARG_MAX",
        )

    def lower(self, op: Op, g: Graph, d: ArgMinMax, ctx: LowerCtx, choice: Choice) -> str:
        fields = {"outer": d.outer, "axis_size": d.axis_size, "inner": d.inner}
        fields["is_max"] = int(d.is_max)
        p = ctx.params("tc_argminmax_params_t", fields)
        src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
        return f"tc_argminmax_s8({p}, {src}, {dst});"
