"""QUANTIZE (float32 -> int8, int8 -> int8) and DEQUANTIZE (int8 -> float32), as TFLM's
quantize_common.cc and dequantize_common.cc.

- int8 -> int8 QUANTIZE (reference_ops::Requantize) is a 256-entry table (``tc_lut_s8``) and runs
  in place.
- float32 -> int8 QUANTIZE divides by the scale in float32 on the device and rounds half away
  from zero (``tc_quantize_f32_s8``).
- DEQUANTIZE is a 256-entry float table (``scale * (q - zp)`` evaluated in float32 as TFLM
  does), copied bit for bit (``tc_dequantize_s8_f32``).
Kernels in firmware/kernels/tc_activations.c.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from . import tables as T
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, lut_call, out, positive_scales, require_int8


def _same_size(op: Op, g: Graph) -> None:
    i, o = inp(op, g), out(op, g)
    if i.size != o.size:
        raise fail(op, f"input has {i.size} elements but output has {o.size}")


def _one_in_one_out(op: Op) -> None:
    if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        raise fail(op, "expects one input and one output")


@dataclass(frozen=True, kw_only=True)
class Quantize(Prepared):
    lut: np.ndarray | None  # int8 -> int8: the requantization table; float input: None


@register
class QuantizeOp(Operator):
    kinds = ("QUANTIZE",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> Quantize:
        _one_in_one_out(op)
        i, o = inp(op, g), out(op, g)
        require_int8(op, g, [o.id], "output")
        positive_scales(op, o)
        if i.dtype == "int8":
            require_int8(op, g, [i.id], "input")
            positive_scales(op, i)
        elif i.dtype != "float32":
            raise fail(op, f"{i.dtype} -> int8 quantization is not supported (float32, int8 only)")
        _same_size(op, g)
        if i.dtype != "int8":
            return Quantize(lut=None)
        return Quantize(lut=T.requantize_lut(i.quant.s, i.quant.zp, o.quant.s, o.quant.zp))

    def lower(self, op: Op, g: Graph, d: Quantize, ctx: LowerCtx, choice: Choice) -> str:
        if d.lut is not None:
            return lut_call(op, g, ctx, d.lut)
        i, o = inp(op, g), out(op, g)
        bits = struct.unpack("<I", struct.pack("<f", o.quant.s))[0]
        p = ctx.params(
            "tc_quantize_params_t",
            {"size": i.size, "scale_bits": f"0x{bits:08X}u", "zero_point": o.quant.zp},
        )
        return f"tc_quantize_f32_s8({p}, {ctx.ptr(i.id)}, {ctx.ptr(o.id, const=False)});"


@dataclass(frozen=True, kw_only=True)
class Dequantize(Prepared):
    table: np.ndarray  # float32[256] as its bits


@register
class DequantizeOp(Operator):
    kinds = ("DEQUANTIZE",)

    def prepare(self, op: Op, g: Graph) -> Dequantize:
        _one_in_one_out(op)
        i, o = inp(op, g), out(op, g)
        require_int8(op, g, [i.id], "input")
        positive_scales(op, i)
        if o.dtype != "float32":
            raise fail(op, f"int8 -> {o.dtype} dequantization is not supported (float32 only)")
        _same_size(op, g)
        return Dequantize(table=T.dequantize_table(i.quant.s, i.quant.zp).view(np.uint32))

    def lower(self, op: Op, g: Graph, d: Dequantize, ctx: LowerCtx, choice: Choice) -> str:
        sym = ctx.array("dequant_lut", "uint32_t", d.table)
        p = ctx.params("tc_dequantize_params_t", {"size": inp(op, g).size, "lut_bits": sym})
        return (
            f"tc_dequantize_s8_f32({p}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0], const=False)});"
        )
