"""What CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED share (TFLM's conv_common.cc and
fully_connected_common.cc in spirit): window geometry, weight and bias checks, per-channel
requantization multipliers, the zero-point fold into the bias, and the in-place ring temporary.

Arithmetic is TensorFlow Lite Micro's:

- Multipliers (``PopulateConvolutionQuantizationParams``): one per output channel from
  ``double(input_scale) * double(filter_scale[c]) / double(output_scale)`` (a per-tensor filter
  scale is broadcast), computed in double. The filter zero point is ignored by the kernels.
- Padding: ``ComputePaddingHeightWidth`` (top/left pad = floor of half the total); padded taps
  contribute nothing to the accumulator. ``EXPLICIT`` padding (``attrs["pads"]`` = top, bottom,
  left, right: an explicit PAD folded into the layer, ``passes/pad_fold.py``) may be
  asymmetric; every window must still reach the image (none wholly in the padding).
- The input zero point is folded into the bias at compile time
  (``bias_eff = bias + input_offset * sum(weights)``, wrapped to int32 exactly as the kernel's
  int32 accumulator would wrap), so interior outputs are pure int8 dot products; border outputs
  use the model's bias and the reference formula.

TFLM's own limits, mirrored: weight zero points must be 0 (the per-channel kernels ignore them),
int32 biases (int64 belongs to int16 activations). A missing bias (input index -1) is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..ir import Graph, Op, Tensor
from ..quant.qmath import quantize_multiplier
from . import s16
from .base import Bands, Choice, LowerCtx, fail
from .common import activation_range, inp, out, require_int8, window_options
from .rows import Reach

MAX_WINDOW = 65535  # strides, dilations and dilated windows beyond this are refused


def wrap_i32(x: np.ndarray) -> np.ndarray:
    """Reduce int64 values modulo 2^32 into int32 (two's complement wrap-around)."""
    x = np.asarray(x, dtype=np.int64)
    return (((x + (1 << 31)) % (1 << 32)) - (1 << 31)).astype(np.int32)


def out_size(padding: str, size: int, k: int, stride: int, dil: int) -> int:
    """ComputeOutSize (TFLite padding.h)."""
    eff = (k - 1) * dil + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size + stride - eff) // stride


def pad_before(stride: int, dil: int, size: int, k: int, out_n: int) -> int:
    """ComputePadding: the top/left padding TFLM uses (total // 2, never negative)."""
    eff = (k - 1) * dil + 1
    total = (out_n - 1) * stride + eff - size
    return max(total // 2, 0) if total > 0 else 0


def explicit_out_size(size: int, k: int, stride: int, dil: int, before: int, after: int) -> int:
    """Outputs of a window over ``size`` padded with ``before`` and ``after`` (VALID's count over
    the padded size)."""
    return (size + before + after - dil * (k - 1) - 1) // stride + 1


def windows_reach(size: int, k: int, stride: int, dil: int, before: int, out_n: int) -> bool:
    """Whether every output's window covers some of ``size`` input rows (none lies wholly in the
    padding): the first window ends at or after row 0, the last starts at or before the end."""
    eff = (k - 1) * dil + 1
    return before <= eff - 1 and (out_n - 1) * stride - before <= size - 1


def has_border(size: int, k: int, stride: int, dil: int, pad: int, out_n: int) -> bool:
    """Whether any output position's window reaches outside the input along one axis."""
    for o in range(out_n):
        o0 = o * stride - pad
        if o0 < 0 or o0 + (k - 1) * dil >= size:
            return True
    return False


@dataclass(frozen=True)
class Window:
    """Geometry of a 2-D windowed op (convolutions, pooling), checked once."""

    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_h: int
    pad_w: int
    border: bool  # some window reaches outside the input

    def fields(self) -> dict[str, int]:
        """The geometry fields of the kernels' params structs."""
        return {k: int(v) for k, v in asdict(self).items() if k != "border"}

    @property
    def stride1(self) -> bool:
        return self.stride_h == 1 and self.stride_w == 1

    @property
    def same_size(self) -> bool:
        return (self.out_h, self.out_w) == (self.in_h, self.in_w)

    def ring_pixels(self) -> int:
        """Pixels an in-place kernel holds back: input pixel j is last read by output pixel
        j + pad_h * w + pad_w, so output j waits until then (at most the whole image)."""
        return min(self.pad_h * self.in_w + self.pad_w + 1, self.in_h * self.in_w)


def row_window(geo: Window, rows: int, pad: int) -> Window:
    """The geometry of one output row computed from a band of ``rows`` input rows with ``pad``
    padding rows above it (``Operator.lower_row``)."""
    border = has_border(rows, geo.k_h, geo.stride_h, geo.dil_h, pad, 1) or has_border(
        geo.in_w, geo.k_w, geo.stride_w, geo.dil_w, geo.pad_w, geo.out_w
    )
    return replace(geo, in_h=rows, out_h=1, pad_h=pad, border=border)


class RowsByWindow:
    """Row streaming (``ops.rows``) of a windowed int8 op whose prepared data has ``geo`` and
    ``rq``: an output row reads its window's rows of input 0 (batch 1), and a row call is the
    op's own lowering with the geometry cut to the band."""

    def row_reach(self, op: Op, g: Graph, d: Any) -> tuple[Reach, ...] | None:
        if d.geo.batches != 1 or not isinstance(d.rq, Requant):
            return None
        return (Reach(d.geo.k_h, d.geo.stride_h, d.geo.dil_h, d.geo.pad_h),)

    def lower_row(
        self, op: Op, g: Graph, d: Any, ctx: LowerCtx, choice: Choice, bands: Bands
    ) -> str:
        rows, pad = bands[0]
        band = replace(d, geo=row_window(d.geo, rows, pad))
        return self.lower(op, g, band, ctx, choice)  # type: ignore[attr-defined]


def conv_options(options: Mapping[str, Any], what: str) -> dict[str, Any]:
    """Padding, strides, fused activation and dilation of a convolution's options."""
    a = window_options(options, what)
    a["dilation"] = (options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1))
    return a


