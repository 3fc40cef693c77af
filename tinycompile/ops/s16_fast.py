"""The 16x8 fast kernels' compile-time side: weight layouts and the 32-bit requantization.

CONV_2D and FULLY_CONNECTED (``tc_conv_s16q`` / ``tc_fc_s16q``, firmware/kernels/
tc_conv2d_int16_fast.c) read their weights in *quads*: four output channels (``out_c`` padded
to a multiple of 4 with zero weights) interleaved by groups of four taps, 16 bytes per group,
each channel's four bytes in tap order 0, 2, 1, 3 and stored as ``u = w + 128`` (uint8). One
word of a channel then splits with UXTB16 into the tap pairs (0, 1) and (2, 3) that SMLAD
multiplies with two words of int16 activations (Cortex-M4/M7), and ARMv6-M reads a quad's four
weights of a tap with LDRB and immediate offsets. The kernels subtract ``128 * sum(x)`` of the
window once per pixel. A convolution's taps are its window rows (``seg = k_w * in_c`` values,
contiguous in NHWC), each padded to ``segp``, a multiple of 4, so that every row starts a group;
the kernels copy windows with zeros in the padding (exact: zero points are 0). Same flash as the
model's weights plus the padding (the model's own layout is not emitted).

DEPTHWISE_CONV_2D (``tc_dwconv_s16q``, tc_depthwise_int16.c): weights [k_h][k_w][ceil(out_c / 4)]
[4], each block of four channels in the order 0, 2, 1, 3 (int8): SXTB16 gives channels (0, 1)
and (2, 3), which SMLABB / SMLATT pair with two words of activations. Same flash plus padding.

The requantization (``fast_requant``): TFLM's int64 accumulator and ``tc_requant64`` become
int32 where that is exact. When ``|bias| + 32768 * sum|w| < 2^31`` for every channel, the sum
bias + x . w (every partial sum too) fits int32, so the int32 sums of the kernels (wrapping
arithmetic, with the ``u`` correction) are the exact value. Then with ``e = max(0, 33 - ts)``,
``m = rm << e`` (< 2^30 when ts >= 18) and ``sh = ts + e - 32`` (1..14):
``(x * rm + 2^(ts - 1)) >> ts == (floor(x * m / 2^32) + 2^(sh - 1)) >> sh`` (the rounding
constant 2^(31 + sh) is a multiple of 2^32, so the nested floors merge; the result fits int32),
one SMMLA and one shift. Layers outside these bounds (ts < 18, or large sums) keep the int64
kernels (``tc_conv_s16`` and co.).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Op
from .base import LowerCtx
from .common import io_call
from .conv_common import Window
from .s16 import Requant64

INT32_MAX = 2**31 - 1
MIN_TS = 18  # smallest total shift of the 32-bit form (m = rm << (33 - ts) < 2^30)
PERM = (0, 2, 1, 3)  # tap order inside a channel's word: UXTB16 / SXTB16 lanes (0, 1), (2, 3)


@dataclass(frozen=True)
class Fast32:
    """Per channel: int32 bias, multiplier and shift of the 32-bit requantization, packed as
    [bias, m, 2^(sh - 1), sh] per channel (one array)."""

    rq: np.ndarray  # int32 [out_c * 4]


def fast_requant(w2d: np.ndarray, rq: Requant64) -> Fast32 | None:
    """The 32-bit requantization of a layer whose channel c has the weights ``w2d[c]`` (any
    shape after the channel axis), or None when it would not be exact (module docstring)."""
    oc = rq.bias.size
    w = np.asarray(w2d, np.int64).reshape(oc, -1)
    bound = np.abs(rq.bias.astype(np.int64)) + 32768 * np.abs(w).sum(axis=1)
    rm = np.broadcast_to(rq.rm.astype(np.int64), (oc,))
    ts = np.broadcast_to(rq.ts.astype(np.int64), (oc,))
    if bound.max(initial=0) > INT32_MAX or ts.min(initial=99) < MIN_TS:
        return None
    e = np.maximum(0, 33 - ts)
    m = rm << e
    sh = ts + e - 32
    assert m.max(initial=0) < 2**30 and sh.min(initial=1) >= 1 and sh.max(initial=1) <= 14
    packed = np.stack([rq.bias.astype(np.int64), m, 1 << (sh - 1), sh], axis=1)
    return Fast32(packed.astype(np.int32).reshape(-1))


def quads(w2d: np.ndarray, seg: int, segp: int) -> np.ndarray:
    """Weights [out_c][n * seg] (n rows of ``seg`` taps) in the quad layout (module
    docstring), each row padded to ``segp`` taps: uint8, ceil(out_c / 4) * n * segp * 4 bytes."""
    oc = w2d.shape[0]
    w = np.asarray(w2d, np.int16).reshape(oc, -1, seg)
    rows = w.shape[1]
    ocp = -(-oc // 4) * 4
    full = np.zeros((ocp, rows, segp), np.int16)
    full[:oc, :, :seg] = w
    g = full.reshape(ocp // 4, 4, rows * segp // 4, 4)[..., list(PERM)]  # [q][c][group][tap]
    return (g.transpose(0, 2, 1, 3) + 128).astype(np.uint8).reshape(-1)


def dw_blocks(w: np.ndarray) -> np.ndarray:
    """Depthwise weights [1, k_h, k_w, out_c] as [k_h * k_w][ceil(out_c / 4)][4] int8, the four
    channels of a block in the order 0, 2, 1, 3 (module docstring)."""
    _, kh, kw, oc = w.shape
    ocp = -(-oc // 4) * 4
    taps = np.zeros((kh * kw, ocp), np.int8)
    taps[:, :oc] = np.asarray(w).reshape(kh * kw, oc)
    return taps.reshape(kh * kw, ocp // 4, 4)[..., list(PERM)].reshape(-1)


def seg_pad(seg: int) -> int:
    """A window row of ``seg`` taps padded to a whole number of groups of four."""
    return -(-seg // 4) * 4


def _rq_array(ctx: LowerCtx, f: Fast32) -> str:
    """The per-channel requantization, padded to whole quads (bias 0, m 0: outputs unused)."""
    oc = f.rq.size // 4
    pad = (-oc) % 4
    rq = np.concatenate([f.rq, np.tile(np.array([0, 0, 1, 1], np.int32), pad)])
    return ctx.array("rq16", "int32_t", rq)


def _fields(geo: dict[str, int], r64: Requant64, **extra: object) -> dict[str, object]:
    fields: dict[str, object] = {k: v for k, v in geo.items() if k not in ("dil_h", "dil_w")}
    fields.update(extra)
    fields.update(act_min=r64.act_min, act_max=r64.act_max)
    return fields


def lower_conv(
    op: Op, ctx: LowerCtx, geo: Window, groups: int, rq: Requant64, w: np.ndarray
) -> str | None:
    """``tc_conv_s16q`` for a 16x8 CONV_2D with weights ``w`` [out_c, k_h, k_w, in_c], or None
    where it does not apply (groups, dilation, or int32 not exact: ``fast_requant``)."""
    if groups != 1 or geo.dil_h != 1 or geo.dil_w != 1:
        return None
    f = fast_requant(w, rq)
    if f is None:
        return None
    oc, _, kw, c = w.shape
    seg = kw * c
    segp = seg_pad(seg)
    fields = _fields(
        geo.fields(),
        rq,
        seg_p=segp,
        depth_mult=1,
        weights=ctx.array("wq16", "uint8_t", quads(w.reshape(oc, -1), seg, segp)),
        rq=_rq_array(ctx, f),
    )
    return io_call("tc_conv_s16q", op, ctx, ctx.params("tc_s16q_params_t", fields))


def lower_fc(op: Op, ctx: LowerCtx, batches: int, rq: Requant64, w: np.ndarray) -> str | None:
    """``tc_fc_s16q`` for a 16x8 FULLY_CONNECTED with weights ``w`` [out_c, depth], or None."""
    f = fast_requant(w, rq)
    if f is None:
        return None
    oc, depth = w.shape
    segp = seg_pad(depth)
    geo = dict(batches=batches, in_h=1, in_w=1, in_c=depth, out_h=1, out_w=1, out_c=oc)
    geo.update(k_h=1, k_w=1, stride_h=1, stride_w=1, pad_h=0, pad_w=0)
    fields = _fields(
        geo,
        rq,
        seg_p=segp,
        depth_mult=1,
        weights=ctx.array("wq16", "uint8_t", quads(w, depth, segp)),
        rq=_rq_array(ctx, f),
    )
    return io_call("tc_fc_s16q", op, ctx, ctx.params("tc_s16q_params_t", fields))


def lower_dw(
    op: Op, ctx: LowerCtx, geo: Window, depth_mult: int, rq: Requant64, w: np.ndarray
) -> str | None:
    """``tc_dwconv_s16q`` for a 16x8 DEPTHWISE_CONV_2D with weights ``w`` [1, k_h, k_w, out_c],
    or None (dilation, or int32 not exact)."""
    if geo.dil_h != 1 or geo.dil_w != 1:
        return None
    oc = w.shape[3]
    f = fast_requant(np.asarray(w).reshape(-1, oc).T, rq)
    if f is None:
        return None
    fields = _fields(
        geo.fields(),
        rq,
        seg_p=0,
        depth_mult=depth_mult,
        weights=ctx.array("wdw16", "int8_t", dw_blocks(w)),
        rq=_rq_array(ctx, f),
    )
    return io_call("tc_dwconv_s16q", op, ctx, ctx.params("tc_s16q_params_t", fields))
