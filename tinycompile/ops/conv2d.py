"""CONV_2D (int8 activations, int8 weights per channel or per tensor, int32 bias), as TFLM's
conv.cc computes it (multipliers and padding: ``conv_common``).

On the Cortex-M55 every entry below first tries the Helium column GEMM (tc_conv2d_mve.c), which
takes every layer without groups, few-channel ones included, over the same weights and
parameters; the lowering is the same for every core.

Kernel: ``tc_conv_s8`` (firmware/kernels/tc_conv2d.c), ``tc_conv_s8_grouped`` for a grouped
layer (on the Cortex-M0+ only such layers link the portable loops), ``tc_conv_s8_col`` and
``tc_conv_s8_chunk`` for one whose every pixel goes through the column GEMM (``col_entry``; on the
Cortex-M4/M7 a model whose convolutions all do links none of tc_conv_s8's other loops). A
convolution without groups
may take a
column buffer of two pixels' windows (``col16_bytes``, at most ``IM2COL_MAX_BYTES``), windows
copied with the input zero point as padding (padded taps then contribute exactly nothing): on
Cortex-M4/M7 the int16 column GEMM of tc_conv2d_dsp.c for every window (1x1 included, and in
place beside the ring or temp), elsewhere an int8 im2col of k x k windows. It is optional: the
planner grants it only where it costs no arena (``planner.policy``); without it, M4/M7 builds
put it in the output's own unwritten tail where that is big enough.

In place (TinyEngine-style): a 1x1 stride-1 convolution without groups (any channel counts), or
a stride-1 same-size k x k convolution without groups and with no more output than input
channels, can write its output over its input through a ring temporary of ``Window.ring_pixels``
pixels (1x1: one pixel) of ``out_c`` bytes. The arithmetic per output is the ordinary path's.

Few input channels (``few.py``): a TFLite CONV_2D over 1 to 3 input channels with a small
window runs ``tc_conv_few_s8`` (tc_conv2d_few*.c) over a second copy of its weights laid out
for it (``wfew``); no column buffer, not in place.

Pointwise over few input channels (``pwf.py``): a 1x1 CONV_2D over 1 to 12 input channels (but
8) runs ``tc_conv_pw_s8`` (tc_conv2d_pwf.c) over a stream of per-channel constants and int16
weight pairs that replaces the weights, folded bias and multipliers; no column buffer, in place
without a temp.

16x8 (int16 activations, int64 bias): TFLM's int16 ConvPerChannel through ``tc_conv_s16``
(int64 accumulation, ``s16``'s 64-bit requantization); no im2col, not in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import few, pwf, s16, s16_fast
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
    smmlar_ok,
    weights,
    window,
)

IM2COL_MAX_BYTES = 4096  # arena scratch a CONV_2D may claim for its column buffer


def col16_bytes(k: int, in_c: int) -> int:
    """The column buffer of two output pixels for windows of ``k`` values over ``in_c``
    channels, as firmware/kernels/tc_conv2d_dsp.c lays it out (``tc_col16_bytes``): 16 bytes
    per group of four values, and an int8 staging copy of the window when ``in_c % 4``. The
    portable kernels' int8 im2col (``2 * k`` bytes) fits in it."""
    groups = (k + 3) // 4
    return groups * 16 + (groups * 4 if in_c % 4 else 0)


OUTCOL_MAX_K = 64  # tc_conv2d.c's TC_CONV_OUTCOL_MAX_K
COL16_MIN_K = 16  # tc_conv2d_dsp.c's TC_COL16_MIN_K: smaller windows skip the column there


def tail_stands_in(geo: Window, k: int, groups: int) -> bool:
    """Whether tc_conv_s8, out of place and without a column buffer, copies its windows into
    its own output's unwritten tail instead (a k x k window of at most OUTCOL_MAX_K values,
    the tail's pixels few enough): as in tc_conv2d.c."""
    if groups != 1 or geo.k_h * geo.k_w == 1 or k > OUTCOL_MAX_K:
        return False
    t = (2 * k + geo.out_c - 1) // geo.out_c
    return 8 * t <= geo.batches * geo.out_h * geo.out_w


@dataclass(frozen=True, kw_only=True)
class Conv2D(Prepared):
    geo: Window
    groups: int
    rq: Requant | s16.Requant64
    few: bool = False  # tc_conv_few_s8 over the ``wfew`` weights (few.py)
    smmlar: bool = False  # requantization exact with SMMLAR (smmlar_ok; TC_CONV_RQ_SMMLAR)
    pwf: bool = False  # tc_conv_pw_s8 over the ``wfew`` stream (pwf.py)


