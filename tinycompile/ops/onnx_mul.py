"""ONNX_MUL: onnxruntime's QLinearMul (and a fused QDQ Mul) on int8 or uint8, as MLAS's x86-64
kernel (qlmul.cpp) computes it: ``round_half_even(float((a - a_zp) * (b - b_zp)) * scale +
float(c_zp))`` saturated, the product and the sum each a float32 operation, with ``scale =
(a_scale * b_scale) / c_scale`` in float32 (the product of two 8-bit differences is exact in
float32). The zero point is added before the rounding, and it is the model's own (uint8: 0..255,
not the IR's value minus 128: the float32 sum rounds differently). B may repeat along the
trailing elements. Kernel: ``tc_onnx_mul_s8`` (firmware/kernels/tc_onnx.c), in float32 on cores
with a single-precision FPU; elsewhere (Cortex-M0+, the host) from ``thresholds``: the output
rises with the integer product, and the 255 least products reaching each output above the
lowest are computed here with the same float32 steps (numpy's are correctly rounded), so the
device counts the thresholds below its product (a binary search; 1 KB of flash per layer)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, require_int8
from .onnx_requant import F32


def thresholds(scale: np.float32, zp: int, lo: int, hi: int, prods: np.ndarray) -> np.ndarray:
    """For k = 1..255, the least of the sorted integer ``prods`` whose output
    ``round_half_even(float(prod) * scale + float(zp))`` (float32 steps, saturated to [lo, hi])
    is at least ``lo + k``; one past the largest where none is (it is never reached). Each step
    is monotone for a positive scale, so the outputs are sorted as the products are."""
    v = prods.astype(F32) * F32(scale) + F32(zp)
    q = np.rint(np.clip(v, F32(lo), F32(hi))).astype(np.int64)
    at = np.searchsorted(q, lo + np.arange(1, 256), side="left")
    return np.append(prods, prods[-1] + 1)[at].astype(np.int32)


@dataclass(frozen=True, kw_only=True)
class OnnxMul(Prepared):
    fields: tuple[tuple[str, object], ...]
    thresholds: np.ndarray


@register
class OnnxMulOp(Operator):
    kinds = ("ONNX_MUL",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> OnnxMul:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects 2 inputs and 1 output")
        require_int8(op, g, [*op.inputs, op.outputs[0]])
        a, b, c = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if a.size != c.size or c.size % b.size:
            raise fail(op, f"broadcast of B {list(b.shape)} to {list(c.shape)} is not supported")
        scale = (F32(a.quant.s) * F32(b.quant.s)) / F32(c.quant.s)
        u8 = bool(op.attrs.get("uint8"))  # stored as int8 - 128: the model's values are + 128
        lo, hi = (0, 255) if u8 else (-128, 127)
        zp = c.quant.zp + (128 if u8 else 0)  # the model's own
        da = np.arange(-128, 128) - a.quant.zp  # every a - a_zp, then every product
        db = np.arange(-128, 128) - b.quant.zp
        prods = np.unique(np.outer(da, db))
        fields = dict(size=c.size, b_size=b.size, a_zp=a.quant.zp, b_zp=b.quant.zp, lo=lo, hi=hi,
                      out_off=-128 if u8 else 0, scale=float(scale), out_zp=float(zp))  # fmt: skip
        table = thresholds(scale, zp, lo, hi, prods)
        return OnnxMul(macs=c.size, fields=tuple(fields.items()), thresholds=table)

    def lower(self, op: Op, g: Graph, d: OnnxMul, ctx: LowerCtx, choice: Choice) -> str:
        f: dict[str, object] = dict(d.fields)
        f["thresholds"] = ctx.array("mul_thresholds", "int32_t", d.thresholds)
        p = ctx.params("tc_onnx_mul_params_t", f)
        a, b = ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1])
        return f"tc_onnx_mul_s8({p}, {a}, {b}, {ctx.ptr(op.outputs[0], const=False)});"
