"""DEPTHWISE_CONV_2D (int8), as TFLM's depthwise_conv.cc computes it (multipliers and padding:
``conv_common``), any depth multiplier, dilation and padding.

Kernel: ``tc_dwconv_s8`` (firmware/kernels/tc_depthwise.c). Weights are re-laid-out at compile
time in blocks of four channels (``weight_blocks``): the four channels of a tap form one 32-bit
word, as the kernel's four-channel dot products read them.

In place: with stride 1, depth multiplier 1 and an output as large as its input (any kernel
size, dilation), the op can write its output over its input through a ring temporary of
``Window.ring_pixels`` slots of four bytes (the kernel runs in blocks of four channels).

TFLM itself crashes on a DEPTHWISE_CONV_2D without bias; such models are accepted and tested
against a zero-bias twin.

16x8 (int16 activations, int64 bias): TFLM's int16 DepthwiseConvPerChannel through
``tc_dwconv_s16`` (int64 accumulation, ``s16``'s 64-bit requantization), weights in TFLite's
layout; not in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
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
    return Depthwise(
        macs=int(np.prod(o.shape, dtype=np.int64)) * kh * kw,
        in_place_scratch=int(geo.ring_pixels() * 4) if in_place else None,
        geo=geo,
        depth_mult=oc // c,
        rq=rq,
    )


def lower_s8(op: Op, g: Graph, d: Depthwise, ctx: LowerCtx, choice: Choice, w: np.ndarray) -> str:
    """The ``tc_dwconv_s8`` call of a depthwise convolution prepared by ``dwconv_s8``, its
    weights ``w`` [1, k_h, k_w, out_c]."""
    assert isinstance(d.rq, Requant)
    # the kernel reads the re-laid-out weights only: the model's layout never reaches flash
    blocks = ctx.array("weights", "int8_t", weight_blocks(w))
    fields = requant_fields(op, ctx, d.geo, d.rq, blocks)
    fields.update(groups=1, col="0", depth_mult=d.depth_mult)
    if choice.in_place:
        fields.update(inplace=1, tmp=ctx.scratch(choice.scratch_bytes(d)))
    return io_call("tc_dwconv_s8", op, ctx, ctx.params("tc_conv_params_t", fields))
