"""LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU (int8): each one 256-entry lookup table
computed at compile time by running TFLM's integer algorithm for that op on every input
(``tables``), and one kernel for all of them, ``tc_lut_s8`` (firmware/kernels/tc_activations.c).

LOGISTIC and TANH int16 (16x8; zero points 0, output scale 2^-15): TFLM's int16 paths
(reference_integer_ops::Logistic / ::Tanh): the input scaled by TFLM's multiplier and shift
(``tables.sigmoid16_params``), then linear interpolation in the 256-entry sigmoid table the LSTM
uses (``tables.sigmoid_interp_table``), on the device: ``tc_logistic_s16`` / ``tc_tanh_s16``
(firmware/kernels/tc_activations_int16.c). RELU and RELU6 int16 (zero points 0): TFLM's
ReluQuantized (requantized by QuantizeMultiplier(float(in scale / out scale)), clamped below at
zero) and Relu6Quantized (clamped to [0, six] in the input's quantization), both through the
int16 requantization kernel ``tc_requantize_s16_s16`` (RELU6 with the identity multiplier).
TFLM has no int16 HARD_SWISH; int16 LEAKY_RELU is refused here.

Semantics from TFLM's logistic_common.cc, tanh.cc, hard_swish_common.cc, activations_common.cc
and leaky_relu_common.cc. They run in place over their input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier, tflite_round
from . import tables as T
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, io_int8, lut_call, out
from .s16 import is_int16, require_int16


@dataclass(frozen=True, kw_only=True)
class Lut(Prepared):
    lut: np.ndarray | None  # int8[256], indexed by the input's bit pattern (int16: None)
    s16: tuple[int, int] | None = None  # int16 LOGISTIC/TANH: (input multiplier, shift)
    requant: tuple[tuple[str, int], ...] = ()  # int16 RELU/RELU6: tc_requantize_params_t


def _prepare_s16(op: Op, g: Graph) -> Lut:
    """int16 LOGISTIC / TANH, with TFLM's checks (logistic_common.cc, tanh.cc)."""
    if op.kind not in ("LOGISTIC", "TANH", "RELU", "RELU6"):
        raise fail(op, f"int16 activations are not supported for {op.kind} (16x8)")
    if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        raise fail(op, "expects one input and one output")
    require_int16(op, g, [op.inputs[0], op.outputs[0]])
    i, o = inp(op, g), out(op, g)
    if i.size != o.size:
        raise fail(op, f"input has {i.size} elements but output has {o.size}")
    if op.kind in ("RELU", "RELU6"):
        f32 = np.float32
        if op.kind == "RELU":  # ReluQuantized: the ratio divided in float32, as TFLM
            mult, shift = quantize_multiplier(float(f32(i.quant.s) / f32(o.quant.s)))
            hi = 32767
        else:  # Relu6Quantized: a clamp in the input's quantization (identity multiplier)
            mult, shift = 1 << 30, 1
            hi = min(32767, tflite_round(float(f32(f32(6.0) / f32(i.quant.s)))))
        fields = {
            "size": i.size,
            "in_zp": 0,
            "mult": mult,
            "shift": shift,
            "out_zp": 0,
            "out_min": 0,
            "out_max": hi,
        }
        return Lut(lut=None, requant=tuple(fields.items()))
    log2, pot = T.log2_rounded(o.quant.s)
    if not pot or log2 != -15:
        raise fail(op, f"int16 output scale must be 2^-15 (is {o.quant.s:g})")
    mult, shift = T.sigmoid16_params(i.quant.s, op.kind == "TANH")
    if mult > 32767:
        raise fail(op, f"int16 input scale {i.quant.s:g} is too large (TFLM: multiplier > 32767)")
    return Lut(lut=None, s16=(mult, shift))