def window(op: Op, g: Graph, kh: int, kw: int) -> Window:
    """Geometry of a 2-D windowed op: dims, strides, dilations, padding (checked)."""
    x, o = inp(op, g, 0), out(op, g)
    if len(x.shape) != 4 or len(o.shape) != 4:
        raise fail(op, f"expects rank-4 NHWC input and output, got {list(x.shape)}")
    padding = op.attrs.get("padding")
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        raise fail(op, f"padding {padding} is not supported")
    sh, sw = op.attrs.get("stride", (1, 1))
    dh, dw = op.attrs.get("dilation", (1, 1))
    if min(sh, sw) < 1 or min(dh, dw) < 1:
        raise fail(op, f"stride {sh}x{sw} / dilation {dh}x{dw} must be positive")
    if max(sh, sw, dh, dw, (kh - 1) * dh + 1, (kw - 1) * dw + 1) > MAX_WINDOW:
        raise fail(
            op,
            f"stride {sh}x{sw}, dilation {dh}x{dw} or window {kh}x{kw} is absurd"
            f" (limit {MAX_WINDOW})",
        )
    if kh < 1 or kw < 1:
        raise fail(op, f"empty {kh}x{kw} window")
    n, h, wd, c = x.shape
    if padding == "EXPLICIT":
        top, bottom, left, right = explicit_pads(op)
        oh = explicit_out_size(h, kh, sh, dh, top, bottom)
        ow = explicit_out_size(wd, kw, sw, dw, left, right)
    else:
        oh = out_size(padding, h, kh, sh, dh)
        ow = out_size(padding, wd, kw, sw, dw)
    if o.shape[0] != n or o.shape[1] != oh or o.shape[2] != ow:
        raise fail(op, f"output shape {list(o.shape)} does not match the expected {oh}x{ow}")
    if oh < 1 or ow < 1:
        raise fail(op, "the window is larger than the input")
    if padding == "EXPLICIT":
        if not (windows_reach(h, kh, sh, dh, top, oh) and windows_reach(wd, kw, sw, dw, left, ow)):
            pads = [top, bottom, left, right]
            raise fail(op, f"explicit padding {pads} leaves a window wholly in the padding")
        ph, pw = top, left
    else:
        ph = pad_before(sh, dh, h, kh, oh)
        pw = pad_before(sw, dw, wd, kw, ow)
    border = has_border(h, kh, sh, dh, ph, oh) or has_border(wd, kw, sw, dw, pw, ow)
    return Window(n, h, wd, c, oh, ow, o.shape[3], kh, kw, sh, sw, dh, dw, ph, pw, border)


