"""DIV (int8, broadcasting), as TFLM's div.cc (reference/div.h ``DivElementwise`` and
``BroadcastDivSlowQuantized``): the offset divisor's sign moves to the dividend, its reciprocal
comes from ``GetReciprocal`` (gemmlowp Newton-Raphson), the dividend is normalised by its
leading sign bits, multiplied, then requantized by ``input1_scale / (input2_scale *
output_scale)`` (taken in float32) with the normalisation folded into the final rounding shift,
clamped to the fused activation. TFLM broadcasts up to rank 5.

The reciprocal depends on the divisor byte alone: its 256 values (multiplier and shift) are
computed here and stored in flash (1.25 KB), and the device runs the rest
(``tc_div_s8``, firmware/kernels/tc_div.c). That rounding shift can exceed 31 (small dividends,
small output multipliers), where gemmlowp's ``RoundingDivideByPOT`` is undefined in C++; the
reference, TFLM's x86 build, then shifts by the exponent modulo 32 with an all-ones mask, and so
does the kernel, so that the device agrees with it. A zero divisor (TFLM only DCHECKs it) gives
what TFLM's arithmetic gives for 0. ``div_reference`` is the whole computation in Python.

int32 DIV (unquantized, as TFLM's EvalDiv<int32_t>): C integer division, truncating toward
zero, clamped to the fused activation's int32 range (``tc_div_s32``). A zero divisor (or
INT32_MIN / -1) traps in TFLM's x86 build; the kernel gives 0 (INT32_MIN) instead, and a
constant zero divisor is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier, srdhm
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .broadcast import binary_call, check_binary, shape_fields
from .common import fused_activation, inp, out, positive_scales
from .minmax import check_broadcast_rank

MAX_OUT_SHIFT = 22  # above, the final shift could turn left (TFLM: undefined); refused


@dataclass(frozen=True, kw_only=True)
class Div(Prepared):
    fields: tuple[tuple[str, int], ...]
    inv: np.ndarray  # int32[256]: 1/|divisor| in Q0.31, by the divisor's byte
    inv_shift: np.ndarray  # int8[256]: its exponent (GetReciprocal's num_bits_over_unit)


def clrsb(x: int) -> int:
    """CountLeadingSignBits of an int32 (31 for 0)."""
    return 31 - (x if x >= 0 else ~x).bit_length()


def rdivpot_x86(x: int, e: int) -> int:
    """gemmlowp RoundingDivideByPOT as TFLM's x86 build computes it, exponents above 31 too."""
    mask = fp.wrap32((1 << e) - 1)
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> (e & 31)) + (1 if (x & mask) > threshold else 0)


def reciprocals(in2_zp: int) -> tuple[np.ndarray, np.ndarray]:
    """GetReciprocal(|q - zp|, 31) for every divisor byte q, indexed by its bit pattern."""
    inv = np.zeros(256, np.int32)
    sh = np.zeros(256, np.int8)
    for q in range(-128, 128):
        m, s = fp.get_reciprocal(abs(q - in2_zp), 31)
        inv[q & 0xFF], sh[q & 0xFF] = m, s
    return inv, sh


def div_reference(a: int, b: int, f: Mapping[str, int], inv: np.ndarray, sh: np.ndarray) -> int:
    """TFLM's int8 DIV of the bytes ``a`` / ``b``, with the prepared fields and reciprocals."""
    v1, v2 = a + f["in1_offset"], b + f["in2_offset"]
    if v2 < 0:
        v1 = -v1
    hr = clrsb(v1)
    q = srdhm(fp.wrap32(v1 << hr), int(inv[b & 0xFF]))
    e = hr + int(sh[b & 0xFF]) - f["out_shift"]
    raw = rdivpot_x86(srdhm(q, f["out_multiplier"]), e) + f["out_offset"]
    return max(f["act_min"], min(f["act_max"], raw))


@dataclass(frozen=True, kw_only=True)
class Div32(Prepared):
    fields: tuple[tuple[str, int], ...]  # the activation's int32 clamp


INT32_RANGE = {  # CalculateActivationRange<int32_t> (unquantized)
    "NONE": (-(2**31), 2**31 - 1),
    "RELU": (0, 2**31 - 1),
    "RELU6": (0, 6),
    "RELU_N1_TO_1": (-1, 1),
}


def div32(op: Op, g: Graph) -> Div32:
    """TFLM's unquantized int32 DIV: C integer division (toward zero), clamped."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or -1 in op.inputs:
        raise fail(op, "expects 2 inputs and 1 output")
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    for t in (a, b, o):
        if t.dtype != "int32":
            raise fail(op, f"{t.dtype} tensor {t.id} in an int32 DIV")
        if t.quant is not None and (t.quant.s != 1.0 or t.quant.zp != 0):
            raise fail(op, f"quantized int32 tensor {t.id} (TFLM divides unquantized int32 only)")
    try:
        want = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise fail(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    if tuple(want) != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} is not the broadcast shape {list(want)}")
    check_broadcast_rank(op, g, 5)
    act = op.attrs.get("activation", "NONE")
    if act not in INT32_RANGE:
        raise fail(op, f"fused activation {act} is not supported")
    if b.is_const and not np.all(np.asarray(b.data)):
        raise fail(op, "a constant divisor is 0 (TFLM's integer division traps)")
    lo, hi = INT32_RANGE[act]
    return Div32(macs=o.size, fields=(("act_min", lo), ("act_max", hi)))


@register
class DivOp(Operator):
    kinds = ("DIV",)
    elementwise = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Div | Div32:
        if op.outputs and g.t(op.outputs[0]).dtype == "int32":
            return div32(op, g)
        lo, hi = check_binary(op, g)
        check_broadcast_rank(op, g, 5)
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        positive_scales(op, a, b, o)
        f32 = np.float32
        m, s = quantize_multiplier(float(f32(a.quant.s) / (f32(b.quant.s) * f32(o.quant.s))))
        if s > MAX_OUT_SHIFT:
            raise fail(op, f"output multiplier exponent {s} above {MAX_OUT_SHIFT} (scales absurd)")
        inv, sh = reciprocals(b.quant.zp)
        fields = {
            "in1_offset": -a.quant.zp,
            "in2_offset": -b.quant.zp,
            "out_multiplier": m,
            "out_shift": s,
            "out_offset": o.quant.zp,
            "act_min": lo,
            "act_max": hi,
        }
        return Div(macs=o.size, fields=tuple(fields.items()), inv=inv, inv_shift=sh)

    def lower(self, op: Op, g: Graph, d: Div | Div32, ctx: LowerCtx, choice: Choice) -> str:
        fields = shape_fields(op, g, ctx)
        fields.update(d.fields)
        if isinstance(d, Div32):
            return binary_call("tc_div_s32", op, ctx, ctx.params("tc_div_s32_params_t", fields))
        fields["inv"] = ctx.array("div_inv", "int32_t", d.inv)
        fields["inv_shift"] = ctx.array("div_inv_shift", "int8_t", d.inv_shift)
        return binary_call("tc_div_s8", op, ctx, ctx.params("tc_div_params_t", fields))
