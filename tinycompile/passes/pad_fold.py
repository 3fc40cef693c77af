"""The pad pass: an explicit PAD / PADV2 in front of a CONV_2D or DEPTHWISE_CONV_2D becomes the
convolution's own padding (``attrs["padding"] = "EXPLICIT"``, ``attrs["pads"]`` = top, bottom,
left, right; ``conv_common.window``), so the padded copy is never made and never sets the peak.

Exact, as TFLM computes both: a padded tap holds the pad byte, and a convolution's own padding
adds nothing to the accumulator, which is what a tap holding the input zero point adds
(``w * (zero_point + input_offset) = 0``). So a PAD folds when its pad byte is the zero point
of a tensor the convolution reads with the same quantization:

- PAD (pads with its output's zero point) or PADV2 whose constant value is that zero point, its
  input and output int8 with the same scale and zero point (PAD copies bytes: a different
  output quantization would change what the convolution reads), its input an activation;
- constant 4-D paddings, none on the batch or channels;
- its output read by exactly one op, a CONV_2D or DEPTHWISE_CONV_2D, as input 0 only, and not
  a graph output (else the padded tensor is needed anyway);
- the convolution's padding VALID (the PAD's pads become its own), SAME (TFLite computes SAME's
  pads on the padded size, and they add to the PAD's: the same windows over the same bytes) or
  already EXPLICIT (a PAD before a folded PAD);
- every window still reaching the image (``conv_common.windows_reach``): a window wholly in the
  padding has no input rows for row streaming to hand it, and 1x1 layers (where any padding
  makes such windows) keep off the DSP pointwise loops, which assume an unpadded layer.

Anything else keeps its PAD. Ops keep their indices; the PAD's output tensor stays in the graph,
read by no one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op, Tensor
from ..ops.conv_common import explicit_out_size, out_size, pad_before, windows_reach
from ..ops.pad import paddings

PADS = ("PAD", "PADV2")
CONVS = ("CONV_2D", "DEPTHWISE_CONV_2D")
Pads = tuple[int, int, int, int]  # top, bottom, left, right


def fold_pads(g: Graph) -> Graph:
    """A copy of ``g`` with every foldable PAD folded into the convolution reading it."""
    ops = list(g.ops)
    readers = _readers(ops)
    outputs = set(g.outputs)
    gone: set[int] = set()
    # last first: a PAD in front of a PAD that folds then faces the convolution itself
    for i in reversed(range(len(ops))):
        pad = ops[i]
        if pad.kind not in PADS or len(pad.outputs) != 1 or pad.outputs[0] in outputs:
            continue
        y = pad.outputs[0]
        who = readers.get(y, [])
        if len(who) != 1 or ops[who[0]].kind not in CONVS:
            continue
        j = who[0]
        conv = ops[j]
        pads = _conv_pads(g, pad, conv)
        if pads is None:
            continue
        x = pad.inputs[0]
        attrs = {**conv.attrs, "padding": "EXPLICIT", "pads": pads}
        ops[j] = replace(conv, inputs=[x, *conv.inputs[1:]], attrs=attrs)
        readers[x] = [j if k == i else k for k in readers[x]]
        del readers[y]
        gone.add(i)
    if not gone:
        return replace(g)
    return replace(g, ops=[op for k, op in enumerate(ops) if k not in gone])


def _readers(ops: list[Op]) -> dict[int, list[int]]:
    """Tensor id -> positions of the ops reading it (once per read)."""
    out: dict[int, list[int]] = {}
    for k, op in enumerate(ops):
        for tid in op.inputs:
            if tid >= 0:
                out.setdefault(tid, []).append(k)
    return out


def _conv_pads(g: Graph, pad: Op, conv: Op) -> Pads | None:
    """The padding ``conv`` takes over from ``pad`` (None: the PAD must stay)."""
    hw = _pad_hw(g, pad)
    if hw is None or not conv.inputs or conv.inputs[0] != pad.outputs[0]:
        return None
    if conv.options is not None or len(conv.inputs) < 2 or conv.inputs[1] < 0:
        return None  # options refused, weights absent: prepare reports it on the original
    w, x, o = g.t(conv.inputs[1]), g.t(pad.inputs[0]), g.t(conv.outputs[0])
    if len(w.shape) != 4 or len(o.shape) != 4:
        return None
    kh, kw = int(w.shape[1]), int(w.shape[2])
    stride, dil = conv.attrs.get("stride", (1, 1)), conv.attrs.get("dilation", (1, 1))
    if min(*stride, *dil, kh, kw) < 1:
        return None
    padding = conv.attrs.get("padding")
    pads = list(hw)
    if padding == "SAME":
        y = g.t(pad.outputs[0])
        for a, (size, k) in enumerate(((y.shape[1], kh), (y.shape[2], kw))):
            before, after = _same(int(size), k, stride[a], dil[a])
            pads[2 * a] += before
            pads[2 * a + 1] += after
    elif padding == "EXPLICIT":
        own = conv.attrs.get("pads")
        if not isinstance(own, (tuple, list)) or len(own) != 4 or min(own) < 0:
            return None
        pads = [p + int(q) for p, q in zip(pads, own, strict=True)]
    elif padding != "VALID":
        return None
    top, bottom, left, right = pads
    for a, (before, after) in enumerate(((top, bottom), (left, right))):
        size, k = int(x.shape[1 + a]), (kh, kw)[a]
        n = explicit_out_size(size, k, stride[a], dil[a], before, after)
        if n < 1 or n != o.shape[1 + a] or not windows_reach(size, k, stride[a], dil[a], before, n):
            return None
    return top, bottom, left, right


def _same(size: int, k: int, stride: int, dil: int) -> tuple[int, int]:
    """TFLite's SAME padding (before, after) over ``size``: ComputePaddingHeightWidth's
    ``total // 2`` before and the rest after (none when the windows fall short of the end)."""
    n = out_size("SAME", size, k, stride, dil)
    total = max((n - 1) * stride + (k - 1) * dil + 1 - size, 0)
    before = pad_before(stride, dil, size, k, n)
    return before, total - before


