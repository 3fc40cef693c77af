"""The one-channel depthwise pass: a DEPTHWISE_CONV_2D over an input of ONE channel (a speech
model's first layer: 49x40x1, depth multiplier 8) is exactly a CONV_2D with ``out_c = depth
multiplier`` filters of depth 1: it becomes one, so the convolution kernels (and their
few-input-channel path, ``ops/conv2d.py``) run it.

Exact, as TFLM computes both (DepthwiseConvPerChannel, ConvPerChannel): output channel ``m``
of the depthwise layer is ``bias[m] + sum over the taps inside the image of
w[0, ky, kx, m] * (x[iy, ix, 0] + input_offset)``, requantized with channel ``m``'s multiplier
from ``input_scale * filter_scale[m] / output_scale``, plus the output zero point, clamped; the
CONV_2D with weights ``w'[m, ky, kx, 0] = w[0, ky, kx, m]`` computes the same sum, the same
multipliers (PopulateConvolutionQuantizationParams for both) and the same padding, strides,
dilations and activation.

Rewritten: int8 activations (16x8 layers keep their kernel), an input of shape [n, h, w, 1],
constant int8 weights [1, k_h, k_w, M] with M output channels and the depth multiplier M
(anything inconsistent is left for the unit to refuse with its reason), per-tensor or
per-channel quantization along axis 3 (then along axis 0). The weights become a new constant
tensor (appended; the old one stays, read by no one, and never reaches flash); the op keeps
its index, inputs 0 and 2 (bias), outputs and typed attributes (the depth multiplier dropped).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Op, Quant, Tensor


def dw_one_channel_to_conv(g: Graph) -> Graph:
    """A copy of ``g`` whose one-input-channel depthwise convolutions are CONV_2Ds."""
    tensors = list(g.tensors)
    ops = []
    for op in g.ops:
        new = _as_conv(g, op, len(tensors)) if op.kind == "DEPTHWISE_CONV_2D" else None
        if new is None:
            ops.append(op)
            continue
        conv, w = new
        tensors.append(w)
        ops.append(conv)
    return replace(g, tensors=tensors, ops=ops)


def _as_conv(g: Graph, op: Op, tid: int) -> tuple[Op, Tensor] | None:
    """The CONV_2D standing for ``op`` and its new weight tensor (id ``tid``), or None."""
    if op.options is not None or len(op.outputs) != 1 or len(op.inputs) not in (2, 3):
        return None  # options not decoded (refused): prepare reports it
    if min(op.inputs[:2]) < 0 or "padding" not in op.attrs:
        return None
    x, w, y = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
    if x.dtype != "int8" or y.dtype != "int8" or x.is_const or len(x.shape) != 4:
        return None
    if x.shape[3] != 1 or len(y.shape) != 4 or len(w.shape) != 4 or w.shape[0] != 1:
        return None
    m = int(w.shape[3])
    if not w.is_const or w.dtype != "int8" or w.quant is None or y.shape[3] != m:
        return None
    if op.attrs.get("depth_multiplier", 1) != m:
        return None
    q = w.quant
    if q.scale.size not in (1, m) or q.zero_point.size != q.scale.size:
        return None
    if q.scale.size > 1 and q.axis != 3:
        return None
    data = np.ascontiguousarray(np.asarray(w.data).transpose(3, 1, 2, 0))
    quant = Quant(q.scale.copy(), q.zero_point.copy(), 0)
    wt = Tensor(tid, f"{w.name}/conv", tuple(data.shape), "int8", quant, data)
    attrs = {k: v for k, v in op.attrs.items() if k != "depth_multiplier"}
    inputs = [op.inputs[0], tid, *op.inputs[2:]]
    return Op(op.index, "CONV_2D", inputs, list(op.outputs), attrs), wt
