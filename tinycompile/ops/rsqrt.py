"""RSQRT (int8), as TFLM's elementwise.cc computes it (``RsqrtEvalQuantized``): the offset input
``v`` goes through ``GetInvSqrtQuantizedMultiplierExp`` (gemmlowp Newton-Raphson), is scaled up
by 2^20, then requantized by ``1 / (sqrt(input_scale) * output_scale)``; ``v == 0`` gives 127.
A function of one int8 input, so the whole op is a 256-entry table computed here by running that
integer algorithm on every input, and the device runs ``tc_lut_s8``
(firmware/kernels/tc_activations.c). TFLM's Invoke fails on an input below the zero point (a
negative real value); so does this layer when its zero point lets such inputs occur: it runs
``tc_lut_checked_s8``, which stops at the first one and makes ``tc_invoke()`` return 1 + the
layer (no check, and no cost, when the zero point is -128). Runs in place.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier
from .activations import Lut
from .base import Choice, LowerCtx, Operator, register
from .common import io_int8, lut_call

SHIFT = 20  # TFLM's kShift: keeps 1/sqrt(v) an integer
REFUSAL = "negative value"  # what TFLM's Invoke fails on ("Rsqrt is only defined for positive")


def rsqrt_lut(in_scale: float, in_zp: int, out_scale: float, out_zp: int) -> np.ndarray:
    """TFLM int8 RSQRT on every input, indexed by the input's bit pattern."""
    mult, shift = quantize_multiplier(1.0 / (math.sqrt(in_scale) * out_scale))
    lut = np.empty(256, dtype=np.int8)
    for q in range(-128, 128):
        v = q - in_zp
        if v <= 0:  # 0: TFLM's "close to 0 is the max"; negative: TFLM errors out
            y = 127
        else:
            m, s = fp.inv_sqrt_multiplier_exp(v, -1)
            data = fp.mul_by_quantized_multiplier(1, m, s + SHIFT)
            y = fp.mul_by_quantized_multiplier(data, mult, shift - SHIFT) + out_zp
        lut[q & 0xFF] = max(-128, min(127, y))
    return lut


@register
class RsqrtOp(Operator):
    kinds = ("RSQRT",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Lut:
        i, o = io_int8(op, g)
        return Lut(macs=i.size, lut=rsqrt_lut(i.quant.s, i.quant.zp, o.quant.s, o.quant.zp))

    def lower(self, op: Op, g: Graph, d: Lut, ctx: LowerCtx, choice: Choice) -> str:
        i = g.t(op.inputs[0])
        if i.quant.zp <= -128:  # no input can be negative: the plain table
            return lut_call(op, g, ctx, d.lut)
        ctx.refuses(REFUSAL)
        sym = ctx.array("lut_rsqrt", "int8_t", d.lut)
        p = ctx.params(
            "tc_lut_checked_params_t", {"size": i.size, "lut": sym, "min_input": i.quant.zp}
        )
        return (
            f"tc_lut_checked_s8({p}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0], const=False)})"
        )
