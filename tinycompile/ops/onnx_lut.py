"""ONNX_REQUANT: an int8 -> int8 change of scale and zero point through a 256-entry table, as
onnxruntime's QLinearConcat rescales an input whose parameters differ from the output's
(``QlinearBuildLookupTable`` with the identity): each value dequantized in float32,
``x_scale * (q - x_zp)``, then quantized as MLAS's ``MlasQuantizeLinear`` does: divided by
``y_scale`` in float32, rounded half to even, saturated, plus ``y_zp``. Kernel: ``tc_lut_s8``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, register
from .common import io_int8, lut_call
from .onnx_common import F32


def requant_lut(xs: float, xz: int, ys: float, yz: int) -> np.ndarray:
    """The table, indexed by the input's bit pattern (``lut[q & 0xFF]``)."""
    q = np.arange(-128, 128, dtype=np.int64)
    x = F32(xs) * (q - xz).astype(F32)
    y = np.clip(np.rint(x / F32(ys)).astype(np.int64) + yz, -128, 127).astype(np.int8)
    lut = np.empty(256, np.int8)
    lut[q & 0xFF] = y
    return lut


@dataclass(frozen=True, kw_only=True)
class OnnxLut(Prepared):
    lut: np.ndarray


@register
class OnnxRequantOp(Operator):
    kinds = ("ONNX_REQUANT",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> OnnxLut:
        x, y = io_int8(op, g)
        return OnnxLut(macs=y.size, lut=requant_lut(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp))

    def lower(self, op: Op, g: Graph, d: OnnxLut, ctx: LowerCtx, choice: Choice) -> str:
        return lut_call(op, g, ctx, d.lut)
