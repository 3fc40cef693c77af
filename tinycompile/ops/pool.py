"""AVERAGE_POOL_2D and MAX_POOL_2D (int8), as TensorFlow Lite Micro computes them.

TFLM (pooling_common.cc, reference_integer_ops::AveragePool / MaxPool): padding from
``ComputePaddingHeightWidth`` with dilation 1; the window is clipped to the image, so padded
positions are never counted; the average is ``(sum +- count / 2) / count`` with C's truncating
division; max starts from -128; both clamp to the fused activation's range. Input and output
must share their quantization (TFLM refuses otherwise), so no requantization happens.
Kernels: ``tc_avgpool_s8`` / ``tc_maxpool_s8`` in firmware/kernels/tc_pool.c.
"""

from __future__ import annotations

from ..ir import Graph, Op
from . import LowerCtx, fail, register
from .common import activation_range, inp, out, require_int8
from .conv import window_geometry


def _geometry(op: Op, g: Graph) -> dict[str, int]:
    """Pooling geometry: the convolution window checks (rank, padding, strides, output shape,
    absurd sizes) with a dilation of 1, plus the pooling-only rules."""
    fh, fw = op.attrs.get("filter", (1, 1))
    geo = window_geometry(op, g, fh, fw)
    if geo["out_c"] != geo["in_c"]:
        raise fail(op, f"pooling maps {geo['in_c']} channels to {geo['out_c']}")
    # TFLM's average pool fails at run time on a window with no tap inside the image.
    for o_i, stride, pad, size, f in (
        (geo["out_h"], geo["stride_h"], geo["pad_h"], geo["in_h"], fh),
        (geo["out_w"], geo["stride_w"], geo["pad_w"], geo["in_w"], fw),
    ):
        for k in range(o_i):
            start = k * stride - pad
            if min(size, start + f) <= max(0, start):
                raise fail(op, "a pooling window lies entirely in the padding")
    keep = ("batches", "in_h", "in_w", "out_h", "out_w", "stride_h", "stride_w", "pad_h", "pad_w")
    return {**{k: geo[k] for k in keep}, "channels": geo["in_c"], "f_h": fh, "f_w": fw}


def check_pool(op: Op, g: Graph) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        raise fail(op, f"expects 1 input and 1 output, has {len(op.inputs)}/{len(op.outputs)}")
    require_int8(op, g, [op.inputs[0], op.outputs[0]])
    x, o = inp(op, g, 0), out(op, g)
    if abs(float(x.quant.scale[0]) - float(o.quant.scale[0])) > 1e-6 or x.quant.zp != o.quant.zp:
        raise fail(op, "input and output quantization differ (TFLM requires them equal)")
    _geometry(op, g)
    activation_range(op, o)


def pool_macs(op: Op, g: Graph) -> int:
    """Window taps visited (adds or compares): pooling has no multiplies; this is its work."""
    fh, fw = op.attrs.get("filter", (1, 1))
    return out(op, g).size * fh * fw


def _lower(op: Op, g: Graph, ctx: LowerCtx, fn: str) -> str:
    lo, hi = activation_range(op, out(op, g))
    fields: dict[str, object] = dict(_geometry(op, g))
    fields.update(act_min=lo, act_max=hi)
    p = ctx.params("tc_pool_params_t", fields)
    return f"{fn}({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)});"


@register("AVERAGE_POOL_2D", check=check_pool, macs=pool_macs)
def lower_avgpool(op: Op, g: Graph, ctx: LowerCtx) -> str:
    return _lower(op, g, ctx, "tc_avgpool_s8")


@register("MAX_POOL_2D", check=check_pool, macs=pool_macs)
def lower_maxpool(op: Op, g: Graph, ctx: LowerCtx) -> str:
    return _lower(op, g, ctx, "tc_maxpool_s8")