def explicit_pads(op: Op) -> tuple[int, int, int, int]:
    """The (top, bottom, left, right) padding of an ``EXPLICIT``-padded op, checked."""
    pads = op.attrs.get("pads")
    if (
        not isinstance(pads, (tuple, list))
        or len(pads) != 4
        or not all(isinstance(p, int) and p >= 0 for p in pads)
    ):
        raise fail(op, f"explicit padding {pads} is not 4 non-negative sizes")
    top, bottom, left, right = pads
    return top, bottom, left, right


def check_io(op: Op, g: Graph) -> bool:
    """One output; input, weights and an optional bias; int8 activations, or int16 ones (16x8:
    returns True)."""
    if len(op.outputs) != 1:
        raise fail(op, f"expects 1 output, has {len(op.outputs)}")
    if len(op.inputs) < 2 or len(op.inputs) > 3:
        raise fail(op, f"expects 2 or 3 inputs, has {len(op.inputs)}")
    if op.inputs[0] < 0 or op.inputs[1] < 0:
        raise fail(op, "input and weights are required")
    if s16.is_int16(op, g):
        s16.require_int16(op, g, [op.inputs[0], op.outputs[0]])
        return True
    require_int8(op, g, [op.inputs[0], op.outputs[0]])
    return False


def weights(op: Op, g: Graph, out_c: int) -> Tensor:
    """The int8 constant weight tensor with symmetric per-tensor or per-channel scales."""
    w = inp(op, g, 1)
    if w.dtype == "float32":
        raise fail(op, "float32 weights (hybrid or float model) are not supported")
    if w.dtype != "int8":
        raise fail(op, f"{w.dtype} weights are not supported (int8 only)")
    if not w.is_const:
        raise fail(op, "weights must be a constant tensor")
    if w.quant is None:
        raise fail(op, "weights have no quantization parameters")
    ns = w.quant.scale.size
    if ns != 1:
        if ns != out_c:
            raise fail(op, f"weights have {ns} scales for {out_c} output channels")
        if not 0 <= w.quant.axis < len(w.shape) or w.shape[w.quant.axis] != out_c:
            raise fail(op, f"weights' quantized dimension {w.quant.axis} is not the channel axis")
    if np.any(w.quant.zero_point != 0):
        raise fail(op, "weights with a nonzero zero point are not supported (TFLM assumes 0)")
    if not np.all(w.quant.scale > 0):
        raise fail(op, "weights have a zero scale")
    return w


def bias(op: Op, g: Graph, out_c: int, index: int = 2, dtype: str = "int32") -> np.ndarray | None:
    """The model's bias (input ``index``: int32, or int64 in 16x8 ops) as int64 values, or None
    when the op has no bias input."""
    if len(op.inputs) <= index or op.inputs[index] < 0:
        return None
    b = inp(op, g, index)
    if b.dtype != dtype:
        where = " in a 16x8 op" if dtype == "int64" else ""
        raise fail(op, f"{b.dtype} bias{where} is not supported ({dtype} only, as TFLM)")
    if not b.is_const:
        raise fail(op, "bias must be a constant tensor")
    if b.size != out_c:
        raise fail(op, f"bias has {b.size} values for {out_c} output channels")
    # The bias' own quantization (scale, quantized_dimension) is not used by TFLM's int8
    # kernels; any layout with one value per output channel is accepted, as TFLM does.
    return np.asarray(b.data, dtype=np.int64).reshape(-1)


def channel_multipliers(in_s: float, w: Tensor, out_s: float, out_c: int) -> tuple[list, list]:
    """PopulateConvolutionQuantizationParams: per channel, in double."""
    scales = w.quant.scale.astype(np.float32)
    mults, shifts = [], []
    for c in range(out_c):
        fs = float(scales[c] if scales.size > 1 else scales[0])
        m, s = quantize_multiplier(in_s * fs / out_s)
        mults.append(m)
        shifts.append(s)
    return mults, shifts


@dataclass(frozen=True)
class Requant:
    """An op's requantization, computed once: offsets, clamp, folded bias, multipliers."""

    in_offset: int
    out_offset: int
    act_min: int
    act_max: int
    bias: np.ndarray | None  # the model's bias (None: no bias input)
    bias_eff: np.ndarray  # int32: bias + in_offset * sum(weights), wrapped
    mult: np.ndarray  # int64 multipliers (per channel, or one)
    shift: np.ndarray  # int64 shifts


