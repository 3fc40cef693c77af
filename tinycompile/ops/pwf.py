"""Pointwise CONV_2D over few input channels: which layers take ``tc_conv_pw_s8``
(firmware/kernels/tc_conv2d_pwf.c) and the parameter stream laid out for it (``wfew``).

With 1..12 input channels the ordinary pointwise loops spend most of an output on overhead
(dot-product calls and their tails, per-call setup, the generic requantization); this kernel
keeps a pixel's inputs in registers and walks the output channels through one stream of int32
words, ``4 + NW`` per channel (``NW = 2 * (in_c // 4) + (0, 1, 2, 2)[in_c % 4]``):

    2 * bias_eff, mult, q = 2^(r-1) + out_offset * 2^r, r = -shift,
    then word 2 g + h: the doubled weights of input values 4 g + h and 4 g + h + 2 as int16
    (low half first), zero past in_c

(SXTB16's split of a word of four inputs, so that one SMLAD adds two products). An output is
``(q + hi32(acc2 * m + 2^31) - [acc2 < 0]) >> r`` clamped, acc2 twice the int32 sum, which is
TFLM's MultiplyByQuantizedMultiplier + output offset (tc_dsp.h's tc_rq2_s8) provided that, for
every int8 input, acc2 fits int32 and q + h stays inside int32: checked per channel here with
the bound |acc| <= |bias_eff| + 128 * sum |w|; a layer failing it, or with a shift >= 0 (or
an ONNX one), keeps tc_conv_s8. The stream replaces the weights, bias_eff, mult and shift
arrays (not emitted). In place (stride 1) needs no temp: a pixel's inputs are read before its
outputs are stored.

Not taken for 8 input channels, which the pair loops run without tails (MobileNet's 8 -> 16
layer keeps its flash), nor above 12 (more words than registers).
"""

from __future__ import annotations

import numpy as np

from .conv_common import Requant, Window

MAX_IN_C = 12  # tc_conv2d_pwf.c TC_PWF_MAX_C


def words(in_c: int) -> int:
    """Weight words per output channel (NW)."""
    return 2 * (in_c // 4) + (0, 1, 2, 2)[in_c % 4]


def _consts(w: np.ndarray, rq: Requant) -> np.ndarray | None:
    """Per channel (2 * bias_eff, mult, q, r) as int64 rows, or None when some channel is out
    of the kernel's ranges."""
    oc = w.shape[0]
    be = np.asarray(rq.bias_eff, np.int64).reshape(-1)
    m = np.broadcast_to(np.asarray(rq.mult, np.int64).reshape(-1), (oc,))
    s = np.broadcast_to(np.asarray(rq.shift, np.int64).reshape(-1), (oc,))
    if np.any(s >= 0) or np.any(s < -31) or np.any(m < 0) or np.any(m >= 1 << 31):
        return None
    r = -s
    q = (1 << (r - 1)) + int(rq.out_offset) * (1 << r)
    bound = np.abs(be) + 128 * np.abs(w.reshape(oc, -1).astype(np.int64)).sum(axis=1)
    lim = 1 << 31
    if np.any(2 * bound >= lim) or np.any(np.abs(q) + bound + 2 >= lim):
        return None
    return np.stack([2 * be, m, q, r], axis=1)


def takes(geo: Window, groups: int, w: np.ndarray, rq: Requant) -> bool:
    """Whether an int8 CONV_2D over ``geo`` with weights ``w`` [out_c, 1, 1, in_c] and ``rq``
    runs tc_conv_pw_s8."""
    return (
        groups == 1
        and geo.k_h == 1
        and geo.k_w == 1
        and geo.pad_h == 0
        and geo.pad_w == 0
        and 1 <= geo.in_c <= MAX_IN_C
        and geo.in_c != 8
        and _consts(np.asarray(w), rq) is not None
    )


def stream(w: np.ndarray, rq: Requant) -> np.ndarray:
    """The kernel's ``wfew`` stream (int32, see above) for weights [out_c, 1, 1, in_c]."""
    oc = w.shape[0]
    c = int(np.prod(w.shape[1:]))
    consts = _consts(np.asarray(w), rq)
    assert consts is not None
    nw = words(c)
    w2 = np.zeros((oc, 4 * ((c + 3) // 4)), np.int64)
    w2[:, :c] = 2 * np.asarray(w, np.int64).reshape(oc, c)
    g = w2.reshape(oc, -1, 4)
    lo = np.stack([g[:, :, 0], g[:, :, 1]], axis=2).reshape(oc, -1)  # values 4g, 4g + 1
    hi = np.stack([g[:, :, 2], g[:, :, 3]], axis=2).reshape(oc, -1)  # values 4g + 2, 4g + 3
    wd = (lo & 0xFFFF) | ((hi & 0xFFFF) << 16)
    wd = np.where(wd >= 1 << 31, wd - (1 << 32), wd)[:, :nw]
    return np.concatenate([consts, wd], axis=1).astype(np.int32).reshape(-1)
