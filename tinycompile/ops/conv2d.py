"""CONV_2D (int8 activations, int8 weights per channel or per tensor, int32 bias), as TFLM's
conv.cc computes it (multipliers and padding: ``conv_common``).

Kernel: ``tc_conv_s8`` (firmware/kernels/tc_conv2d.c). k x k convolutions without groups whose
two windows fit ``IM2COL_MAX_BYTES`` may copy windows into an im2col scratch buffer, with the
input zero point as padding (padded taps then contribute exactly nothing, so no raw bias is
needed); the planner may refuse that scratch where it sits at the SRAM peak. 1x1 convolutions
read their windows in place.

In place (TinyEngine-style): a 1x1 stride-1 convolution without groups (any channel counts), or
a stride-1 same-size k x k convolution without groups and with no more output than input
channels, can write its output over its input through a ring temporary of ``Window.ring_pixels``
pixels (1x1: one pixel) of ``out_c`` bytes. The arithmetic per output is the ordinary path's.

16x8 (int16 activations, int64 bias): TFLM's int16 ConvPerChannel through ``tc_conv_s16``
(int64 accumulation, ``s16``'s 64-bit requantization); no im2col, not in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import s16
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, out
from .conv_common import (
    Requant,
    Window,
    channel_multipliers,
    check_io,
    conv_options,
    requant,
    requant_fields,
    weights,
    window,
)

IM2COL_MAX_BYTES = 2048  # arena scratch a CONV_2D may claim for its im2col buffer


@dataclass(frozen=True, kw_only=True)
class Conv2D(Prepared):
    geo: Window
    groups: int
    rq: Requant | s16.Requant64


@register
class Conv2DOp(Operator):
    kinds = ("CONV_2D",)
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        if not options:
            return {"padding": "SAME", "stride": (1, 1), "dilation": (1, 1), "activation": "NONE"}
        a = conv_options(options, "Conv2DOptions")
        return a

    def prepare(self, op: Op, g: Graph) -> Conv2D:
        wide = check_io(op, g)
        w = inp(op, g, 1)
        if len(w.shape) != 4:
            raise fail(op, f"weights must be rank 4 [out_c, k_h, k_w, in_c], got {list(w.shape)}")
        oc, kh, kw, kc = w.shape
        geo = window(op, g, kh, kw)
        if geo.out_c != oc:
            raise fail(op, f"output has {geo.out_c} channels, weights {oc}")
        c = geo.in_c
        if kc < 1 or c % kc != 0:
            raise fail(op, f"input channels {c} are not a multiple of the filter depth {kc}")
        groups = c // kc
        if oc % groups != 0:
            raise fail(op, f"{oc} output channels do not split into {groups} groups")
        weights(op, g, oc)
        x, o = inp(op, g, 0), out(op, g)
        macs = int(np.prod(o.shape, dtype=np.int64)) * int(np.prod(w.shape[1:], dtype=np.int64))
        if wide:  # 16x8: plain loops, no im2col, not in place
            s16.require_bias(op, g)
            rq16 = s16.requant(op, g, oc, *channel_multipliers(x.quant.s, w, o.quant.s, oc))
            return Conv2D(macs=macs, geo=geo, groups=groups, rq=rq16)
        wsum = np.asarray(w.data, np.int64).reshape(oc, -1).sum(axis=1)
        rq = requant(op, g, oc, wsum, *channel_multipliers(x.quant.s, w, o.quant.s, oc))
        pointwise = kh == 1 and kw == 1
        col = 0 if pointwise or groups != 1 else 2 * kh * kw * kc
        in_place = groups == 1 and geo.stride1 and (pointwise or (geo.same_size and oc <= c))
        ring = 1 if pointwise else geo.ring_pixels()
        return Conv2D(
            macs=macs,
            scratch=col if col <= IM2COL_MAX_BYTES else 0,
            in_place_scratch=int(ring * oc) if in_place and not x.is_const else None,
            geo=geo,
            groups=groups,
            rq=rq,
        )

    def lower(self, op: Op, g: Graph, d: Conv2D, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d.rq, s16.Requant64):
            w = ctx.ptr(op.inputs[1])
            fields = s16.conv_fields(ctx, d.geo.fields(), d.rq, w, groups=d.groups, depth_mult=1)
            return io_call("tc_conv_s16", op, ctx, ctx.params("tc_conv_s16_params_t", fields))
        assert isinstance(d.rq, Requant)
        col = 0 if choice.in_place or not choice.use_scratch else d.scratch
        # with im2col every window is copied with the zero point as padding: no raw bias needed
        fields = requant_fields(op, ctx, d.geo, d.rq, ctx.ptr(op.inputs[1]), raw_bias=not col)
        fields.update(groups=d.groups, depth_mult=1, col=ctx.scratch(col) if col else "0")
        if choice.in_place:
            fields.update(inplace=1, tmp=ctx.scratch(choice.scratch_bytes(d)))
        return io_call("tc_conv_s8", op, ctx, ctx.params("tc_conv_params_t", fields))
