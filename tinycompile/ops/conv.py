"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (int8 activations, int8 weights, int32 bias).

Arithmetic is TensorFlow Lite Micro's:

- CONV_2D / DEPTHWISE_CONV_2D (conv_common.cc, depthwise_conv_common.cc ->
  ``PopulateConvolutionQuantizationParams``): one multiplier per output channel from
  ``double(input_scale) * double(filter_scale[c]) / double(output_scale)`` (a per-tensor filter
  scale is broadcast), computed in double. The filter zero point is ignored by the kernels.
- FULLY_CONNECTED (fully_connected_common.cc): the same double formula, per output channel or
  once for per-tensor weights. TFLM's source reads as if the per-tensor product were taken in
  float (``GetQuantizedConvolutionMultipler``), but the installed TFLM agrees with the double
  product on inputs where the two differ (``test_fc_multiplier_rule`` finds such inputs).
- Padding: ``ComputePaddingHeightWidth`` (top/left pad = floor of half the total); padded taps
  contribute nothing to the accumulator.

At compile time we fold the input zero point into the bias
(``bias_eff = bias + input_offset * sum(weights)``, wrapped to int32 exactly as the kernel's int32
accumulator would wrap), so interior outputs are pure int8 dot products; border outputs use the
model's bias and the reference formula, or, for CONV_2D with an im2col scratch buffer (k x k
windows of at most ``IM2COL_MAX_BYTES / 2`` values, no groups), are copied with the input zero
point in the padding (contributing exactly nothing). Depthwise weights are re-laid-out in blocks
of four channels (``dw_weight_blocks``). Kernels: firmware/kernels/tc_conv.c.

In place (``op.attrs["inplace"]``, see ``inplace_candidate``): pointwise CONV_2D, stride-1
same-size CONV_2D with no more output than input channels, and stride-1 same-size
DEPTHWISE_CONV_2D can write their output over their input; the planner then
gives both tensors one arena buffer, and the kernels take their in-place variant with a small
arena temp (``inplace_scratch``). The arithmetic per output is the ordinary path's.

TFLM's own limits, mirrored: weight zero points must be 0 (the per-channel kernels ignore them),
int32 biases (int64 belongs to int16 activations), weights_format 0 (shuffled FC weights are
not supported). A missing bias (input index -1) is accepted for all three ops; note that TFLM
itself crashes on a DEPTHWISE_CONV_2D without bias, so that case is tested against a zero bias.
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op, Tensor
from ..passes.qmath import quantize_multiplier
from . import LowerCtx, fail, register
from .common import activation_range, inp, out, require_int8

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


def has_border(size: int, k: int, stride: int, dil: int, pad: int, out_n: int) -> bool:
    """Whether any output position's window reaches outside the input along one axis."""
    for o in range(out_n):
        o0 = o * stride - pad
        if o0 < 0 or o0 + (k - 1) * dil >= size:
            return True
    return False


# ---------------------------------------------------------------------------- checks


def _check_io(op: Op, g: Graph, n_in_min: int) -> None:
    if len(op.outputs) != 1:
        raise fail(op, f"expects 1 output, has {len(op.outputs)}")
    if len(op.inputs) < n_in_min or len(op.inputs) > 3:
        raise fail(op, f"expects {n_in_min} or 3 inputs, has {len(op.inputs)}")
    if op.inputs[0] < 0 or op.inputs[1] < 0:
        raise fail(op, "input and weights are required")
    require_int8(op, g, [op.inputs[0], op.outputs[0]])


def _weights(op: Op, g: Graph, out_c: int, axis: int) -> Tensor:
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


def _bias(op: Op, g: Graph, out_c: int) -> np.ndarray | None:
    """The model's int32 bias as int64 values, or None when the op has no bias input."""
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    b = inp(op, g, 2)
    if b.dtype != "int32":
        raise fail(op, f"{b.dtype} bias is not supported (int32 only)")
    if not b.is_const:
        raise fail(op, "bias must be a constant tensor")
    if b.size != out_c:
        raise fail(op, f"bias has {b.size} values for {out_c} output channels")
    # The bias' own quantization (scale, quantized_dimension) is not used by TFLM's int8
    # kernels; any layout with one value per output channel is accepted, as TFLM does.
    return np.asarray(b.data, dtype=np.int64).reshape(-1)


