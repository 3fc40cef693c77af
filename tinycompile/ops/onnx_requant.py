"""onnxruntime's requantization, shared by the ONNX operators, and ONNX_REQUANT.

onnxruntime's CPU kernels (MLAS ``MlasRequantizeOutput`` and the kernels built on it) turn an
int32 accumulator into int8 as ``saturate(round_half_even(float(acc) * scale) + zero_point)``,
every step an IEEE float32 operation. The scale is computed once, in float32, in the order the
kernel computes it (``product_scales``). The device does the same (firmware/kernels/tc_onnx.c).

ONNX_REQUANT: an int8 -> int8 change of scale and zero point through a 256-entry table, as
onnxruntime's QLinearConcat rescales an input whose parameters differ from the output's
(``QlinearBuildLookupTable`` with the identity): each value dequantized in float32,
``x_scale * (q - x_zp)``, then quantized as MLAS's ``MlasQuantizeLinear`` does: divided by
``y_scale`` in float32, rounded half to even, saturated, plus ``y_zp``. The same table serves a
QuantizeLinear of a dequantized tensor (DQ -> Q: a change of parameters) and a float Relu or Clip
left between a DequantizeLinear and a QuantizeLinear (attribute ``clip``: the float bounds,
applied after dequantizing, as onnxruntime's float Relu / Clip). Kernel: ``tc_lut_s8``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op, Tensor
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, io_int8, lut_call, out, require_int8

F32 = np.float32


def requant_np(acc: np.ndarray, scale: np.ndarray, zp: int) -> np.ndarray:
    """The device's ``tc_onnx_requant`` in numpy (float32 product, round half to even)."""
    v = np.asarray(acc, np.int64).astype(F32) * np.asarray(scale, F32)
    return np.clip(np.rint(v).astype(np.int64) + zp, -128, 127).astype(np.int8)


def product_scales(x: Tensor, w: Tensor, y: Tensor, alpha: float = 1.0) -> np.ndarray:
    """Per output channel ``(alpha * x_scale * w_scale[c]) / y_scale`` in float32, in that
    order (QLinearConv's ``ComputeOutputScale``, QGemm's with alpha, QLinearMatMul's)."""
    ws = np.asarray(w.quant.scale, F32)
    xs = F32(alpha) * F32(x.quant.s) if alpha != 1.0 else F32(x.quant.s)
    return ((xs * ws) / F32(y.quant.s)).astype(F32)


def check_weights(op: Op, g: Graph, index: int, units: int) -> Tensor:
    """A constant int8 weight tensor with zero points 0 and one scale or one per unit."""
    w = inp(op, g, index)
    if w.dtype != "int8" or not w.is_const or w.quant is None:
        raise fail(op, "weights must be a constant int8 tensor with quantization parameters")
    if np.any(w.quant.zero_point != 0):
        raise fail(op, "weights with a nonzero zero point are not supported (quantize weights"
                   " symmetrically)")  # fmt: skip
    if w.quant.scale.size not in (1, units):
        raise fail(op, f"weights have {w.quant.scale.size} scales for {units} output channels")
    return w


def check_bias(op: Op, g: Graph, index: int, units: int) -> Tensor | None:
    """An optional constant int32 bias with one value per unit."""
    if len(op.inputs) <= index or op.inputs[index] < 0:
        return None
    b = inp(op, g, index)
    if b.dtype != "int32" or not b.is_const or b.size != units:
        raise fail(op, f"bias must be a constant int32 tensor of {units} values")
    return b


def io8(op: Op, g: Graph) -> tuple[Tensor, Tensor]:
    """Input 0 and output 0: per-tensor int8 activations."""
    require_int8(op, g, [op.inputs[0], op.outputs[0]])
    return inp(op, g, 0), out(op, g)


def scales_array(op: Op, scales: np.ndarray, units: int) -> np.ndarray:
    """The per-unit scales (broadcast from one), checked finite and positive."""
    s = np.broadcast_to(np.asarray(scales, F32).reshape(-1), (units,)).astype(F32)
    if not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise fail(op, "requantization scale is not positive and finite")
    return s


def requant_lut(
    xs: float, xz: int, ys: float, yz: int, lo: float | None = None, hi: float | None = None
) -> np.ndarray:
    """The table, indexed by the input's bit pattern (``lut[q & 0xFF]``); ``lo`` / ``hi``: a
    float Relu or Clip between the DequantizeLinear and the QuantizeLinear."""
    q = np.arange(-128, 128, dtype=np.int64)
    x = F32(xs) * (q - xz).astype(F32)
    if lo is not None:
        x = np.maximum(x, F32(lo))
    if hi is not None:
        x = np.minimum(x, F32(hi))
    y = np.clip(np.rint(x / F32(ys)).astype(np.int64) + yz, -128, 127).astype(np.int8)
    lut = np.empty(256, np.int8)
    lut[q & 0xFF] = y
    return lut


@dataclass(frozen=True, kw_only=True)
class OnnxAccum(Prepared):
    """An op summing int8 products into int32 (ONNX_CONV, ONNX_GEMM), requantized per output
    channel by float32 ``scales``; ``fields`` are its kernel's other params."""

    fields: tuple[tuple[str, int], ...]
    scales: np.ndarray


def accum_call(fn: str, ctype: str, op: Op, ctx: LowerCtx, d: OnnxAccum) -> str:
    """The kernel call of an OnnxAccum op: its fields, weights, optional bias and scales."""
    f: dict[str, object] = dict(d.fields)
    has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
    f.update(
        weights=ctx.ptr(op.inputs[1]),
        bias=ctx.ptr(op.inputs[2]) if has_bias else "0",
        scale=ctx.array("scale", "float", d.scales),
    )
    return io_call(fn, op, ctx, ctx.params(ctype, f))


@dataclass(frozen=True, kw_only=True)
class OnnxLut(Prepared):
    lut: np.ndarray


@register
class OnnxRequantOp(Operator):
    kinds = ("ONNX_REQUANT",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> OnnxLut:
        x, y = io_int8(op, g)
        lo, hi = op.attrs.get("clip", (None, None))
        lut = requant_lut(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp, lo, hi)
        return OnnxLut(macs=y.size, lut=lut)

    def lower(self, op: Op, g: Graph, d: OnnxLut, ctx: LowerCtx, choice: Choice) -> str:
        return lut_call(op, g, ctx, d.lut)
