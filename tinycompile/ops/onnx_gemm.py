"""ONNX_GEMM: onnxruntime's QGemm and QLinearMatMul with a constant B (and their fused QDQ
Gemm / MatMul): rows of int8 inputs times int8 weights [units][depth] (the frontend lays out B
as PyTorch does: transB=1), int32 bias, requantized with ``(alpha * a_scale * b_scale[u]) /
y_scale`` in float32 (``onnx_requant``).

Kernel: FULLY_CONNECTED's ``tc_fc_s8`` and its fast paths (``fully_connected.fc_s8`` prepares
it, with tc_requant_conv's ONNX variant: ``onnx_requant.onnx_multipliers``). Weights with
nonzero zero points, and layers whose scales or accumulators the integer form cannot take
(``onnx_requant.integer_form_ok``, e.g. accumulators beyond 2^24 whose float32 rounds), keep
the portable ``tc_onnx_gemm_s8`` (firmware/kernels/tc_onnx.c).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import fully_connected
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .onnx_requant import (
    OnnxAccum,
    acc_bounds,
    accum_call,
    check_bias,
    check_weights,
    integer_form_ok,
    io8,
    onnx_multipliers,
    product_scales,
    scales_array,
    weight_zero_points,
)


@register
class OnnxGemmOp(Operator):
    kinds = ("ONNX_GEMM",)

    def prepare(self, op: Op, g: Graph) -> Prepared:
        x, y = io8(op, g)
        w = inp_w = check_weights(op, g, 1, y.shape[-1] if y.shape else 1)
        if len(inp_w.shape) != 2:
            raise fail(op, f"weights must be rank 2 [units, depth], got {list(w.shape)}")
        units, depth = w.shape
        if not x.shape or x.shape[-1] != depth or y.shape[-1] != units:
            raise fail(op, f"input {list(x.shape)} / output {list(y.shape)} do not fit B")
        rows = x.size // depth
        if y.size != rows * units:
            raise fail(op, f"output has {y.size} elements, expected {rows * units}")
        bias = check_bias(op, g, 2, units)
        alpha = float(op.attrs.get("alpha", 1.0))
        scales = scales_array(op, product_scales(x, w, y, alpha), units)
        wzp = weight_zero_points(w, units)
        if wzp is None:
            b = None if bias is None else bias.data
            if integer_form_ok(scales, acc_bounds(np.asarray(w.data), b, x.quant.zp)):
                return fully_connected.fc_s8(op, g, rows, *onnx_multipliers(scales))
        fields = dict(rows=rows, depth=depth, units=units, in_zp=x.quant.zp, out_zp=y.quant.zp)
        return OnnxAccum(
            macs=rows * units * depth, fields=tuple(fields.items()), scales=scales, w_zp=wzp
        )

    def lower(self, op: Op, g: Graph, d: Any, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d, fully_connected.FullyConnected):
            return fully_connected.lower_s8(op, g, d, ctx)
        return accum_call("tc_onnx_gemm_s8", "tc_onnx_gemm_params_t", op, ctx, d)