def _conv_multipliers(in_s: float, w: Tensor, out_s: float, out_c: int) -> tuple[list, list]:
    """PopulateConvolutionQuantizationParams: per channel, in double."""
    scales = w.quant.scale.astype(np.float32)
    mults, shifts = [], []
    for c in range(out_c):
        fs = float(scales[c] if scales.size > 1 else scales[0])
        m, s = quantize_multiplier(in_s * fs / out_s)
        mults.append(m)
        shifts.append(s)
    return mults, shifts


def window_geometry(op: Op, g: Graph, kh: int, kw: int) -> dict[str, int]:
    """Geometry of a 2-D windowed op: dims, strides, dilations, padding (checked)."""
    x, o = inp(op, g, 0), out(op, g)
    if len(x.shape) != 4 or len(o.shape) != 4:
        raise fail(op, f"expects rank-4 NHWC input and output, got {list(x.shape)}")
    padding = op.attrs.get("padding")
    if padding not in ("SAME", "VALID"):
        raise fail(op, f"padding {padding} is not supported")
    sh, sw = op.attrs.get("stride", (1, 1))
    dh, dw = op.attrs.get("dilation", (1, 1))
    if min(sh, sw) < 1 or min(dh, dw) < 1:
        raise fail(op, f"stride {sh}x{sw} / dilation {dh}x{dw} must be positive")
    if max(sh, sw, dh, dw, (kh - 1) * dh + 1, (kw - 1) * dw + 1) > MAX_WINDOW:
        raise fail(op, f"stride {sh}x{sw}, dilation {dh}x{dw} or window {kh}x{kw} is absurd"
                       f" (limit {MAX_WINDOW})")
    if kh < 1 or kw < 1:
        raise fail(op, f"empty {kh}x{kw} window")
    n, h, wd, c = x.shape
    oh = out_size(padding, h, kh, sh, dh)
    ow = out_size(padding, wd, kw, sw, dw)
    if o.shape[0] != n or o.shape[1] != oh or o.shape[2] != ow:
        raise fail(op, f"output shape {list(o.shape)} does not match the expected {oh}x{ow}")
    if oh < 1 or ow < 1:
        raise fail(op, "the window is larger than the input")
    ph = pad_before(sh, dh, h, kh, oh)
    pw = pad_before(sw, dw, wd, kw, ow)
    border = has_border(h, kh, sh, dh, ph, oh) or has_border(wd, kw, sw, dw, pw, ow)
    return {
        "batches": n,
        "in_h": h,
        "in_w": wd,
        "in_c": c,
        "out_h": oh,
        "out_w": ow,
        "out_c": o.shape[3],
        "k_h": kh,
        "k_w": kw,
        "stride_h": sh,
        "stride_w": sw,
        "dil_h": dh,
        "dil_w": dw,
        "pad_h": ph,
        "pad_w": pw,
        "border": int(border),
    }


def check_conv(op: Op, g: Graph) -> None:
    _check_io(op, g, 2)
    w = inp(op, g, 1)
    if len(w.shape) != 4:
        raise fail(op, f"weights must be rank 4 [out_c, k_h, k_w, in_c], got {list(w.shape)}")
    oc, kh, kw, kc = w.shape
    geo = window_geometry(op, g, kh, kw)
    if geo["out_c"] != oc:
        raise fail(op, f"output has {geo['out_c']} channels, weights {oc}")
    c = geo["in_c"]
    if kc < 1 or c % kc != 0:
        raise fail(op, f"input channels {c} are not a multiple of the filter depth {kc}")
    groups = c // kc
    if oc % groups != 0:
        raise fail(op, f"{oc} output channels do not split into {groups} groups")
    _weights(op, g, oc, 0)
    _bias(op, g, oc)
    activation_range(op, out(op, g))


