"""ONNX_CONV: onnxruntime's QLinearConv (and a fused QDQ Conv), grouped and depthwise included.

NHWC int8 activations, weights re-laid by the frontend as [out_c][k_h][k_w][in_c / groups],
explicit padding (padded taps are the input zero point and add nothing), int32 bias. The int32
accumulator is exact; requantization is onnxruntime's (``onnx_requant``) with per-channel scales
``(x_scale * w_scale[c]) / y_scale`` in float32. Kernel: ``tc_onnx_conv_s8``
(firmware/kernels/tc_onnx.c).
"""

from __future__ import annotations

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, fail, register
from .onnx_requant import (
    OnnxAccum,
    accum_call,
    check_bias,
    check_weights,
    io8,
    product_scales,
    scales_array,
)


@register
class OnnxConvOp(Operator):
    kinds = ("ONNX_CONV",)

    def prepare(self, op: Op, g: Graph) -> OnnxAccum:
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
        check_bias(op, g, 2, oc)
        fields = dict(batches=n, in_h=h, in_w=w_, in_c=c, out_h=oh, out_w=ow, out_c=oc, k_h=kh,
                      k_w=kw, stride_h=sh, stride_w=sw, dil_h=dh, dil_w=dw, pad_t=pt, pad_l=pl,
                      groups=groups, in_zp=x.quant.zp, out_zp=y.quant.zp)  # fmt: skip
        scales = scales_array(op, product_scales(x, w, y), oc)
        macs = y.size * kh * kw * cpg
        return OnnxAccum(macs=macs, fields=tuple(fields.items()), scales=scales)

    def lower(self, op: Op, g: Graph, d: OnnxAccum, ctx: LowerCtx, choice: Choice) -> str:
        return accum_call("tc_onnx_conv_s8", "tc_onnx_conv_params_t", op, ctx, d)
