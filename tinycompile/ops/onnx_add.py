"""ONNX_ADD: onnxruntime's QLinearAdd (and a fused QDQ Add) on int8, as MLAS's x86-64 AVX2
kernel (qladd_avx2.cpp, built with FMA) computes it in float32: ``ratio_a = a_scale / c_scale``,
``ratio_b = b_scale / c_scale``, ``fixed = zp_c - fma(ratio_a, zp_a, ratio_b * zp_b)`` (the
compiler fuses that multiply-add), then per element ``fma(a, ratio_a, fma(b, ratio_b, fixed))``
rounded half to even and saturated; a B that is one value (over the whole tensor or over a span,
as onnxruntime's broadcasting calls it) takes the same formula. Checked against onnxruntime on
all 65536 input pairs (tests/onnxgen/handmade.py ``binary``). A uint8 model (attribute
``uint8``, stored as int8 - 128) gets its own values back (+128) and its own saturation. B may
repeat along the trailing elements (a suffix broadcast). Kernel: ``tc_onnx_add_s8``
(firmware/kernels/tc_onnx.c)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, require_int8
from .onnx_requant import F32
from .onnx_sigmoid import fma32


def add_params(sa: float, za: int, sb: float, zb: int, sc: float, zc: int) -> dict[str, float]:
    """The kernel's three float32 constants, computed as MLAS does."""
    ra = F32(sa) / F32(sc)
    rb = F32(sb) / F32(sc)
    fixed = F32(zc) - fma32(ra, F32(za), F32(rb * F32(zb)))
    return {"ratio_a": float(ra), "ratio_b": float(rb), "fixed": float(fixed)}


@dataclass(frozen=True, kw_only=True)
class OnnxAdd(Prepared):
    fields: tuple[tuple[str, object], ...]


@register
class OnnxAddOp(Operator):
    kinds = ("ONNX_ADD",)

    def prepare(self, op: Op, g: Graph) -> OnnxAdd:
        if len(op.inputs) != 2 or len(op.outputs) != 1:
            raise fail(op, "expects 2 inputs and 1 output")
        require_int8(op, g, [*op.inputs, op.outputs[0]])
        a, b, c = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if a.size != c.size:
            raise fail(op, f"input A has {a.size} elements, the output {c.size}")
        bshape = tuple(b.shape)
        while bshape and bshape[0] == 1:
            bshape = bshape[1:]
        if b.size != 1 and (len(bshape) > len(c.shape) or tuple(c.shape[-len(bshape) :]) != bshape):
            raise fail(op, f"broadcast of B {list(b.shape)} to {list(c.shape)} is not supported")
        off = 128 if op.attrs.get("uint8") else 0  # uint8 models are stored as int8 - 128
        za, zb, zc = a.quant.zp + off, b.quant.zp + off, c.quant.zp + off
        f = add_params(a.quant.s, za, b.quant.s, zb, c.quant.s, zc)
        rng = {"in_off": off, "lo": -128 + off, "hi": 127 + off, "out_off": -off}
        fields = (("size", c.size), ("b_size", b.size), *f.items(), *rng.items())
        return OnnxAdd(macs=c.size, fields=fields)

    def lower(self, op: Op, g: Graph, d: OnnxAdd, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_onnx_add_params_t", dict(d.fields))
        a, b = ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1])
        return f"tc_onnx_add_s8({p}, {a}, {b}, {ctx.ptr(op.outputs[0], const=False)});"
