"""CONV_2D over few input channels (first layers: a grayscale or RGB image, a spectrogram; a
one-channel DEPTHWISE_CONV_2D becomes one, ``passes/dw_one_channel.py``): which layers take
``tc_conv_few_s8`` (firmware/kernels/tc_conv2d_few.c, with its DSP and ARMv6-M paths) and the
copy of the weights laid out for it (``wfew``).

The column GEMM of the other layers wastes its work on such windows (a window row of
``k_w * in_c`` values straddles its groups of four); this kernel reads each window row of the
input in place as ``G = ceil(k_w * in_c / 4)`` words, and holds the weights as int16, in
blocks of four output channels, so that a word of four inputs split by SXTB16 into
``[x0 x2]`` and ``[x1 x3]`` meets each channel's weights in two ready words (two SMLADs):

    wfew[((b * k_h + ky) * G + g) * 16 + 4 * k + j] = w[4 b + k, ky, e // in_c, e % in_c],
    e = 4 g + (0, 2, 1, 3)[j]

zero for ``e >= k_w * in_c`` (the window row's padding to whole words: those inputs, read
from the next pixels, meet zero weights) and for channels past ``out_c`` (the last block).
The kernels also read the model's own layout (``weights``: the ARMv6-M path).

Arithmetic is TFLM's (ConvPerChannel): interior windows from ``bias_eff``, rows outside the
image skipped with the bias the reference starts from (``bias + in_offset * sum`` of the
rows inside), columns outside as the input zero point; requantization tc_requant_conv.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op
from .base import LowerCtx
from .common import io_call
from .conv_common import Window, requant_fields

MAX_IN_C = 3  # in_c up to this: the few-channel kernel
MAX_GROUPS = 4  # words per window row (k_w * in_c <= 16)
MAX_WIN = 512  # bytes of a border window's stack copy: k_h * 4 * G (tc_conv2d_few.c)
MIN_OUT_C = 4  # a block of four channels per pass: fewer would waste most of it


def groups_per_row(geo: Window) -> int:
    return -(-geo.k_w * geo.in_c // 4)


def worth_it(geo: Window) -> bool:
    """Where the kernel pays for its code (3.6 KB on the M4/M7) and weight copy: windows of
    fewer than 16 values, which the column GEMM does not take (their direct loops ran 8-10
    instructions per MAC on the M7; this kernel 3.8), and one-channel windows at least 8
    wide (a spectrogram's depthwise layer made a CONV_2D: 8.8 -> 1.4). Elsewhere the column GEMM
    is close (DS-CNN's 10x4 first layer 2.32 -> 2.06, an RGB 3x3 stem 3.59 -> 2.13) and the
    MLPerf Tiny models keep their flash: not taken."""
    return geo.k_h * geo.k_w * geo.in_c < 16 or (geo.in_c == 1 and geo.k_w >= 8)


def takes(geo: Window, shifts: list) -> bool:
    """Whether a TFLite int8 CONV_2D without groups over ``geo`` runs tc_conv_few_s8."""
    g = groups_per_row(geo)
    return (
        worth_it(geo)
        and geo.in_c <= MAX_IN_C
        and geo.k_h * geo.k_w > 1
        and geo.dil_w == 1
        and g <= MAX_GROUPS
        and geo.k_h * 4 * g <= MAX_WIN
        and geo.out_c >= MIN_OUT_C
        and all(s <= 31 for s in shifts)  # TFLite's requantization, not ONNX's
    )


def weights_few(w: np.ndarray) -> np.ndarray:
    """Weights [out_c, k_h, k_w, in_c] as the kernel's ``wfew`` (int16, see above)."""
    oc, kh, kw, c = w.shape
    r = kw * c
    g = -(-r // 4)
    nb = -(-oc // 4)
    rows = np.zeros((nb * 4, kh, g * 4), np.int16)
    rows[:oc, :, :r] = np.asarray(w, np.int16).reshape(oc, kh, r)
    # [b, k, ky, g, e] -> [b, ky, g, k, j] with e = (0, 2, 1, 3)[j]
    t = rows.reshape(nb, 4, kh, g, 4)[..., [0, 2, 1, 3]]
    return np.ascontiguousarray(t.transpose(0, 2, 3, 1, 4)).reshape(-1)


def lower(op: Op, g: Graph, d, ctx: LowerCtx) -> str:
    """The ``tc_conv_few_s8`` call of a CONV_2D prepared for it (``conv2d.Conv2D.few``)."""
    w = np.asarray(g.t(op.inputs[1]).data)
    fields = requant_fields(op, ctx, d.geo, d.rq, ctx.ptr(op.inputs[1]))
    fields.update(groups=1, depth_mult=0)  # no SMMLAR flag: this kernel requantizes one way
    fields["wfew"] = ctx.array("wfew", "int16_t", weights_few(w))
    return io_call("tc_conv_few_s8", op, ctx, ctx.params("tc_conv_params_t", fields))