def check_dwconv(op: Op, g: Graph) -> None:
    _check_io(op, g, 2)
    w = inp(op, g, 1)
    if len(w.shape) != 4 or w.shape[0] != 1:
        raise fail(op, f"weights must be [1, k_h, k_w, out_c], got {list(w.shape)}")
    _, kh, kw, oc = w.shape
    geo = window_geometry(op, g, kh, kw)
    c = geo["in_c"]
    dm = op.attrs.get("depth_multiplier", 1)
    if geo["out_c"] != oc or c * dm != oc:
        raise fail(
            op, f"{c} input channels x depth multiplier {dm} != {oc} output channels / weights"
        )
    _weights(op, g, oc, 3)
    _bias(op, g, oc)
    activation_range(op, out(op, g))


def _fc_dims(op: Op, g: Graph) -> tuple[int, int, int]:
    """(batches, depth, out_c) of a FULLY_CONNECTED op, checked as TFLM reads them."""
    x, w, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if len(w.shape) != 2:
        raise fail(op, f"weights must be rank 2 [out_c, depth], got {list(w.shape)}")
    oc, depth = w.shape
    if not o.shape or o.shape[-1] != oc:
        raise fail(op, f"output shape {list(o.shape)} does not end in {oc} channels")
    batches = o.size // oc if oc else 0
    if depth < 1 or x.size != batches * depth:
        raise fail(
            op, f"input of {x.size} values is not {batches} rows of the weights' depth {depth}"
        )
    if op.attrs.get("keep_num_dims") and tuple(o.shape[:-1]) != tuple(x.shape[:-1]):
        raise fail(op, f"keep_num_dims output {list(o.shape)} does not match input {x.shape}")
    return batches, depth, oc


def check_fc(op: Op, g: Graph) -> None:
    _check_io(op, g, 2)
    if op.attrs.get("weights_format", 0) != 0:
        raise fail(op, f"weights format {op.attrs.get('weights_format')} is not supported")
    _, _, oc = _fc_dims(op, g)
    _weights(op, g, oc, 0)
    _bias(op, g, oc)
    activation_range(op, out(op, g))


# ---------------------------------------------------------------------------- costs


def conv_macs(op: Op, g: Graph) -> int:
    o, w = out(op, g), inp(op, g, 1)
    return int(np.prod(o.shape, dtype=np.int64)) * int(np.prod(w.shape[1:], dtype=np.int64))


def dwconv_macs(op: Op, g: Graph) -> int:
    o, w = out(op, g), inp(op, g, 1)
    return int(np.prod(o.shape, dtype=np.int64)) * w.shape[1] * w.shape[2]


def fc_macs(op: Op, g: Graph) -> int:
    w = inp(op, g, 1)
    return out(op, g).size * w.shape[1]


# ---------------------------------------------------------------------------- lowering


def _common_fields(
    op: Op, g: Graph, ctx: LowerCtx, geo: dict, wsum: np.ndarray, *, raw_bias: bool = True
) -> dict:
    """Offsets, clamp, folded bias and (when some window leaves the image and the kernel
    handles borders with the reference formula, ``raw_bias``) the model's bias."""
    x, o = inp(op, g, 0), out(op, g)
    in_off = -x.quant.zp
    lo, hi = activation_range(op, o)
    oc = geo["out_c"]
    bias = _bias(op, g, oc)
    b64 = bias if bias is not None else np.zeros(oc, np.int64)
    bias_eff = wrap_i32(b64 + in_off * wsum.astype(np.int64))
    raw = "0"
    if raw_bias and geo["border"] and bias is not None:
        raw = ctx.ptr(op.inputs[2])
    mults, shifts = _conv_multipliers(x.quant.s, inp(op, g, 1), o.quant.s, oc)
    fields = {k: v for k, v in geo.items() if k != "border"}
    fields.update(
        in_offset=in_off,
        out_offset=o.quant.zp,
        act_min=lo,
        act_max=hi,
        weights=ctx.ptr(op.inputs[1]),
        bias=raw,
        bias_eff=ctx.array("bias_eff", "int32_t", bias_eff),
        mult=ctx.array("mult", "int32_t", np.array(mults, np.int64)),
        shift=ctx.array("shift", "int32_t", np.array(shifts, np.int64)),
    )
    return fields


IM2COL_MAX_BYTES = 2048  # arena scratch a CONV_2D may claim for its im2col buffer


# ---------------------------------------------------------------------------- in place


