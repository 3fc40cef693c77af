"""Binary elementwise operators: ADD and MUL (int8, numpy-style broadcasting up to rank 6).

Multipliers, shifts and offsets are computed exactly as TensorFlow Lite Micro's prepare functions
do (``CalculateOpDataAdd`` in add_common.cc, ``CalculateOpDataMul`` in mul_common.cc); the kernels
are ``tc_add_s8`` / ``tc_mul_s8`` in firmware/kernels/tc_elementwise.c.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op
from ..passes.qmath import quantize_multiplier, quantize_multiplier_smaller_than_one
from . import LowerCtx, fail, register
from .common import activation_range, inp, out, require_int8

MAX_RANK = 6
ADD_LEFT_SHIFT = 20  # TFLM: 20 for int8 outputs (15 for int16)


def broadcast_loops(
    a: tuple[int, ...], b: tuple[int, ...], o: tuple[int, ...]
) -> tuple[list[int], list[int], list[int]] | None:
    """Merge a broadcast of ``a`` and ``b`` into ``o`` into few loops.

    Returns ``None`` when no broadcasting is needed (both inputs have as many elements as the
    output, so flat indexing is exact), else ``(dims, stride_a, stride_b)``, outermost first,
    with element strides (0 where that input is broadcast along the loop).
    """
    n = len(o)
    size = int(np.prod(o, dtype=np.int64)) if o else 1
    sa = int(np.prod(a, dtype=np.int64)) if a else 1
    sb = int(np.prod(b, dtype=np.int64)) if b else 1
    if sa == size and sb == size:
        return None
    ea = (1,) * (n - len(a)) + tuple(a)
    eb = (1,) * (n - len(b)) + tuple(b)
    # Keep dims of extent > 1, each tagged with which input is broadcast along it.
    kept = [(o[d], ea[d] == 1, eb[d] == 1) for d in range(n) if o[d] != 1]
    merged: list[list] = []
    for ext, ba, bb in kept:
        if merged and merged[-1][1] == ba and merged[-1][2] == bb:
            merged[-1][0] *= ext
        else:
            merged.append([ext, ba, bb])
    if not merged:
        merged = [[1, False, False]]
    dims = [int(m[0]) for m in merged]
    stride_a = [0] * len(dims)
    stride_b = [0] * len(dims)
    acc_a = acc_b = 1
    for i in range(len(dims) - 1, -1, -1):
        ext, ba, bb = merged[i]
        stride_a[i] = 0 if ba else acc_a
        stride_b[i] = 0 if bb else acc_b
        acc_a *= 1 if ba else ext
        acc_b *= 1 if bb else ext
    return dims, stride_a, stride_b


def _check_binary(op: Op, g: Graph) -> None:
    if len(op.inputs) != 2 or len(op.outputs) != 1 or -1 in op.inputs:
        raise fail(op, f"expects 2 inputs and 1 output, has {len(op.inputs)}/{len(op.outputs)}")
    require_int8(op, g, [op.inputs[0], op.inputs[1], op.outputs[0]])
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if max(len(a.shape), len(b.shape), len(o.shape)) > MAX_RANK:
        raise fail(op, f"rank above {MAX_RANK} is not supported")
    try:
        want = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise fail(op, f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from None
    if tuple(want) != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} is not the broadcast shape {list(want)}")
    activation_range(op, o)


def _add_multipliers(op: Op, g: Graph) -> dict[str, int]:
    """CalculateOpDataAdd for int8 outputs."""
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    twice_max = 2.0 * max(a.quant.s, b.quant.s)
    real1 = a.quant.s / twice_max
    real2 = b.quant.s / twice_max
    real_out = twice_max / ((1 << ADD_LEFT_SHIFT) * o.quant.s)
    fields: dict[str, int] = {}
    for name, real in (("in1", real1), ("in2", real2), ("out", real_out)):
        if not 0.0 < real < 1.0:
            raise fail(op, f"{name} rescale factor {real:g} outside (0, 1): scales unsupported")
        m, s = quantize_multiplier_smaller_than_one(real)
        fields[f"{name}_multiplier"] = m
        fields[f"{name}_shift"] = s
    return fields


def check_add(op: Op, g: Graph) -> None:
    _check_binary(op, g)
    _add_multipliers(op, g)


def check_mul(op: Op, g: Graph) -> None:
    _check_binary(op, g)


def elementwise_macs(op: Op, g: Graph) -> int:
    return out(op, g).size


def _shape_fields(op: Op, g: Graph, ctx: LowerCtx) -> dict[str, object]:
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    loops = broadcast_loops(a.shape, b.shape, o.shape)
    if loops is None:
        return {"size": o.size, "rank": 0, "dims": "0", "stride1": "0", "stride2": "0"}
    dims, s1, s2 = loops
    return {
        "size": o.size,
        "rank": len(dims),
        "dims": ctx.array("dims", "int32_t", np.array(dims)),
        "stride1": ctx.array("stride1", "int32_t", np.array(s1)),
        "stride2": ctx.array("stride2", "int32_t", np.array(s2)),
    }


@register("ADD", check=check_add, macs=elementwise_macs, inplace=True)
def lower_add(op: Op, g: Graph, ctx: LowerCtx) -> str:
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    lo, hi = activation_range(op, o)
    fields = _shape_fields(op, g, ctx)
    mult = _add_multipliers(op, g)
    fields.update(
        in1_offset=-a.quant.zp,
        in2_offset=-b.quant.zp,
        left_shift=ADD_LEFT_SHIFT,
        in1_multiplier=mult["in1_multiplier"],
        in1_shift=mult["in1_shift"],
        in2_multiplier=mult["in2_multiplier"],
        in2_shift=mult["in2_shift"],
        out_multiplier=mult["out_multiplier"],
        out_shift=mult["out_shift"],
        out_offset=o.quant.zp,
        act_min=lo,
        act_max=hi,
    )
    p = ctx.params("tc_add_params_t", fields)
    return (
        f"tc_add_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
        f"{ctx.ptr(op.outputs[0], const=False)});"
    )


@register("MUL", check=check_mul, macs=elementwise_macs, inplace=True)
def lower_mul(op: Op, g: Graph, ctx: LowerCtx) -> str:
    a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    lo, hi = activation_range(op, o)
    m, s = quantize_multiplier(a.quant.s * b.quant.s / o.quant.s)
    fields = _shape_fields(op, g, ctx)
    fields.update(
        in1_offset=-a.quant.zp,
        in2_offset=-b.quant.zp,
        out_multiplier=m,
        out_shift=s,
        out_offset=o.quant.zp,
        act_min=lo,
        act_max=hi,
    )
    p = ctx.params("tc_mul_params_t", fields)
    return (
        f"tc_mul_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
        f"{ctx.ptr(op.outputs[0], const=False)});"
    )
