"""QUANTIZE (float32 -> int8 / int16, int8 -> int8, int8 <-> int16, int16 -> int16, int8 / int16
<-> int32) and DEQUANTIZE (int8 / int16 -> float32), as TFLM's quantize_common.cc and
dequantize_common.cc.

- int8 -> int8 QUANTIZE (reference_ops::Requantize) is a 256-entry table (``tc_lut_s8``) and runs
  in place; int8 -> int16 is a 256-entry int16 table (``tc_lut_s8_s16``); int16 -> int8 and
  int16 -> int16 requantize on the device (``tc_requantize_s16_*``, firmware/kernels/
  tc_requantize.c) with TFLM's multiplier, QuantizeMultiplier(double(in) / double(out)). int16
  activations appear inside TFLM's int8 keyword models around SVDF and LSTM.
- the int32 pairs TFLM allows (int8 / int16 -> int32, int32 -> int8 / int16; TFLM's keyword
  models end in an int16 -> int32 QUANTIZE) requantize the same way (``tc_requantize_s8_s32``
  & co.), the zero point arithmetic wrapping as TFLM's int32 does. int32 -> int32 and
  float32 -> int32 are refused, as TFLM's quantize.cc has no such path.
- float32 -> int8 QUANTIZE divides by the scale in float32 on the device and rounds half away
  from zero (``tc_quantize_f32_s8``; to int16, the 16x8 interface: ``tc_quantize_f32_s16``).
- DEQUANTIZE is a 256-entry float table (``scale * (q - zp)`` evaluated in float32 as TFLM
  does), copied bit for bit (``tc_dequantize_s8_f32``); from int16, ``scale * (q - zp)`` in
  float32 on the device (``tc_dequantize_s16_f32``: the exact product rounded once, as TFLM's
  ``float(double(scale) * v)``).
Kernels in firmware/kernels/tc_activations.c.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op, Tensor
from ..quant.fixedpoint import mul_by_quantized_multiplier
from ..quant.qmath import quantize_multiplier
from . import tables as T
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import QMAX, QMIN, inp, lut_call, out, positive_scales, require_int8


def _same_size(op: Op, g: Graph) -> None:
    i, o = inp(op, g), out(op, g)
    if i.size != o.size:
        raise fail(op, f"input has {i.size} elements but output has {o.size}")


def _one_in_one_out(op: Op) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        raise fail(op, "expects one input and one output")


def _per_tensor(op: Op, t: Tensor, what: str) -> None:
    if t.quant is None or t.quant.per_channel:
        raise fail(op, f"{what} tensor {t.id} must be quantized per tensor")
    positive_scales(op, t)


@dataclass(frozen=True, kw_only=True)
class Quantize(Prepared):
    lut: np.ndarray | None  # int8 -> int8: the requantization table; float input: None
    fields: tuple[tuple[str, int], ...] = ()  # int16 input: tc_requantize_params_t
    lut16: np.ndarray | None = None  # int8 -> int16: the int16 table


REQUANTIZE_PAIRS = {
    ("int8", "int16"),
    ("int16", "int8"),
    ("int16", "int16"),
    ("int8", "int32"),
    ("int16", "int32"),
    ("int32", "int8"),
    ("int32", "int16"),
}
LO = {**QMIN, "int32": -(1 << 31)}
HI = {**QMAX, "int32": (1 << 31) - 1}
SUFFIX = {"int8": "s8", "int16": "s16", "int32": "s32"}


def _requantize(op: Op, g: Graph) -> Quantize:
    """Every pair of REQUANTIZE_PAIRS (reference_ops::Requantize)."""
    i, o = inp(op, g), out(op, g)
    _per_tensor(op, i, "input")
    _per_tensor(op, o, "output")
    _same_size(op, g)
    mult, shift = quantize_multiplier(float(i.quant.scale[0]) / float(o.quant.scale[0]))
    lo, hi = LO[o.dtype], HI[o.dtype]
    if (i.dtype, o.dtype) == ("int8", "int16"):
        lut = np.empty(256, np.int16)
        for q in range(-128, 128):
            v = mul_by_quantized_multiplier(q - i.quant.zp, mult, shift) + o.quant.zp
            lut[q & 0xFF] = max(lo, min(hi, v))
        return Quantize(lut=None, lut16=lut, macs=o.size)
    fields = {
        "size": i.size,
        "in_zp": i.quant.zp,
        "mult": mult,
        "shift": shift,
        "out_zp": o.quant.zp,
        "out_min": lo,
        "out_max": hi,
    }
    wide = "int32" in (i.dtype, o.dtype)  # the int32 kernels walk so as to run in place
    grows, shrinks = wide and o.nbytes > i.nbytes, wide and o.nbytes < i.nbytes
    return Quantize(
        lut=None,
        fields=tuple(fields.items()),
        macs=o.size,
        in_place_grows=grows,
        in_place_shrinks=shrinks,
    )


@register
class QuantizeOp(Operator):
    kinds = ("QUANTIZE",)
    int16 = True  # int8 <-> int16 and int16 -> int16 (its own checks)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Quantize:
        _one_in_one_out(op)
        i, o = inp(op, g), out(op, g)
        pair = (i.dtype, o.dtype)
        if pair in REQUANTIZE_PAIRS:
            return _requantize(op, g)
        if "int32" in pair:
            raise fail(op, f"{i.dtype} -> {o.dtype} quantization is not supported (TFLM has none)")
        if o.dtype == "int16":
            if i.dtype != "float32":
                raise fail(op, f"{i.dtype} -> int16 quantization is not supported")
            _per_tensor(op, o, "output")
            _same_size(op, g)
            return Quantize(lut=None, in_place_shrinks=True)
        require_int8(op, g, [o.id], "output")
        positive_scales(op, o)
        if i.dtype == "int8":
            require_int8(op, g, [i.id], "input")
            positive_scales(op, i)
        elif i.dtype != "float32":
            raise fail(
                op, f"{i.dtype} -> int8 quantization is not supported (float32, int8, int16 only)"
            )
        _same_size(op, g)
        if i.dtype != "int8":  # float32: the kernel's forward walk runs in place
            return Quantize(lut=None, in_place_shrinks=True)
        return Quantize(lut=T.requantize_lut(i.quant.s, i.quant.zp, o.quant.s, o.quant.zp))

    def lower(self, op: Op, g: Graph, d: Quantize, ctx: LowerCtx, choice: Choice) -> str:
        if d.lut is not None:
            return lut_call(op, g, ctx, d.lut)
        args = f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)}"
        if d.lut16 is not None:
            sym = ctx.array("lut_s16", "int16_t", d.lut16)
            p = ctx.params("tc_lut16_params_t", {"size": inp(op, g).size, "lut": sym})
            return f"tc_lut_s8_s16({p}, {args});"
        if d.fields:
            p = ctx.params("tc_requantize_params_t", dict(d.fields))
            fn = f"tc_requantize_{SUFFIX[inp(op, g).dtype]}_{SUFFIX[out(op, g).dtype]}"
            return f"{fn}({p}, {args});"
        i, o = inp(op, g), out(op, g)
        bits = struct.unpack("<I", struct.pack("<f", o.quant.s))[0]
        p = ctx.params(
            "tc_quantize_params_t",
            {"size": i.size, "scale_bits": f"0x{bits:08X}u", "zero_point": o.quant.zp},
        )
        fn = "tc_quantize_f32_s16" if o.dtype == "int16" else "tc_quantize_f32_s8"
        return f"{fn}({p}, {ctx.ptr(i.id)}, {ctx.ptr(o.id, const=False)});"


@dataclass(frozen=True, kw_only=True)
class Dequantize(Prepared):
    table: np.ndarray | None  # float32[256] as its bits (int16 input: None, computed on device)


@register
class DequantizeOp(Operator):
    kinds = ("DEQUANTIZE",)
    int16 = True

    def prepare(self, op: Op, g: Graph) -> Dequantize:
        _one_in_one_out(op)
        i, o = inp(op, g), out(op, g)
        if i.dtype == "int16":
            _per_tensor(op, i, "input")
            if o.dtype != "float32":
                raise fail(op, f"int16 -> {o.dtype} dequantization is not supported")
            _same_size(op, g)
            return Dequantize(table=None, in_place_grows=True)
        require_int8(op, g, [i.id], "input")
        positive_scales(op, i)
        if o.dtype != "float32":
            raise fail(op, f"int8 -> {o.dtype} dequantization is not supported (float32 only)")
        _same_size(op, g)
        table = T.dequantize_table(i.quant.s, i.quant.zp).view(np.uint32)
        return Dequantize(table=table, in_place_grows=True)

    def lower(self, op: Op, g: Graph, d: Dequantize, ctx: LowerCtx, choice: Choice) -> str:
        if d.table is None:
            i = inp(op, g)
            bits = struct.unpack("<I", struct.pack("<f", i.quant.s))[0]
            fields = {"size": i.size, "scale_bits": f"0x{bits:08X}u", "zero_point": i.quant.zp}
            p = ctx.params("tc_quantize_params_t", fields)
            args = f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0], const=False)}"
            return f"tc_dequantize_s16_f32({p}, {args});"
        sym = ctx.array("dequant_lut", "uint32_t", d.table)
        p = ctx.params("tc_dequantize_params_t", {"size": inp(op, g).size, "lut_bits": sym})
        return (
            f"tc_dequantize_s8_f32({p}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0], const=False)});"
        )
