"""ONNX_CONV: onnxruntime's QLinearConv (and a fused QDQ Conv), grouped and depthwise included.

NHWC int8 activations, weights re-laid by the frontend as [out_c][k_h][k_w][in_c / groups],
explicit padding, possibly asymmetric (``pads`` = top, left, bottom, right; padded taps are the
input zero point and add nothing), int32 bias. The int32 accumulator is exact; requantization is
onnxruntime's (``onnx_requant``) with per-channel scales ``(x_scale * w_scale[c]) / y_scale``
in float32.

Kernels: a convolution without groups runs on CONV_2D's ``tc_conv_s8`` and a depthwise one
(groups == in_c, any depth multiplier) on DEPTHWISE_CONV_2D's ``tc_dwconv_s8``, fast paths, in
place, column buffers and row streaming included (``conv2d.conv_s8`` / ``depthwise.dwconv_s8``
prepare them, with tc_requant_conv's ONNX variant: ``onnx_requant.onnx_multipliers``). The
bottom and right pads need no field: the output size implies them, and the kernels skip every
tap outside the image. Other grouped convolutions, weights with nonzero zero points, and layers
whose scales or accumulators the integer form cannot take (``onnx_requant.integer_form_ok``)
keep the portable ``tc_onnx_conv_s8`` (firmware/kernels/tc_onnx.c).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import conv2d, depthwise
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .conv_common import MAX_WINDOW, RowsByWindow, Window, has_border
from .onnx_requant import (
    OnnxAccum,
    acc_bounds,
    accum_call,
    check_bias,
    check_weights,
    integer_form_ok,
    io8,
    onnx_multipliers,
    product_scales,
    scales_array,
    weight_zero_points,
)
from .rows import Reach


def dw_weights(w: np.ndarray) -> np.ndarray:
    """Depthwise ONNX weights [out_c, k_h, k_w, 1] in DEPTHWISE_CONV_2D's [1, k_h, k_w, out_c]."""
    return np.ascontiguousarray(np.asarray(w)[..., 0].transpose(1, 2, 0)[None])


@register
class OnnxConvOp(RowsByWindow, Operator):
    kinds = ("ONNX_CONV",)

    def prepare(self, op: Op, g: Graph) -> Prepared:
        x, y = io8(op, g)
        if len(x.shape) != 4 or len(y.shape) != 4:
            raise fail(op, "expects rank-4 input and output")
        n, h, w_, c = x.shape
        _, oh, ow, oc = y.shape
        w = check_weights(op, g, 1, oc)
        if len(w.shape) != 4 or w.shape[0] != oc:
            raise fail(op, f"weights {list(w.shape)} do not match {oc} output channels")
        groups = int(op.attrs.get("groups", 1))
        kh, kw, cpg = w.shape[1:]
        if groups < 1 or c % groups or oc % groups or c // groups != cpg:
            raise fail(op, f"{groups} groups do not split {c} -> {oc} channels")
        sh, sw = op.attrs["stride"]
        dh, dw = op.attrs["dilation"]
        pt, pl, pb, pr = op.attrs["pads"]
        if (
            oh != (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
            or ow != (w_ + pl + pr - (kw - 1) * dw - 1) // sw + 1
        ):
            raise fail(op, f"output shape {list(y.shape)} does not match the geometry")
        bias = check_bias(op, g, 2, oc)
        scales = scales_array(op, product_scales(x, w, y), oc)
        wzp = weight_zero_points(w, oc)
        if wzp is None and (groups == 1 or (groups == c and cpg == 1)):
            border = has_border(h, kh, sh, dh, pt, oh) or has_border(w_, kw, sw, dw, pl, ow)
            geo = Window(n, h, w_, c, oh, ow, oc, kh, kw, sh, sw, dh, dw, pt, pl, border)
            b = None if bias is None else bias.data
            bounds = acc_bounds(np.asarray(w.data), b, x.quant.zp)
            big = max(sh, sw, dh, dw, (kh - 1) * dh + 1, (kw - 1) * dw + 1) > MAX_WINDOW
            if integer_form_ok(scales, bounds) and not big and windows_touch(geo):
                mults, shifts = onnx_multipliers(scales)
                if groups == 1:
                    return conv2d.conv_s8(op, g, geo, 1, mults, shifts)
                return depthwise.dwconv_s8(op, g, geo, dw_weights(w.data), mults, shifts)
        fields = dict(batches=n, in_h=h, in_w=w_, in_c=c, out_h=oh, out_w=ow, out_c=oc, k_h=kh,
                      k_w=kw, stride_h=sh, stride_w=sw, dil_h=dh, dil_w=dw, pad_t=pt, pad_l=pl,
                      groups=groups, in_zp=x.quant.zp, out_zp=y.quant.zp)  # fmt: skip
        macs = y.size * kh * kw * cpg
        return OnnxAccum(macs=macs, fields=tuple(fields.items()), scales=scales, w_zp=wzp)

    def lower(self, op: Op, g: Graph, d: Any, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d, conv2d.Conv2D):
            return conv2d.lower_s8(op, g, d, ctx, choice)
        if isinstance(d, depthwise.Depthwise):
            w = dw_weights(g.t(op.inputs[1]).data)
            return depthwise.lower_s8(op, g, d, ctx, choice, w)
        return accum_call("tc_onnx_conv_s8", "tc_onnx_conv_params_t", op, ctx, d)

    def row_reach(self, op: Op, g: Graph, d: Any) -> tuple[Reach, ...] | None:
        if not isinstance(d, (conv2d.Conv2D, depthwise.Depthwise)):
            return None  # the portable ONNX kernel has no row geometry
        return super().row_reach(op, g, d)


def windows_touch(geo: Window) -> bool:
    """A 1x1 layer is unpadded, as the pointwise kernels assume (TFLite's padding never pads a
    1x1 window; ONNX pads may, making a border of bias-only outputs): such a layer runs on the
    portable ONNX kernel. Larger windows reaching wholly into padding are fine
    (tests/onnxgen/handmade.py ``pads``)."""
    if geo.k_h != 1 or geo.k_w != 1:
        return True
    return (
        geo.pad_h == geo.pad_w == 0
        and (geo.out_h - 1) * geo.stride_h <= geo.in_h - 1
        and (geo.out_w - 1) * geo.stride_w <= geo.in_w - 1
    )