@register
class LutActivationOp(Operator):
    kinds = ("LOGISTIC", "TANH", "HARD_SWISH", "RELU", "RELU6")
    elementwise = True
    int16 = True  # LOGISTIC, TANH, RELU, RELU6; HARD_SWISH refuses int16 in prepare

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        if kind == "LEAKY_RELU":
            return {"alpha": float(options.get("alpha", 0.0))}
        return {}

    def prepare(self, op: Op, g: Graph) -> Lut:
        if any(
            t >= 0 and g.t(t).dtype == "int16" and not g.t(t).is_const
            for t in [*op.inputs, *op.outputs]
        ):
            return _prepare_s16(op, g)
        i, o = io_int8(op, g)
        (si, zi), (so, zo) = (i.quant.s, i.quant.zp), (o.quant.s, o.quant.zp)
        if op.kind == "LOGISTIC" and zo != -128:
            raise fail(op, f"int8 output zero point must be -128 (is {zo})")
        if op.kind in ("LOGISTIC", "TANH"):
            _, shift = fp.frexp_multiplier(si * float(1 << 27))
            if not 0 <= shift <= 31:
                raise fail(op, f"input scale {si:g} is out of the supported range")
        if op.kind == "HARD_SWISH" and T.hard_swish_params(si, so)[1] > 0:
            raise fail(op, "input/output scale ratio too large (output exponent > 0)")
        if op.kind == "LEAKY_RELU" and "alpha" not in op.attrs:
            raise fail(op, "alpha attribute missing (frontend did not parse LeakyReluOptions)")
        lut = {
            "LOGISTIC": lambda: T.logistic_lut(si, zi),
            "TANH": lambda: T.tanh_lut(si, zi),
            "HARD_SWISH": lambda: T.hard_swish_lut(si, zi, so, zo),
            "RELU": lambda: T.relu_lut(si, zi, so, zo),
            "RELU6": lambda: T.relu6_lut(si, zi),
            "LEAKY_RELU": lambda: T.leaky_relu_lut(si, zi, so, zo, float(op.attrs["alpha"])),
        }[op.kind]()
        return Lut(lut=lut)

    def lower(self, op: Op, g: Graph, d: Lut, ctx: LowerCtx, choice: Choice) -> str:
        if d.requant:
            p = ctx.params("tc_requantize_params_t", dict(d.requant))
            return io_call("tc_requantize_s16_s16", op, ctx, p)
        if d.s16 is not None:
            fields = {
                "size": inp(op, g).size,
                "mult": d.s16[0],
                "shift": d.s16[1],
                "lut": ctx.array("sigmoid_lut", "uint16_t", T.sigmoid_interp_table()),
            }
            p = ctx.params("tc_sigmoid16_params_t", fields)
            return io_call(f"tc_{op.kind.lower()}_s16", op, ctx, p)
        return lut_call(op, g, ctx, d.lut)


@dataclass(frozen=True, kw_only=True)
class LeakyRelu16(Prepared):
    size: int
    mults: tuple[int, int, int, int, int]  # identity mult, shift; |alpha| mult, shift, sign


@register
class LeakyReluOp(LutActivationOp):
    """LEAKY_RELU: int8 through the table above; int16 (16x8) as TFLM's QuantizeLeakyRelu on
    the device, ``tc_leaky_relu_s16`` (firmware/kernels/tc_leaky_relu.c): the identity or the
    alpha multiplier (int32 MultiplyByQuantizedMultiplier), zero points 0."""

    kinds = ("LEAKY_RELU",)
    int16 = True

    def prepare(self, op: Op, g: Graph) -> Prepared:
        if not is_int16(op, g):
            return super().prepare(op, g)
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            raise fail(op, "expects one input and one output")
        require_int16(op, g, [op.inputs[0], op.outputs[0]])
        i, o = inp(op, g), out(op, g)
        if i.size != o.size:
            raise fail(op, f"input has {i.size} elements but output has {o.size}")
        alpha = op.attrs.get("alpha")
        if alpha is None:
            raise fail(op, "alpha attribute missing (frontend did not parse LeakyReluOptions)")
        # The ratios in double: the installed TFLM's int16 results match these (the float32
        # ratios of leaky_relu_common.cc's source differ by 1 on some of its own test models).
        # A negative alpha: TFLM multiplies by |multiplier| and negates (the same integers as
        # the signed multiplier: both roundings are symmetric about zero).
        mi, si = quantize_multiplier(i.quant.s / o.quant.s)
        ma, sa = quantize_multiplier(i.quant.s * abs(alpha) / o.quant.s)
        sign = -1 if alpha < 0 else 1
        return LeakyRelu16(size=i.size, mults=(mi, si, ma, sa, sign), macs=i.size)

    def lower(self, op: Op, g: Graph, d: Prepared, ctx: LowerCtx, choice: Choice) -> str:
        if not isinstance(d, LeakyRelu16):
            return super().lower(op, g, d, ctx, choice)
        mi, si, ma, sa, sign = d.mults
        fields = {"size": d.size, "m_identity": mi, "s_identity": si}
        fields.update(m_alpha=ma, s_alpha=sa, alpha_sign=sign)
        return io_call("tc_leaky_relu_s16", op, ctx, ctx.params("tc_leaky_relu_params_t", fields))