def inplace_candidate(op: Op, g: Graph) -> bool:
    """Whether the op's kernel can run with its output over its input (same arena offset):

    - CONV_2D 1x1, stride 1, no groups, any channel counts (pointwise);
    - CONV_2D k x k, stride 1, no groups, output as large as the input (SAME), no more output
      than input channels (e.g. ResNet's 3x3 blocks);
    - DEPTHWISE_CONV_2D with stride 1, depth multiplier 1 and an output as large as its input
      (any kernel size, dilation).

    Only the op is judged; whether input 0 dies here (and is no graph output) is the planner's
    business. Setting ``op.attrs["inplace"] = True`` on such an op makes its lowering emit the
    in-place kernel variant and claim its scratch (``inplace_scratch``)."""
    if op.kind not in ("CONV_2D", "DEPTHWISE_CONV_2D") or not op.inputs or op.inputs[0] < 0:
        return False
    if g.t(op.inputs[0]).is_const:
        return False
    try:
        if op.kind == "CONV_2D":
            check_conv(op, g)
        else:
            check_dwconv(op, g)
    except CompileError:
        return False
    w = inp(op, g, 1)
    if op.kind == "CONV_2D":
        _, kh, kw, kc = w.shape
        geo = window_geometry(op, g, kh, kw)
        if kc != geo["in_c"] or not _stride1(geo):
            return False
        return (kh == 1 and kw == 1) or (_same_size(geo) and geo["out_c"] <= geo["in_c"])
    geo = window_geometry(op, g, w.shape[1], w.shape[2])
    return _stride1(geo) and geo["out_c"] == geo["in_c"] and _same_size(geo)


def _stride1(geo: dict[str, int]) -> bool:
    return geo["stride_h"] == 1 and geo["stride_w"] == 1


def _same_size(geo: dict[str, int]) -> bool:
    return (geo["out_h"], geo["out_w"]) == (geo["in_h"], geo["in_w"])


def _inplace(op: Op, g: Graph) -> bool:
    """True when the op is asked to run in place; refuses ops that cannot (the planner would
    otherwise overlap their input and output under the ordinary kernel)."""
    if not op.attrs.get("inplace"):
        return False
    if not inplace_candidate(op, g):
        raise fail(op, "cannot run in place (inplace=True on an op that is no in-place candidate)")
    return True


def inplace_scratch(op: Op, g: Graph) -> int:
    """Scratch of the in-place kernels: a ring of R = min(pad_h * w + pad_w + 1, h * w)
    outputs (input pixel j is last read by output pixel j + pad_h * w + pad_w, so output j is
    held back until then). CONV_2D: R pixels of out_c bytes (1x1: one pixel); depthwise, which
    runs in blocks of four channels (the kernel's four-channel dot products): R slots of four
    bytes."""
    w = inp(op, g, 1)
    if op.kind == "CONV_2D":
        oc, kh, kw, _ = w.shape
        if kh == 1 and kw == 1:
            return int(oc)
    else:
        kh, kw, oc = w.shape[1], w.shape[2], 4
    geo = window_geometry(op, g, kh, kw)
    ring = min(geo["pad_h"] * geo["in_w"] + geo["pad_w"] + 1, geo["in_h"] * geo["in_w"])
    return int(ring * oc)


def conv_scratch(op: Op, g: Graph) -> int:
    """im2col buffer (two windows of k_h * k_w * in_c) for k x k convolutions without groups,
    when it is small; 1x1 convolutions read their windows in place. In place: the in-place
    kernel's temp (needed, whatever ``no_scratch`` says)."""
    if _inplace(op, g):
        return inplace_scratch(op, g)
    w, x = inp(op, g, 1), inp(op, g, 0)
    _, kh, kw, kc = w.shape
    if (kh == 1 and kw == 1) or kc != x.shape[3] or op.attrs.get("no_scratch"):
        return 0
    n = 2 * kh * kw * kc
    return n if n <= IM2COL_MAX_BYTES else 0


def dwconv_scratch(op: Op, g: Graph) -> int:
    return inplace_scratch(op, g) if _inplace(op, g) else 0


def _inplace_fields(op: Op, g: Graph, ctx: LowerCtx) -> dict[str, object]:
    return {"inplace": 1, "tmp": ctx.scratch(inplace_scratch(op, g))}


