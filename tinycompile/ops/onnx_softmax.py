"""ONNX_SOFTMAX: onnxruntime's QLinearSoftmax (and a fused QDQ Softmax) along the last axis.

onnxruntime 1.32 (qlinear_softmax.cc) tabulates ``float(exp((i - 255 + shift) * x_scale))`` in
double with ``shift = max(0, L - 5) / x_scale``, ``L = log(FLT_MAX / depth)`` rounded to float32
(``logf`` of the float32 quotient); per row it sums the table entries of ``max - x`` in float32,
in order, and writes ``nearbyint(float((e * floor(1 / y_scale)) / sum))`` with the product and
quotient in double, plus ``y_zp``, saturated to the model's type (int8 to 127). The table
(``exp_table[d]`` for ``d = max - x``) is computed here with the C library's ``exp``, as
onnxruntime's; the rest runs on the device. Kernel: ``tc_onnx_softmax_s8``
(firmware/kernels/tc_onnx.c).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import io_call, io_int8
from .onnx_requant import F32

FLT_MAX = float(np.finfo(np.float32).max)


def softmax_exp_table(x_scale: float, depth: int) -> np.ndarray:
    """exp of ``-d`` steps of x_scale (d = 0..255) shifted up as onnxruntime shifts it."""
    big = F32(math.log(float(F32(FLT_MAX) / F32(depth))))  # logf(FLT_MAX / depth), float32
    xs = float(F32(x_scale))
    shift = max(0.0, float(big) - 5.0) / xs
    return np.array([F32(math.exp((float(-d) + shift) * xs)) for d in range(256)], F32)


@dataclass(frozen=True, kw_only=True)
class OnnxSoftmax(Prepared):
    fields: tuple[tuple[str, object], ...]
    table: np.ndarray


@register
class OnnxSoftmaxOp(Operator):
    kinds = ("ONNX_SOFTMAX",)

    def prepare(self, op: Op, g: Graph) -> OnnxSoftmax:
        x, y = io_int8(op, g)
        if not x.shape:
            raise fail(op, "expects at least a rank-1 input")
        depth = int(x.shape[-1])
        u8 = bool(op.attrs.get("uint8"))
        inv = math.floor(float(F32(1.0) / F32(y.quant.s)))
        zp = y.quant.zp + (128 if u8 else 0)  # the model's zero point
        lo, hi = (0, 255) if u8 else (-128, 127)
        fields = dict(rows=x.size // depth, depth=depth, lo=lo - zp, hi=hi - zp,
                      out_off=zp - (128 if u8 else 0), y_scale=float(F32(inv)))  # fmt: skip
        table = softmax_exp_table(x.quant.s, depth)
        return OnnxSoftmax(macs=x.size, fields=tuple(fields.items()), table=table)

    def lower(self, op: Op, g: Graph, d: OnnxSoftmax, ctx: LowerCtx, choice: Choice) -> str:
        f: dict[str, object] = dict(d.fields)
        f["exp_table"] = ctx.array("exp_table", "float", d.table)
        return io_call("tc_onnx_softmax_s8", op, ctx, ctx.params("tc_onnx_softmax_params_t", f))
