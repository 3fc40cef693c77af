"""What the 16x8 operators share (int16 activations, int8 weights, int64 biases): the int16
checks and TFLM's 64-bit requantization.

- Activations: int16, per tensor, zero point 0 (TFLite's 16x8 quantization is symmetric; TFLM's
  int16 kernels check or assume it), a positive finite scale.
- Requantization of an int64 accumulator (TFLM's ``MultiplyByQuantizedMultiplier(int64_t x,
  int32_t m, int shift)``, common.cc, the same in both rounding builds): the Q31 multiplier is
  first reduced to Q15, ``rm = m < 0x7FFF0000 ? (m + 2^15) >> 16 : 0x7FFF``, then
  ``(x * rm + 2^(ts - 1)) >> ts`` with ``ts = 15 - shift``, truncated to int32. One rounding,
  half up (not the int32 path's double rounding). TFLM assumes ``shift < 8`` and refuses
  nothing; larger shifts (absurd scales) are refused here. The kernels' twin is
  ``tc_requant64`` (firmware/include/tc_qmath.h).
- Biases: int64 (or absent), one per output channel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from . import conv_common  # a module import: conv_common imports this one too
from .base import LowerCtx, fail
from .common import activation_range, out

MAX_SHIFT = 7  # TFLM's assumption for the 64-bit requantization (shift in [-31, 7])


def is_int16(op: Op, g: Graph, i: int = 0) -> bool:
    """Whether the op's input ``i`` is an int16 tensor."""
    return len(op.inputs) > i and op.inputs[i] >= 0 and g.t(op.inputs[i]).dtype == "int16"


def require_int16(op: Op, g: Graph, tids: list[int], what: str = "activation") -> None:
    """Every listed tensor is int16, per tensor, zero point 0, with a usable scale."""
    for tid in tids:
        t = g.t(tid)
        if t.dtype != "int16":
            raise fail(op, f"{t.dtype} {what} tensor {tid} in a 16x8 op (int16 expected)")
        if t.quant is None:
            raise fail(op, f"{what} tensor {tid} has no quantization parameters")
        if t.quant.per_channel:
            raise fail(op, f"{what} tensor {tid} is quantized per channel")
        if t.quant.zp != 0:
            raise fail(op, f"int16 {what} tensor {tid} has zero point {t.quant.zp} (16x8 needs 0)")
        s = t.quant.s
        if not (math.isfinite(s) and s > 0):
            raise fail(op, f"tensor {tid} has scale {s:g}; a positive finite scale is needed")


def reduce_multiplier(op: Op, m: int, shift: int) -> tuple[int, int]:
    """(rm, ts): TFLM's Q15 multiplier and total right shift for an int64 accumulator."""
    if shift > MAX_SHIFT:
        raise fail(op, f"requantization shift {shift} is beyond TFLM's 64-bit range (<= 7)")
    rm = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    return rm, 15 - shift


@dataclass(frozen=True)
class Requant64:
    """A 16x8 convolution's requantization: clamp, int64 bias, Q15 multipliers, shifts."""

    act_min: int
    act_max: int
    bias: np.ndarray  # int64, one per output channel (zeros when the op has no bias)
    rm: np.ndarray  # int32 reduced multipliers (per channel, or one)
    ts: np.ndarray  # int32 total right shifts


def requant(
    op: Op, g: Graph, out_c: int, mults: list[int], shifts: list[int], bias_index: int = 2
) -> Requant64:
    """A 16x8 convolution's requantization (input and output already checked); the bias is
    input ``bias_index``."""
    lo, hi = activation_range(op, out(op, g))
    b = conv_common.bias(op, g, out_c, index=bias_index, dtype="int64")
    pairs = [reduce_multiplier(op, m, s) for m, s in zip(mults, shifts, strict=True)]
    return Requant64(
        lo,
        hi,
        b if b is not None else np.zeros(out_c, np.int64),
        np.array([p[0] for p in pairs], np.int32),
        np.array([p[1] for p in pairs], np.int32),
    )


def conv_fields(
    ctx: LowerCtx, geo: dict[str, int], rq: Requant64, weights: str, **extra: int
) -> dict[str, object]:
    """The fields of ``tc_conv_s16_params_t`` (16x8 CONV_2D and DEPTHWISE_CONV_2D)."""
    fields: dict[str, object] = dict(geo)
    fields.update(extra)
    fields.update(
        act_min=rq.act_min,
        act_max=rq.act_max,
        weights=weights,
        bias=ctx.array("bias64", "int64_t", rq.bias),
        rm=ctx.array("rm", "int32_t", rq.rm),
        ts=ctx.array("ts", "int32_t", rq.ts),
    )
    return fields


def require_bias(op: Op, g: Graph) -> None:
    """16x8 convolutions need their int64 bias: TFLM picks the int16 kernel's accumulator type
    (and so its requantization) from the bias' type, which a missing bias leaves undecided."""
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        raise fail(op, f"a 16x8 {op.kind} without bias is not supported")
