"""SOFTMAX, TFLM's three quantized paths (softmax_common.cc, reference/softmax.h):

- int8 -> int8 (output scale 1/256, zero point -128) and int8 -> int16 (scale 1/65536, zero point
  -32768, as TFLM's keyword models end): TFLM's gemmlowp fixed point; the exp() of every
  possible ``x - max`` difference (0..255) is tabulated at compile time
  (``tables.softmax_exp_table``), the per-row sum, reciprocal and final scaling run on the
  device with the same arithmetic, ``tc_softmax_s8`` / ``tc_softmax_s8_s16``
  (firmware/kernels/tc_activations.c).
- int16 -> int16 (16x8: zero points 0, output scale 1/32768): TFLM's SoftmaxInt16, the input
  difference rescaled to [-65535, 0] ~ [-10, 0] and looked up with interpolation in TFLM's
  513-entry exp and 1/(1+x) tables (``tables.softmax_s16_luts``, TFLM's LUTPopulate emulated in
  float32), ``tc_softmax_s16`` (firmware/kernels/tc_activations_int16.c).

Runs in place over its input when the output is as large.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op, Tensor
from . import tables as T
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, io_int8, out, positive_scales, require_int8
from .s16 import require_int16


@dataclass(frozen=True, kw_only=True)
class Softmax(Prepared):
    rows: int
    depth: int
    exp_table: np.ndarray | None = None  # int8 input: int32[256]
    s16: tuple[int, int] | None = None  # int16 input: (multiplier, shift)
    out16: bool = False


def _near(x: float, target: float) -> bool:
    """TF_LITE_ENSURE_NEAR(x, target, 0.001 * target), in float as TFLM compares."""
    return abs(float(np.float32(x)) - target) <= 0.001 * target


def _shapes(op: Op, i: Tensor, o: Tensor) -> tuple[int, int]:
    if len(i.shape) < 1 or i.shape != o.shape:
        raise fail(op, f"input shape {list(i.shape)} and output shape {list(o.shape)} differ")
    depth = i.shape[-1]
    return i.size // max(depth, 1), depth


@register
class SoftmaxOp(Operator):
    kinds = ("SOFTMAX",)
    elementwise = True
    int16 = True  # int8 -> int16 and int16 -> int16 (its own checks)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"beta": float(options.get("beta", 1.0))}

    def prepare(self, op: Op, g: Graph) -> Softmax:
        if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
            raise fail(op, "expects one input and one output")
        i, o = inp(op, g), out(op, g)
        beta = op.attrs.get("beta", 1.0)
        if i.dtype == "int16":
            require_int16(op, g, [i.id, o.id])
            if not _near(o.quant.s, 1.0 / 32768):
                raise fail(op, "int16 output must have scale 1/32768 and zero point 0")
            rows, depth = _shapes(op, i, o)
            mult, shift = T.softmax_s16_params(i.quant.s, beta)
            if shift > 15:  # 65535 << shift would overflow TFLM's int32 (undefined there)
                raise fail(op, f"input scale * beta = {i.quant.s * beta:g} is too large")
            return Softmax(rows=rows, depth=depth, s16=(mult, shift))
        if o.dtype == "int16":
            require_int8(op, g, [i.id], "input")
            positive_scales(op, i)
            if o.quant is None or o.quant.per_channel or o.quant.zp != -32768:
                raise fail(op, "int8 -> int16 output must have scale 1/65536 and zero point -32768")
            if not _near(o.quant.s, 1.0 / 65536):
                raise fail(op, "int8 -> int16 output must have scale 1/65536 and zero point -32768")
            out16 = True
        else:
            i, o = io_int8(op, g)
            if o.quant.zp != -128 or o.quant.scale[0] != np.float32(1.0 / 256.0):
                raise fail(op, "int8 output must have scale 1/256 and zero point -128")
            out16 = False
        rows, depth = _shapes(op, i, o)
        try:
            table = T.softmax_exp_table(i.quant.s, beta)
        except ValueError as e:
            raise fail(op, str(e)) from None
        return Softmax(rows=rows, depth=depth, exp_table=table, out16=out16)

    def lower(self, op: Op, g: Graph, d: Softmax, ctx: LowerCtx, choice: Choice) -> str:
        if d.s16 is not None:
            exp_lut, recip_lut = T.softmax_s16_luts()
            fields = {
                "rows": d.rows,
                "depth": d.depth,
                "mult": d.s16[0],
                "shift": d.s16[1],
                "exp_lut": ctx.array("softmax_exp16", "int16_t", exp_lut),
                "recip_lut": ctx.array("softmax_recip16", "int16_t", recip_lut),
            }
            return io_call("tc_softmax_s16", op, ctx, ctx.params("tc_softmax_s16_params_t", fields))
        sym = ctx.array("softmax_exp", "int32_t", d.exp_table)
        p = ctx.params("tc_softmax_params_t", {"rows": d.rows, "depth": d.depth, "exp_lut": sym})
        return io_call("tc_softmax_s8_s16" if d.out16 else "tc_softmax_s8", op, ctx, p)