@register
class Conv2DOp(RowsByWindow, Operator):
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
        mults, shifts = channel_multipliers(x.quant.s, w, o.quant.s, oc)
        if groups == 1 and few.takes(geo, shifts):
            wsum = np.asarray(w.data, np.int64).reshape(oc, -1).sum(axis=1)
            rq = requant(op, g, oc, wsum, mults, shifts)
            return Conv2D(macs=macs, geo=geo, groups=1, rq=rq, few=True)
        d = conv_s8(op, g, geo, groups, mults, shifts)
        if isinstance(d.rq, Requant) and pwf.takes(geo, groups, np.asarray(w.data), d.rq):
            # no column buffer; in place without a temp (pwf.py)
            in_place = 0 if d.in_place_scratch is not None else None
            return replace(
                d, pwf=True, scratch=0, scratch_stand_in=False, in_place_scratch=in_place
            )
        return d

    def lower(self, op: Op, g: Graph, d: Conv2D, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d.rq, s16.Requant64):
            wd = np.asarray(inp(op, g, 1).data)
            fast = s16_fast.lower_conv(op, ctx, d.geo, d.groups, d.rq, wd)
            if fast is not None:
                return fast
            w = ctx.ptr(op.inputs[1])
            fields = s16.conv_fields(ctx, d.geo.fields(), d.rq, w, groups=d.groups, depth_mult=1)
            return io_call("tc_conv_s16", op, ctx, ctx.params("tc_conv_s16_params_t", fields))
        return lower_s8(op, g, d, ctx, choice)


CHUNK_MAX_OC = 32  # tc_conv2d_chunk_dsp.c's TC_CHUNK_OC
PW_STACK_COL = 320  # tc_conv2d_dsp.c's TC_PW_STACK_COL: a whole column on the stack up to it


def chunk_ok(d: Conv2D) -> bool:
    """tc_conv2d_chunk_dsp.c's tc_conv_chunk_ok: a k x k window over in_c % 4 == 0 channels
    into at most CHUNK_MAX_OC, exact SMMLAR requantization (``smmlar``)."""
    geo = d.geo
    return (
        d.groups == 1
        and geo.k_h * geo.k_w > 1
        and geo.in_c % 4 == 0
        and geo.out_c <= CHUNK_MAX_OC
        and d.smmlar
    )


def col_entry(d: Conv2D, in_place: bool, col: int) -> str | None:
    """The entry for a layer whose every pixel goes through the column GEMM on Cortex-M4/M7
    (tc_conv2d_dsp.c; elsewhere than there both names are tc_conv_s8's), as tc_conv_s8 would
    run it there but linking none of its other loops, or None. ``tc_conv_s8_col``: a granted
    column (in place the pointwise temp or the ring beside it; out of place), or a whole one on
    the stack (windows of COL16_MIN_K values or more, PW_STACK_COL bytes at most).
    ``tc_conv_s8_chunk``: k x k layers without one (``chunk_ok``), in place through the ring,
    out of place over windows of COL16_MIN_K values or more whose column passes PW_STACK_COL
    (the chunks take the pixels the output's tail leaves when it holds a column, else all). A
    pointwise layer in place counts on the planner having overlapped its output with its
    input."""
    geo = d.geo
    if d.groups != 1 or not isinstance(d.rq, Requant):
        return None
    k = geo.k_h * geo.k_w * geo.in_c
    pointwise = geo.k_h * geo.k_w == 1
    if col and (in_place or k >= COL16_MIN_K):
        return "tc_conv_s8_col"
    if not in_place and k >= COL16_MIN_K and col16_bytes(k, geo.in_c) <= PW_STACK_COL:
        return "tc_conv_s8_col"
    if not pointwise and (in_place or k >= COL16_MIN_K) and chunk_ok(d):
        return "tc_conv_s8_chunk"
    return None


