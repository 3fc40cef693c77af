"""Helpers shared by the op modules: quantization checks and activation clamps."""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, Tensor
from . import fail

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