def _pad_hw(g: Graph, pad: Op) -> Pads | None:
    """A foldable PAD's (top, bottom, left, right), or None."""
    if len(pad.inputs) not in (2, 3) or min(pad.inputs[:2]) < 0:
        return None
    x, y = g.t(pad.inputs[0]), g.t(pad.outputs[0])
    if x.is_const or x.variable or not _same_int8_quant(x, y) or len(x.shape) != 4:
        return None
    try:
        p = paddings(pad, g)
    except CompileError:
        return None  # prepare reports it
    if p[0] != (0, 0) or p[3] != (0, 0):
        return None
    if tuple(y.shape) != tuple(d + b + a for d, (b, a) in zip(x.shape, p, strict=True)):
        return None
    value = pad.inputs[2] if len(pad.inputs) == 3 else -1
    if value >= 0 and not _value_is_zero_point(g.t(value), y):
        return None
    return p[1][0], p[1][1], p[2][0], p[2][1]


def _same_int8_quant(x: Tensor, y: Tensor) -> bool:
    if x.dtype != "int8" or y.dtype != "int8" or x.quant is None or y.quant is None:
        return False
    qx, qy = x.quant, y.quant
    return (
        qx.scale.size == 1
        and qy.scale.size == 1
        and np.float32(qx.scale[0]) == np.float32(qy.scale[0])
        and qx.zp == qy.zp
    )


def _value_is_zero_point(v: Tensor, y: Tensor) -> bool:
    """A PADV2 value tensor that pads with ``y``'s zero point (TFLM pads with its raw byte and
    requires its quantization to be the output's)."""
    if not v.is_const or v.dtype != "int8" or v.size != 1 or not _same_int8_quant(v, y):
        return False
    return int(np.asarray(v.data).reshape(-1)[0]) == y.quant.zp
