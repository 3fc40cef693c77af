"""ONNX_AVG_POOL: onnxruntime's QLinearAveragePool (and a fused QDQ AveragePool) on NHWC int8,
as qlinear_pool.cc computes it in float32: the window's dequantized values
``x_scale * (q - x_zp)`` summed rows first, divided by the tap count (clipped to the image, or the
whole window with count_include_pad), then ``nearbyint(y / y_scale + y_zp)`` saturated.
Kernel: ``tc_onnx_avgpool_s8`` (firmware/kernels/tc_onnx.c), the 256 dequantized values in a
table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import io_call
from .onnx_requant import F32, io8


@dataclass(frozen=True, kw_only=True)
class OnnxAvgPool(Prepared):
    fields: tuple[tuple[str, object], ...]
    deq: np.ndarray


@register
class OnnxAvgPoolOp(Operator):
    kinds = ("ONNX_AVG_POOL",)

    def prepare(self, op: Op, g: Graph) -> OnnxAvgPool:
        x, y = io8(op, g)
        if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[3] != y.shape[3]:
            raise fail(op, "expects NHWC input and output with the same channels")
        n, h, w, c = x.shape
        _, oh, ow, _ = y.shape
        kh, kw = op.attrs["kernel"]
        sh, sw = op.attrs["stride"]
        pt, pl, pb, pr = op.attrs["pads"]
        if oh != (h + pt + pb - kh) // sh + 1 or ow != (w + pl + pr - kw) // sw + 1:
            raise fail(op, f"output shape {list(y.shape)} does not match the window")
        off = 128 if op.attrs.get("uint8") else 0  # uint8 models: zero point added in float
        q = np.arange(256, dtype=np.int64)
        q = np.where(q >= 128, q - 256, q)
        deq = (F32(x.quant.s) * (q - x.quant.zp).astype(F32)).astype(F32)
        incl = int(bool(op.attrs.get("include_pad")))
        fields = dict(batches=n, in_h=h, in_w=w, channels=c, out_h=oh, out_w=ow, k_h=kh, k_w=kw,
                      stride_h=sh, stride_w=sw, pad_t=pt, pad_l=pl, include_pad=incl,
                      out_zp=y.quant.zp + off, lo=-128 + off, hi=127 + off, out_off=-off,
                      y_scale=float(F32(y.quant.s)))  # fmt: skip
        return OnnxAvgPool(macs=y.size * kh * kw, fields=tuple(fields.items()), deq=deq)

    def lower(self, op: Op, g: Graph, d: OnnxAvgPool, ctx: LowerCtx, choice: Choice) -> str:
        f: dict[str, object] = dict(d.fields)
        f["deq"] = ctx.array("deq", "float", d.deq)
        return io_call("tc_onnx_avgpool_s8", op, ctx, ctx.params("tc_onnx_avgpool_params_t", f))