def smmlar_ok(rq: Requant, w: np.ndarray) -> bool:
    """Whether the M4/M7 kernels may requantize with SMMLAR (``rq_smmlar``: tc_dsp.h's
    tc_rq_smmlar_s8): every channel shifts right (shift in [-31, -1]), and with B a bound of
    |accumulator| over all int8 inputs (the bias folded with the input offset plus 128 times
    the channel's absolute weights; weights ``w`` with the output channel first), 2 * B fits
    int32 and so does R + h (R = (2 * out_offset + 1) * 2^(r - 1), |h| <= B + 1)."""
    oc = w.shape[0]
    shift = np.broadcast_to(rq.shift, (oc,)).astype(np.int64)
    if np.any(shift > -1) or np.any(shift < -31):
        return False
    wabs = np.abs(w.astype(np.int64)).reshape(oc, -1).sum(axis=1)
    bound = np.abs(np.broadcast_to(rq.bias_eff, (oc,)).astype(np.int64)) + 128 * wabs
    rnd = np.abs(2 * rq.out_offset + 1) << (-shift - 1)  # |R| < 2^(31 + 8): int64 holds it
    return bool(np.all(bound < 2**30) and np.all(rnd + bound + 2 < 2**31))


def check_accumulator(op: Op, g: Graph, out_c: int, b64: np.ndarray) -> None:
    """Refuse a bias and weights whose int32 accumulator can overflow for some int8 input,
    however the kernel orders its sums (|bias| + 256 * sum |w| per channel): C leaves signed
    overflow undefined (TFLM's kernels would wrap). No real model comes near."""
    w = np.asarray(inp(op, g, 1).data, np.int64)
    axis = w.ndim - 1 if op.kind == "DEPTHWISE_CONV_2D" else 0
    if w.ndim == 0 or w.shape[axis] != out_c:
        return
    wabs = np.abs(np.moveaxis(w, axis, 0)).reshape(out_c, -1).sum(axis=1)
    bad = np.nonzero(np.abs(b64) + 256 * wabs >= 2**31)[0]
    if bad.size:
        raise fail(op, f"the bias and weights of output channel {int(bad[0])} can overflow the"
                       " int32 accumulator")  # fmt: skip


def requant(op: Op, g: Graph, out_c: int, wsum: np.ndarray, mults: list, shifts: list) -> Requant:
    """Offsets, clamp range and the zero point folded into the bias."""
    x, o = inp(op, g, 0), out(op, g)
    in_off = -x.quant.zp
    lo, hi = activation_range(op, o)
    b = bias(op, g, out_c)
    b64 = b if b is not None else np.zeros(out_c, np.int64)
    check_accumulator(op, g, out_c, b64)
    eff = wrap_i32(b64 + in_off * wsum.astype(np.int64))
    return Requant(
        in_off, o.quant.zp, lo, hi, b, eff, np.array(mults, np.int64), np.array(shifts, np.int64)
    )


def requant_fields(
    op: Op, ctx: LowerCtx, geo: Window, rq: Requant, weights: str, *, raw_bias: bool = True
) -> dict[str, object]:
    """The params fields convolutions share: geometry, offsets, clamp, folded bias,
    multipliers and (when some window leaves the image and the kernel handles borders with the
    reference formula, ``raw_bias``) the model's bias; the optional buffers (column, in-place
    temporary, re-laid weights) start unused: the lowering that uses one sets it."""
    raw = "0"
    if raw_bias and geo.border and rq.bias is not None:
        raw = ctx.ptr(op.inputs[2])
    fields: dict[str, object] = dict(geo.fields())
    fields.update(
        in_offset=rq.in_offset,
        out_offset=rq.out_offset,
        act_min=rq.act_min,
        act_max=rq.act_max,
        weights=weights,
        bias=raw,
        bias_eff=ctx.array("bias_eff", "int32_t", rq.bias_eff),
        mult=ctx.array("mult", "int32_t", rq.mult),
        shift=ctx.array("shift", "int32_t", rq.shift),
        col="0",
        inplace=0,
        tmp="0",
        wfew="0",
    )
    return fields
