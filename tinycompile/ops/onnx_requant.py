"""onnxruntime's requantization, shared by the ONNX operators, and ONNX_REQUANT.

onnxruntime's CPU kernels (MLAS ``MlasRequantizeOutput`` and the kernels built on it) turn an
int32 accumulator into int8 as ``saturate(round_half_even(float(acc) * scale) + zero_point)``,
every step an IEEE float32 operation. The scale is computed once, in float32, in the order the
kernel computes it (``product_scales``). The device does the same (firmware/kernels/tc_onnx.c).

ONNX convolutions without groups, depthwise ones and GEMMs whose weights have zero points 0 run
on the TFLite kernels (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and their fast paths) with the
ONNX variant of their one requantization, tc_requant_conv (firmware/include/tc_qmath.h): per
channel the multiplier is the float32 scale's IEEE bits and the shift its 24-bit mantissa << 7
(``onnx_multipliers``: a shift above 31 marks the variant). Cores with a single-precision FPU
multiply in float32 as onnxruntime does; the others use an integer form, exact under conditions
``integer_form_ok`` checks per layer (else the layer keeps the portable ONNX kernel).

ONNX_REQUANT: an int8 -> int8 change of scale and zero point through a 256-entry table, as
onnxruntime's QLinearConcat rescales an input whose parameters differ from the output's
(``QlinearBuildLookupTable`` with the identity): each value dequantized in float32,
``x_scale * (q - x_zp)``, then quantized as MLAS's ``MlasQuantizeLinear`` does: divided by
``y_scale`` in float32, rounded half to even, saturated, plus ``y_zp``. The same table serves a
QuantizeLinear of a dequantized tensor (DQ -> Q: a change of parameters) and a float function
left between a DequantizeLinear and a QuantizeLinear (``float_function``: Relu or Clip, attribute
``clip``; LeakyRelu (and QLinearLeakyRelu), HardSigmoid, HardSwish, attribute ``fn``), applied
after dequantizing as onnxruntime computes it in float32. Kernel: ``tc_lut_s8``.
"""

from __future__ import annotations

from collections.abc import Callable
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
    """A constant int8 weight tensor with one scale or one per unit, and one zero point or one
    per unit (the real weight is ``w - zero_point``: ``weight_zero_points``)."""
    w = inp(op, g, index)
    if w.dtype != "int8" or not w.is_const or w.quant is None:
        raise fail(op, "weights must be a constant int8 tensor with quantization parameters")
    if w.quant.scale.size not in (1, units):
        raise fail(op, f"weights have {w.quant.scale.size} scales for {units} output channels")
    if w.quant.zero_point.size not in (1, units):
        raise fail(op, f"weights have {w.quant.zero_point.size} zero points for {units} units")
    zp = np.asarray(w.quant.zero_point, np.int64)
    if np.any(zp < -128) or np.any(zp > 127):
        raise fail(op, "weight zero points must be int8 values")
    return w


def weight_zero_points(w: Tensor, units: int) -> np.ndarray | None:
    """Per unit, the zero point to subtract from the stored weights; None where all are 0."""
    zp = np.broadcast_to(np.asarray(w.quant.zero_point, np.int64).reshape(-1), (units,))
    return zp.astype(np.int32) if np.any(zp) else None


