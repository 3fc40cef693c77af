"""ONNX_MUL: onnxruntime's QLinearMul (and a fused QDQ Mul) on int8, as MLAS computes it:
``round_half_even(float((a - a_zp) * (b - b_zp)) * scale) + c_zp`` saturated, with
``scale = (a_scale * b_scale) / c_scale`` in float32 (the product of two int8 differences is
exact in float32, so this is ``tc_onnx_requant`` of the integer product). B may repeat along
the trailing elements. Kernel: ``tc_onnx_mul_s8`` (firmware/kernels/tc_onnx.c)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, require_int8
from .onnx_requant import F32


@dataclass(frozen=True, kw_only=True)
class OnnxMul(Prepared):
    fields: tuple[tuple[str, object], ...]


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
        fields = dict(size=c.size, b_size=b.size, a_zp=a.quant.zp, b_zp=b.quant.zp,
                      out_zp=c.quant.zp, scale=float(scale))  # fmt: skip
        return OnnxMul(macs=c.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: OnnxMul, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_onnx_mul_params_t", dict(d.fields))
        a, b = ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1])
        return f"tc_onnx_mul_s8({p}, {a}, {b}, {ctx.ptr(op.outputs[0], const=False)});"