def conv_s8(op: Op, g: Graph, geo: Window, groups: int, mults: list, shifts: list) -> Conv2D:
    """The int8 convolution of ``op`` (input 0, weights [out_c, k_h, k_w, in_c / groups] at
    input 1, optional int32 bias at input 2) over ``geo``, requantized per channel by ``mults``
    and ``shifts``: TFLite's multipliers, or onnxruntime's scales in tc_requant_conv's ONNX
    variant (``onnx_requant.onnx_multipliers``; ONNX_CONV runs on this kernel too)."""
    x, w = inp(op, g, 0), inp(op, g, 1)
    oc, kh, kw, kc = w.shape
    c = geo.in_c
    macs = int(np.prod(out(op, g).shape, dtype=np.int64)) * kh * kw * kc
    wsum = np.asarray(w.data, np.int64).reshape(oc, -1).sum(axis=1)
    rq = requant(op, g, oc, wsum, mults, shifts)
    pointwise = kh == 1 and kw == 1
    col = col16_bytes(kh * kw * kc, c) if groups == 1 else 0
    in_place = groups == 1 and geo.stride1 and (pointwise or (geo.same_size and oc <= c))
    ring = 1 if pointwise else geo.ring_pixels()
    return Conv2D(
        macs=macs,
        scratch=col if col <= IM2COL_MAX_BYTES else 0,
        scratch_stand_in=tail_stands_in(geo, kh * kw * kc, groups),
        in_place_scratch=int(ring * oc) if in_place and not x.is_const else None,
        in_place_shifts=pointwise,
        geo=geo,
        groups=groups,
        rq=rq,
        smmlar=smmlar_ok(rq, np.asarray(w.data)),
    )


def lower_s8(op: Op, g: Graph, d: Conv2D, ctx: LowerCtx, choice: Choice) -> str:
    """The ``tc_conv_s8`` call of an int8 convolution prepared by ``conv_s8``."""
    assert isinstance(d.rq, Requant)
    if d.few:
        return few.lower(op, g, d, ctx)
    if d.pwf:
        return lower_pwf(op, g, d, ctx, choice)
    col = d.scratch if choice.use_scratch else 0
    # the raw bias is for the direct loops' border windows: not needed where every window
    # goes through the column buffer (zero point as padding), which the portable and
    # ARMv6-M builds ignore in place (their ring computes borders directly) and the M4/M7
    # builds for windows under COL16_MIN_K values (their direct loops take those)
    k = d.geo.k_h * d.geo.k_w
    raw = not col or (choice.in_place and k > 1) or k * d.geo.in_c < COL16_MIN_K
    fields = requant_fields(op, ctx, d.geo, d.rq, ctx.ptr(op.inputs[1]), raw_bias=raw)
    # depth_mult holds CONV_2D's requantization flag (tc_conv2d.h TC_CONV_RQ_SMMLAR)
    fields.update(groups=d.groups, col="0", depth_mult=int(d.smmlar))
    if col or choice.in_place:
        region = ctx.scratch(choice.scratch_bytes(d))
        if col:
            fields["col"] = f"((int8_t *){region} + {choice.scratch_offset(d)})"
        if choice.in_place:
            fields.update(inplace=1, tmp=f"(int8_t *){region}")
    # grouped layers by their own name: the Cortex-M0+ links the portable loops only for them;
    # layers entirely on the column GEMM by theirs: M4/M7 builds link tc_conv_s8's other loops
    # only where some layer needs them
    kernel = "tc_conv_s8_grouped" if d.groups > 1 else "tc_conv_s8"
    kernel = col_entry(d, choice.in_place, col) or kernel
    return io_call(kernel, op, ctx, ctx.params("tc_conv_params_t", fields))


def lower_pwf(op: Op, g: Graph, d: Conv2D, ctx: LowerCtx, choice: Choice) -> str:
    """The ``tc_conv_pw_s8`` call of a pointwise convolution prepared for it (``pwf.py``): the
    stream stands for the weights, folded bias and multipliers, which are not emitted."""
    assert isinstance(d.rq, Requant)
    w = np.asarray(inp(op, g, 1).data)
    fields: dict[str, object] = dict(d.geo.fields())
    fields.update(
        groups=1,
        depth_mult=0,  # no SMMLAR flag: tc_conv_pw_s8 requantizes one way
        in_offset=d.rq.in_offset,
        out_offset=d.rq.out_offset,
        act_min=d.rq.act_min,
        act_max=d.rq.act_max,
        weights="0",
        bias="0",
        bias_eff="0",
        mult="0",
        shift="0",
        col="0",
        inplace=1 if choice.in_place else 0,
        tmp="0",  # reads a pixel's inputs before it stores any output: no temporary
    )
    fields["wfew"] = f"(const int16_t *){ctx.array('wpw', 'int32_t', pwf.stream(w, d.rq))}"
    return io_call("tc_conv_pw_s8", op, ctx, ctx.params("tc_conv_params_t", fields))