def onnx_multipliers(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tc_requant_conv's ONNX variant (firmware/include/tc_qmath.h) of positive normal float32
    ``scales``: per channel the multiplier is the scale's IEEE bits and the shift its 24-bit
    mantissa (with the implicit bit) << 7, in [2^30, 2^31): above 31, which marks the variant."""
    bits = np.asarray(scales, F32).view(np.int32).astype(np.int64)
    return bits, ((bits & 0x7FFFFF) | 0x800000) << 7


def acc_bounds(w: np.ndarray, bias: np.ndarray | None, x_zp: int) -> np.ndarray:
    """Per unit (``w``'s first axis), a bound on |bias + sum((x - x_zp) * w)| over int8 x."""
    span = max(127 - x_zp, x_zp + 128)
    wabs = np.abs(np.asarray(w, np.int64)).reshape(w.shape[0], -1).sum(axis=1)
    b = np.zeros(w.shape[0], np.int64) if bias is None else np.abs(np.asarray(bias, np.int64))
    return b.reshape(-1) + span * wabs


def integer_form_ok(scales: np.ndarray, bounds: np.ndarray) -> bool:
    """Whether the ONNX variant's integer form (cores without a single-precision FPU) is exact
    for every channel (the proof is in tc_qmath.h): the scale's biased exponent in [110, 133]
    (2^-17 <= s < 2^7), and float32(acc) == acc (|acc| <= 2^24) unless 2^24 * s >= 256.5 (every
    accumulator whose float32 rounds then saturates, in either arithmetic)."""
    s = np.asarray(scales, F32)
    e = (s.view(np.int32) >> 23) & 0xFF
    exact = (np.asarray(bounds) <= 2**24) | (s.astype(np.float64) * 2.0**24 >= 256.5)
    return bool(np.all((e >= 110) & (e <= 133) & exact))


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


def float_function(op: Op) -> Callable[[np.ndarray], np.ndarray]:
    """The float32 function an ONNX_REQUANT applies between dequantizing and quantizing, as
    onnxruntime computes it: ``clip`` (a float Relu / Clip: max, then min), ``fn`` =
    ("leaky_relu", alpha): ``x >= 0 ? x : alpha * x`` (QLinearLeakyRelu's table);
    ("hard_sigmoid", alpha, beta): ``max(0, min(1, alpha * x + beta))``, the multiply and the add
    each rounded to float32; ("hard_swish",): ``x * hard_sigmoid(x, 1/6, 0.5)`` (its function
    body); none: the identity."""
    lo, hi = op.attrs.get("clip", (None, None))
    name, *args = op.attrs.get("fn", ("identity",))

    def hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
        y = (F32(alpha) * x).astype(F32) + F32(beta)
        return np.maximum(np.minimum(y, F32(1)), F32(0))

    def f(x: np.ndarray) -> np.ndarray:
        if lo is not None:
            x = np.maximum(x, F32(lo))
        if hi is not None:
            x = np.minimum(x, F32(hi))
        if name == "leaky_relu":
            return np.where(x >= F32(0), x, F32(args[0]) * x)
        if name == "hard_sigmoid":
            return hard_sigmoid(x, *args)
        if name == "hard_swish":
            return x * hard_sigmoid(x, F32(1.0 / 6.0), 0.5)
        return x

    if name not in ("identity", "leaky_relu", "hard_sigmoid", "hard_swish"):
        raise fail(op, f"unknown table function {name!r}")
    return lambda x: np.asarray(f(np.asarray(x, F32)), F32)


def requant_lut(
    xs: float, xz: int, ys: float, yz: int, f: Callable[[np.ndarray], np.ndarray] | None = None
) -> np.ndarray:
    """The table, indexed by the input's bit pattern (``lut[q & 0xFF]``): each value dequantized
    in float32, ``f`` (``float_function``: a float op between the DequantizeLinear and the
    QuantizeLinear), then quantized as ``MlasQuantizeLinear``."""
    q = np.arange(-128, 128, dtype=np.int64)
    x = F32(xs) * (q - xz).astype(F32)
    if f is not None:
        x = f(x)
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
    w_zp: np.ndarray | None = None  # per unit, the weights' zero point (None: all 0)


def accum_call(fn: str, ctype: str, op: Op, ctx: LowerCtx, d: OnnxAccum) -> str:
    """The kernel call of an OnnxAccum op: its fields, weights, optional bias, scales and
    weight zero points."""
    f: dict[str, object] = dict(d.fields)
    has_bias = len(op.inputs) > 2 and op.inputs[2] >= 0
    f.update(
        weights=ctx.ptr(op.inputs[1]),
        bias=ctx.ptr(op.inputs[2]) if has_bias else "0",
        scale=ctx.array("scale", "float", d.scales),
    )
    f["w_zp"] = "0" if d.w_zp is None else ctx.array("w_zp", "int32_t", d.w_zp)  # 0: all 0
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
        lut = requant_lut(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp, float_function(op))
        return OnnxLut(macs=y.size, lut=lut)

    def lower(self, op: Op, g: Graph, d: OnnxLut, ctx: LowerCtx, choice: Choice) -> str:
        return lut_call(op, g, ctx, d.lut)
