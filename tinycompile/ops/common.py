"""Helpers shared by the operator units: option decoding, quantization checks, activation
clamps."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ir import Graph, Op, Tensor
from .base import LowerCtx, fail

ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
PADDINGS = {0: "SAME", 1: "VALID"}


def fused_activation(options: Mapping[str, Any]) -> str:
    """The fused activation of a TFLite options table (NONE when absent)."""
    code = options.get("fused_activation_function", 0)
    return ACTIVATIONS.get(code, f"unknown({code})")


def window_options(options: Mapping[str, Any], what: str) -> dict[str, Any]:
    """Padding and strides of a windowed op's options (conv, depthwise, pooling)."""
    if not options:
        raise ValueError(f"missing {what}")
    return {
        "padding": PADDINGS.get(options.get("padding", 0), "?"),
        "stride": (options.get("stride_h", 1), options.get("stride_w", 1)),
        "activation": fused_activation(options),
    }


QMIN = {"int8": -128, "int16": -32768}
QMAX = {"int8": 127, "int16": 32767}


def quantize_scalar(value: float, t: Tensor) -> int:
    """TFLite's Quantize(): zero_point + round(value / scale), division in float32."""
    q = np.float32(value) / np.float32(t.quant.scale[0])
    r = float(np.floor(abs(float(q)) + 0.5)) * (1 if q >= 0 else -1)  # std::round on the float
    return int(t.quant.zero_point[0]) + int(r)


def activation_range(op: Op, out: Tensor) -> tuple[int, int]:
    """CalculateActivationRangeQuantized for the op's fused activation."""
    act = op.attrs.get("activation", "NONE")
    lo, hi = QMIN[out.dtype], QMAX[out.dtype]
    if act == "NONE":
        return lo, hi
    if act == "RELU":
        return max(lo, quantize_scalar(0.0, out)), hi
    if act == "RELU6":
        return max(lo, quantize_scalar(0.0, out)), min(hi, quantize_scalar(6.0, out))
    if act == "RELU_N1_TO_1":
        return max(lo, quantize_scalar(-1.0, out)), min(hi, quantize_scalar(1.0, out))
    raise fail(op, f"fused activation {act} is not supported")


def require_int8(op: Op, g: Graph, tids: list[int], what: str = "activation") -> None:
    """Every listed tensor must be per-tensor quantized int8."""
    for tid in tids:
        t = g.t(tid)
        if t.dtype == "float32":
            raise fail(op, f"float32 {what} tensor {tid}: only INT8-quantized models are supported")
        if t.dtype != "int8":
            raise fail(op, f"{t.dtype} {what} tensor {tid} is not supported (int8 only)")
        if t.quant is None:
            raise fail(op, f"{what} tensor {tid} has no quantization parameters")
        if t.quant.per_channel:
            raise fail(op, f"{what} tensor {tid} is quantized per channel")


def inp(op: Op, g: Graph, i: int = 0) -> Tensor:
    return g.t(op.inputs[i])


def out(op: Op, g: Graph, i: int = 0) -> Tensor:
    return g.t(op.outputs[i])


def positive_scales(op: Op, *ts: Tensor) -> None:
    """Every listed tensor has a positive finite (per-tensor) scale."""
    for t in ts:
        s = t.quant.s
        if not (math.isfinite(s) and s > 0):
            raise fail(op, f"tensor {t.id} has scale {s:g}; a positive finite scale is needed")


def io_int8(op: Op, g: Graph) -> tuple[Tensor, Tensor]:
    """One int8 input and one int8 output of as many elements, with usable scales."""
    if len(op.inputs) < 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        raise fail(op, "expects one input and one output")
    require_int8(op, g, [op.inputs[0], op.outputs[0]])
    i, o = inp(op, g), out(op, g)
    positive_scales(op, i, o)
    if i.size != o.size:
        raise fail(op, f"input has {i.size} elements but output has {o.size}")
    return i, o


def lut_call(op: Op, g: Graph, ctx: LowerCtx, lut: np.ndarray) -> str:
    """``tc_lut_s8``: ``out[i] = lut[(uint8_t)in[i]]`` with the table in flash."""
    sym = ctx.array(f"lut_{op.kind.lower()}", "int8_t", lut)
    p = ctx.params("tc_lut_params_t", {"size": inp(op, g).size, "lut": sym})
    return f"tc_lut_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"


def io_call(fn: str, op: Op, ctx: LowerCtx, params: str) -> str:
    """``fn(params, input, output);``"""
    return f"{fn}({params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"
