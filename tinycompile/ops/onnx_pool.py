"""ONNX_GLOBAL_AVG_POOL: onnxruntime's QLinearGlobalAveragePool (and a fused QDQ
GlobalAveragePool) on NHWC int8: per channel, the sum minus ``x_zp * pixels`` requantized with
``x_scale / (y_scale * float(pixels))`` in float32 (MLAS ``MlasQLinearGlobalAveragePoolNchw``).
Kernel: ``tc_onnx_gap_s8`` (firmware/kernels/tc_onnx.c)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import io_call
from .onnx_requant import F32, io8

MAX_PIXELS = 1 << 24  # MLAS refuses larger images


@dataclass(frozen=True, kw_only=True)
class OnnxGap(Prepared):
    fields: tuple[tuple[str, object], ...]


@register
class OnnxGapOp(Operator):
    kinds = ("ONNX_GLOBAL_AVG_POOL",)

    def prepare(self, op: Op, g: Graph) -> OnnxGap:
        x, y = io8(op, g)
        if len(x.shape) != 4 or tuple(y.shape) != (x.shape[0], 1, 1, x.shape[3]):
            raise fail(op, f"expects NHWC input and N x 1 x 1 x C output, got {list(y.shape)}")
        n, h, w, c = x.shape
        pixels = h * w
        if pixels >= MAX_PIXELS:
            raise fail(op, f"{pixels} pixels: onnxruntime refuses images this large")
        scale = F32(x.quant.s) / (F32(y.quant.s) * F32(pixels))
        if not (np.float32(2.0**-32) <= scale < F32(256.0)):
            raise fail(op, f"scale {float(scale):g} out of onnxruntime's range [2^-32, 256)")
        fields = dict(batches=n, pixels=pixels, channels=c, in_zp=x.quant.zp,
                      out_zp=y.quant.zp, scale=float(scale))  # fmt: skip
        return OnnxGap(macs=x.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: OnnxGap, ctx: LowerCtx, choice: Choice) -> str:
        return io_call(
            "tc_onnx_gap_s8", op, ctx, ctx.params("tc_onnx_gap_params_t", dict(d.fields))
        )
