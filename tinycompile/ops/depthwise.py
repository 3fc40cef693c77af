"""DEPTHWISE_CONV_2D (int8), as TFLM's depthwise_conv.cc computes it (multipliers and padding:
``conv_common``), any depth multiplier, dilation and padding.

Kernel: ``tc_dwconv_s8`` (firmware/kernels/tc_depthwise.c). Weights are re-laid-out at compile
time in blocks of four channels (``weight_blocks``): the four channels of a tap form one 32-bit
word, as the kernel's four-channel dot products read them.

In place: with stride 1, depth multiplier 1 and an output as large as its input (any kernel
size, dilation), the op can write its output over its input through a ring temporary of
``Window.ring_pixels`` slots of four bytes (the kernel runs in blocks of four channels).

A small image (``padded_bytes`` up to ``DW_PADDED_MAX``: a MobileNet's last layers) runs
``tc_dwconv_s8_small`` where it has an arena buffer for a zero-point-padded copy of one block
of channels: the optional scratch out of place (granted where it costs no arena), the
temporary in place (then at least that copy, not only the ring, as TinyEngine's in-place
depthwise takes a padded channel). The Cortex-M0+ computes every pixel from that copy, no
border case and no ring; the other cores run tc_dwconv_s8 and leave it unused.

TFLM itself crashes on a DEPTHWISE_CONV_2D without bias; such models are accepted and tested
against a zero-bias twin.

16x8 (int16 activations, int64 bias): TFLM's int16 DepthwiseConvPerChannel through
``tc_dwconv_s16`` (int64 accumulation, ``s16``'s 64-bit requantization), weights in TFLite's
layout; not in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import rounding_divide_by_pot_np, srdhm_np
from . import s16, s16_fast
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, out
from .conv_common import (
    Requant,
    RowsByWindow,
    Window,
    channel_multipliers,
    check_io,
    conv_options,
    requant,
    requant_fields,
    weights,
    window,
    wrap_i32,
)


def weight_blocks(w: np.ndarray) -> np.ndarray:
    """Depthwise weights [1, k_h, k_w, out_c] as [ceil(out_c / 4)][k_h][k_w][4] (zero-padded):
    the four channels of a tap form one 32-bit word, taps follow each other 4 bytes apart."""
    _, kh, kw, oc = w.shape
    ocp = -(-oc // 4) * 4
    taps = np.zeros((kh * kw, ocp), np.int8)
    taps[:, :oc] = w.reshape(kh * kw, oc)
    return taps.reshape(kh * kw, ocp // 4, 4).transpose(1, 0, 2).reshape(-1)


@dataclass(frozen=True, kw_only=True)
class Depthwise(Prepared):
    geo: Window
    depth_mult: int
    rq: Requant | s16.Requant64


@register
class DepthwiseOp(RowsByWindow, Operator):
    kinds = ("DEPTHWISE_CONV_2D",)
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        a = conv_options(options, "DepthwiseConv2DOptions")
        a["depth_multiplier"] = options.get("depth_multiplier", 0)
        return a

    def prepare(self, op: Op, g: Graph) -> Depthwise:
        wide = check_io(op, g)
        w = inp(op, g, 1)
        if len(w.shape) != 4 or w.shape[0] != 1:
            raise fail(op, f"weights must be [1, k_h, k_w, out_c], got {list(w.shape)}")
        _, kh, kw, oc = w.shape
        geo = window(op, g, kh, kw)
        c = geo.in_c
        dm = op.attrs.get("depth_multiplier", 1)
        if geo.out_c != oc or c * dm != oc:
            raise fail(
                op, f"{c} input channels x depth multiplier {dm} != {oc} output channels / weights"
            )
        weights(op, g, oc)
        x, o = inp(op, g, 0), out(op, g)
        if wide:  # 16x8: plain loops in TFLite's weight layout, not in place
            s16.require_bias(op, g)
            rq16 = s16.requant(op, g, oc, *channel_multipliers(x.quant.s, w, o.quant.s, oc))
            macs = int(np.prod(o.shape, dtype=np.int64)) * kh * kw
            return Depthwise(macs=macs, geo=geo, depth_mult=oc // c, rq=rq16)
        mults, shifts = channel_multipliers(x.quant.s, w, o.quant.s, oc)
        return dwconv_s8(op, g, geo, np.asarray(w.data), mults, shifts)

    def lower(self, op: Op, g: Graph, d: Depthwise, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d.rq, s16.Requant64):
            wd = np.asarray(inp(op, g, 1).data)
            fast = s16_fast.lower_dw(op, ctx, d.geo, d.depth_mult, d.rq, wd)
            if fast is not None:
                return fast
            w = ctx.ptr(op.inputs[1])
            fields = s16.conv_fields(
                ctx, d.geo.fields(), d.rq, w, groups=1, depth_mult=d.depth_mult
            )
            return io_call("tc_dwconv_s16", op, ctx, ctx.params("tc_conv_s16_params_t", fields))
        return lower_s8(op, g, d, ctx, choice, np.asarray(inp(op, g, 1).data))


def dwconv_s8(op: Op, g: Graph, geo: Window, w: np.ndarray, mults: list, shifts: list) -> Depthwise:
    """The int8 depthwise convolution of ``op`` (input 0, optional int32 bias at input 2) over
    ``geo`` with the weights ``w`` [1, k_h, k_w, out_c], requantized per channel by ``mults``
    and ``shifts``: TFLite's multipliers, or onnxruntime's scales in tc_requant_conv's ONNX
    variant (``onnx_requant.onnx_multipliers``; a depthwise ONNX_CONV runs on this kernel
    too)."""
    x, o = inp(op, g, 0), out(op, g)
    _, kh, kw, oc = w.shape
    c = geo.in_c
    wsum = np.asarray(w, np.int64).reshape(-1, oc).sum(axis=0)
    rq = requant(op, g, oc, wsum, mults, shifts)
    in_place = geo.stride1 and oc == c and geo.same_size and not x.is_const
    d = Depthwise(
        macs=int(np.prod(o.shape, dtype=np.int64)) * kh * kw,
        in_place_scratch=int(geo.ring_pixels() * 4) if in_place else None,
        geo=geo,
        depth_mult=oc // c,
        rq=rq,
    )
    # a small image: tc_dwconv_s8_small's padded copy, as the optional scratch out of place and
    # as the temporary in place (instead of the ring, which it needs no more)
    pad = padded_bytes(geo)
    if kh * kw > 1 and pad <= DW_PADDED_MAX and kernel_of(d, False) == "tc_dwconv_s8":
        d = replace(d, scratch=pad)
        if in_place and kernel_of(d, True) == "tc_dwconv_s8":
            d = replace(d, in_place_scratch=max(int(geo.ring_pixels() * 4), pad))
    return d


def lower_s8(op: Op, g: Graph, d: Depthwise, ctx: LowerCtx, choice: Choice, w: np.ndarray) -> str:
    """The ``tc_dwconv_s8`` call of a depthwise convolution prepared by ``dwconv_s8``, its
    weights ``w`` [1, k_h, k_w, out_c] (``tc_dwconv1x1_s8`` for a 1x1 window with TFLite's
    requantization)."""
    assert isinstance(d.rq, Requant)
    if d.geo.k_h == d.geo.k_w == 1 and int(d.rq.shift.max()) <= 31:
        return lower_1x1(op, d, ctx, w)
    # the kernel reads the re-laid-out weights only: the model's layout never reaches flash
    blocks = ctx.array("weights", "int8_t", weight_blocks(w))
    fields = requant_fields(op, ctx, d.geo, d.rq, blocks)
    fields.update(groups=1, col="0", depth_mult=d.depth_mult)
    kernel = kernel_of(d, choice.in_place)
    # the padded copy of tc_dwconv_s8_small, where its bytes were reserved (a row band of a
    # streamed layer needs no more than its whole image)
    pad = padded_bytes(d.geo) if kernel == "tc_dwconv_s8" and d.scratch else None
    if choice.in_place:
        tmp = ctx.scratch(choice.scratch_bytes(d))
        fields.update(inplace=1, tmp=tmp)
        if pad is not None and pad <= (d.in_place_scratch or 0):
            fields.update(col=f"(int8_t *){tmp}")
            kernel = "tc_dwconv_s8_small"
    elif pad is not None and choice.use_scratch and pad <= d.scratch:
        fields.update(col=f"(int8_t *){ctx.scratch(choice.scratch_bytes(d))}")
        kernel = "tc_dwconv_s8_small"
    return io_call(kernel, op, ctx, ctx.params("tc_conv_params_t", fields))


DW_PADDED_MAX = 324  # bytes of tc_dwconv_s8_small's copy: a 3x3 window over 7x7 at stride 1


def padded_bytes(g: Window) -> int:
    """Bytes of tc_dwconv_s8_small's zero-point-padded copy of a block of four channels over
    every tap a window reads (4 * BH * BW); more than ``DW_PADDED_MAX`` where its rows are not
    one apart or fewer than three (the copy takes them three at a time)."""
    rows = (g.out_h - 1) * g.stride_h + (g.k_h - 1) * g.dil_h + 1
    cols = (g.out_w - 1) * g.stride_w + (g.k_w - 1) * g.dil_w + 1
    if g.dil_h != 1 or rows < 3:
        return DW_PADDED_MAX + 1
    return 4 * rows * cols


# tc_depthwise_dsp.c: outputs per buffer tile, (COLS - 4) / LS + 1 (the Cortex-M55's Helium path,
# tc_depthwise_mve.c, holds 30 and 15: every layer in place here is in place there too)
DW3_TILE = {1: 29, 2: 15}


def kernel_of(d: Depthwise, in_place: bool) -> str:
    """The entry point a depthwise layer calls, so that a model links only the DSP paths its
    layers take (each returns 0 where it does not apply and the portable loops run):
    ``tc_dwconv_s8`` where tc_dwconv3x3_dsp takes the layer (a 3x3 window, no dilation, depth
    multiplier 1, channels in fours, a stride along the lines of 1 or 2, in place only with
    lines within a tile, shifts in -23..-1, folded biases under 2^29); ``tc_dwconv_s8_3x3n``
    for the same layers over channels not in fours (tc_dwconv3x3n_dsp, whose last block holds
    one to three channels); else ``tc_dwconv_s8_kxk`` where the any-window path may apply
    (windows up to 7x7, no dilation; its 5 KB are linked only where a layer calls it). On the
    Cortex-M0+ the kxk entry tries the path for depth multipliers in fours first
    (tc_depthwise_m0.c's tc_dwconv_dm4_m0: such layers, windows up to 7x7, always take it); on
    the Cortex-M55 all three try the Helium 3x3 path first (tc_depthwise_mve.c: depth
    multiplier 1, any channel count and requantization), so the generated code is the same for
    every core and that core links no 3x3 DSP path. ``lower_s8`` turns ``tc_dwconv_s8`` into
    ``tc_dwconv_s8_small`` over a small image where it has the arena buffer that needs
    (``padded_bytes``): on the Cortex-M0+ a padded copy of each block, elsewhere tc_dwconv_s8
    itself (a macro of tc_depthwise.h)."""
    g, rq = d.geo, d.rq
    vert = g.out_h > g.out_w
    ls, line = (g.stride_h, g.out_h) if vert else (g.stride_w, g.out_w)
    three = (
        g.k_h == g.k_w == 3
        and g.dil_h == g.dil_w == 1
        and d.depth_mult == 1
        and ls in DW3_TILE
        and not (in_place and line > DW3_TILE[ls])
        and all(-23 <= int(s) <= -1 for s in np.asarray(rq.shift).reshape(-1))
        and int(np.abs(np.asarray(rq.bias_eff, np.int64)).max(initial=0)) < 1 << 29
    )
    if three:
        return "tc_dwconv_s8" if g.in_c % 4 == 0 else "tc_dwconv_s8_3x3n"
    fits = max(g.k_h, g.k_w) <= 7 and g.dil_h == g.dil_w == 1
    return "tc_dwconv_s8_kxk" if fits else "tc_dwconv_s8"


LUT_CHANNELS = 64  # 1x1 layers up to this many output channels are tabulated (256 B each)


def table_1x1(w: np.ndarray, rq: Requant) -> np.ndarray:
    """[out_c][256]: TFLM's output of each output channel of a 1x1 depthwise layer (weights
    ``w`` [out_c]) for each input value -128..127: bias + w * (x + in_offset) in int32,
    MultiplyByQuantizedMultiplier (the left shift wrapping in int32, as the kernels), the
    output zero point, the clamp (each table belongs to its output channel, whatever the
    depth multiplier)."""
    oc = w.size
    b = rq.bias if rq.bias is not None else np.zeros(oc, np.int64)
    x = np.arange(-128, 128, dtype=np.int64)[None, :]
    acc = wrap_i32(b[:, None] + w.astype(np.int64)[:, None] * (x + rq.in_offset)).astype(np.int64)
    shift = rq.shift.astype(np.int64)[:, None]
    xs = wrap_i32(acc << np.maximum(shift, 0)).astype(np.int64)
    y = rounding_divide_by_pot_np(
        srdhm_np(xs, rq.mult.astype(np.int64)[:, None]), -np.minimum(shift, 0)
    )
    return np.clip(y + rq.out_offset, rq.act_min, rq.act_max).astype(np.int8)


def lower_1x1(op: Op, d: Depthwise, ctx: LowerCtx, w: np.ndarray) -> str:
    """A 1x1 depthwise layer: ``tc_dwconv1x1_s8``, tabulated up to ``LUT_CHANNELS`` channels,
    else computed per output (in place or not: each output replaces only its own input)."""
    geo, rq = d.geo, d.rq
    assert isinstance(rq, Requant)
    wv = np.asarray(w, np.int8).reshape(-1)
    fields: dict[str, object] = {k: v for k, v in geo.fields().items() if k in DW1_GEO}
    fields.update(depth_mult=d.depth_mult, out_offset=rq.out_offset)
    fields.update(act_min=rq.act_min, act_max=rq.act_max)
    if wv.size <= LUT_CHANNELS:
        fields.update(lut=ctx.array("lut", "int8_t", table_1x1(wv, rq)))
        fields.update(weights="0", bias_eff="0", mult="0", shift="0")
    else:
        fields.update(lut="0", weights=ctx.array("weights", "int8_t", wv))
        fields.update(bias_eff=ctx.array("bias_eff", "int32_t", rq.bias_eff))
        fields.update(mult=ctx.array("mult", "int32_t", rq.mult))
        fields.update(shift=ctx.array("shift", "int32_t", rq.shift))
    return io_call("tc_dwconv1x1_s8", op, ctx, ctx.params("tc_dw1x1_params_t", fields))


DW1_GEO = ("batches", "in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "stride_h", "stride_w")