@register("CONV_2D", check=check_conv, macs=conv_macs, scratch=conv_scratch)
def lower_conv(op: Op, g: Graph, ctx: LowerCtx) -> str:
    w = inp(op, g, 1)
    oc, kh, kw, kc = w.shape
    geo = window_geometry(op, g, kh, kw)
    wsum = np.asarray(w.data, np.int64).reshape(oc, -1).sum(axis=1)
    inplace = _inplace(op, g)
    col = 0 if inplace else conv_scratch(op, g)
    # with im2col every window is copied with the zero point as padding: no raw bias needed
    fields = _common_fields(op, g, ctx, geo, wsum, raw_bias=not col)
    fields.update(groups=geo["in_c"] // kc, depth_mult=1, col=ctx.scratch(col) if col else "0")
    if inplace:
        fields.update(_inplace_fields(op, g, ctx))
    p = ctx.params("tc_conv_params_t", fields)
    return f"tc_conv_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"


def dw_weight_blocks(w: np.ndarray) -> np.ndarray:
    """Depthwise weights [1, k_h, k_w, out_c] as [ceil(out_c / 4)][k_h][k_w][4] (zero-padded):
    the four channels of a tap form one 32-bit word, taps follow each other 4 bytes apart."""
    _, kh, kw, oc = w.shape
    ocp = -(-oc // 4) * 4
    taps = np.zeros((kh * kw, ocp), np.int8)
    taps[:, :oc] = w.reshape(kh * kw, oc)
    return taps.reshape(kh * kw, ocp // 4, 4).transpose(1, 0, 2).reshape(-1)


@register("DEPTHWISE_CONV_2D", check=check_dwconv, macs=dwconv_macs, scratch=dwconv_scratch)
def lower_dwconv(op: Op, g: Graph, ctx: LowerCtx) -> str:
    w = inp(op, g, 1)
    _, kh, kw, oc = w.shape
    geo = window_geometry(op, g, kh, kw)
    wsum = np.asarray(w.data, np.int64).reshape(-1, oc).sum(axis=0)
    fields = _common_fields(op, g, ctx, geo, wsum)
    fields.update(
        groups=1,
        col="0",
        depth_mult=oc // geo["in_c"],
        weights=ctx.array("weights", "int8_t", dw_weight_blocks(np.asarray(w.data))),
    )
    if _inplace(op, g):
        fields.update(_inplace_fields(op, g, ctx))
    p = ctx.params("tc_conv_params_t", fields)
    return f"tc_dwconv_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"


def fc_multipliers(op: Op, g: Graph) -> tuple[list[int], list[int]]:
    """CalculateOpDataFullyConnected: double(input_scale) * double(filter_scale) / double(out),
    per channel or once per tensor (what the installed TFLM computes; see the module doc)."""
    x, w, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if w.quant.per_channel:
        return _conv_multipliers(x.quant.s, w, o.quant.s, w.shape[0])
    m, s = quantize_multiplier(float(x.quant.scale[0]) * float(w.quant.scale[0]) / o.quant.s)
    return [m], [s]


@register("FULLY_CONNECTED", check=check_fc, macs=fc_macs)
def lower_fc(op: Op, g: Graph, ctx: LowerCtx) -> str:
    x, w, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    batches, depth, oc = _fc_dims(op, g)
    in_off = -x.quant.zp
    bias = _bias(op, g, oc)
    b64 = bias if bias is not None else np.zeros(oc, np.int64)
    wsum = np.asarray(w.data, np.int64).sum(axis=1)
    lo, hi = activation_range(op, o)
    mults, shifts = fc_multipliers(op, g)
    fields = {
        "batches": batches,
        "depth": depth,
        "out_c": oc,
        "out_offset": o.quant.zp,
        "act_min": lo,
        "act_max": hi,
        "per_channel": int(len(mults) > 1),
        "weights": ctx.ptr(op.inputs[1]),
        "bias_eff": ctx.array("bias_eff", "int32_t", wrap_i32(b64 + in_off * wsum)),
        "mult": ctx.array("mult", "int32_t", np.array(mults, np.int64)),
        "shift": ctx.array("shift", "int32_t", np.array(shifts, np.int64)),
    }
    p = ctx.params("tc_fc_params_t", fields)
    return f"tc_fc_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"
