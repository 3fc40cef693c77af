"""PAD and PADV2 (int8 and int16), as TFLM's pad.cc: the pad value is the output zero point for
int8 PAD, 0 for int16 PAD (16x8: zero point 0), and the constant value tensor for PADV2 (int8:
quantized as the output, which TFLM checks); no requantization. Kernel: ``tc_pad_s8``
(firmware/kernels/tc_shape.c), a byte kernel for elements of 1 or 2 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op, Tensor
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, require_int8
from .s16 import require_int16

MAX_RANK = 6


def paddings(op: Op, g: Graph) -> list[tuple[int, int]]:
    """(before, after) per input dim, from the constant int32/int64 paddings tensor."""
    x = inp(op, g, 0)
    pt = inp(op, g, 1)
    if not pt.is_const:
        raise fail(op, "the paddings tensor must be constant")
    if pt.dtype not in ("int32", "int64"):
        raise fail(op, f"{pt.dtype} paddings tensor is not supported")
    vals = np.asarray(pt.data).reshape(-1)
    rank = len(x.shape)
    if vals.size != 2 * rank:
        raise fail(op, f"{vals.size} padding values for a rank-{rank} input")
    pads = [(int(vals[2 * d]), int(vals[2 * d + 1])) for d in range(rank)]
    if any(b < 0 or a < 0 for b, a in pads):
        raise fail(op, "negative paddings are not supported")
    return pads


def _pad_value_tensor(op: Op, g: Graph) -> Tensor | None:
    if len(op.inputs) >= 3 and op.inputs[2] >= 0:
        return inp(op, g, 2)
    return None


def _check(op: Op, g: Graph) -> list[tuple[int, int]]:
    if len(op.inputs) not in (2, 3) or len(op.outputs) != 1 or min(op.inputs[:2]) < 0:
        raise fail(op, "expects an input, a paddings tensor (and a value) and 1 output")
    x, o = inp(op, g, 0), out(op, g)
    int16 = o.dtype == "int16"
    if int16:
        require_int16(op, g, [op.inputs[0], op.outputs[0]])
    else:
        require_int8(op, g, [op.inputs[0], op.outputs[0]])
    if len(x.shape) > MAX_RANK:
        raise fail(op, f"rank above {MAX_RANK} is not supported")
    pads = paddings(op, g)
    want = tuple(d + b + a for d, (b, a) in zip(x.shape, pads, strict=True))
    if want != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} does not match padded {list(want)}")
    if not int16 and not -128 <= o.quant.zp <= 127:
        raise fail(op, f"output zero point {o.quant.zp} outside int8")
    v = _pad_value_tensor(op, g)
    if v is not None:
        if v.dtype != o.dtype:
            raise fail(op, f"{v.dtype} pad value for a {o.dtype} output (TFLM needs one type)")
        if v.size != 1:
            raise fail(op, f"pad value tensor has {v.size} elements, expected 1")
        if int16:  # TFLM's int16 PADV2 reads the value as is, checking no quantization
            return pads
        require_int8(op, g, [v.id], "pad value")
        if v.quant.zp != o.quant.zp or np.float32(v.quant.s) != np.float32(o.quant.s):
            raise fail(op, "pad value quantization differs from the output's (TFLM refuses it)")
    return pads


def pad_loops(shape: tuple[int, ...], pads: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(input extent, before, after) loops, outermost first, with unpadded inner dims merged."""
    dims = [(n, b, a) for n, (b, a) in zip(shape, pads, strict=True) if (n, b, a) != (1, 0, 0)]
    merged: list[tuple[int, int, int]] = []  # innermost first while building
    for n, b, a in reversed(dims):
        if merged and merged[-1][1] == 0 and merged[-1][2] == 0:
            inner = merged.pop()[0]
            merged.append((n * inner, b * inner, a * inner))
        else:
            merged.append((n, b, a))
    return list(reversed(merged)) or [(1, 0, 0)]


@dataclass(frozen=True, kw_only=True)
class Pad(Prepared):
    loops: tuple[tuple[int, int, int], ...]


@register
class PadOp(Operator):
    kinds = ("PAD", "PADV2")
    int16 = True  # 16x8: pad value 0 or PADV2's value

    def prepare(self, op: Op, g: Graph) -> Pad:
        pads = _check(op, g)
        return Pad(loops=tuple(pad_loops(inp(op, g, 0).shape, pads)))

    def lower(self, op: Op, g: Graph, d: Pad, ctx: LowerCtx, choice: Choice) -> str:
        return _lower(op, g, d, ctx)


def _lower(op: Op, g: Graph, d: Pad, ctx: LowerCtx) -> str:
    o = out(op, g)
    loops = d.loops
    v = _pad_value_tensor(op, g)
    int16 = o.dtype == "int16"
    if v is None:
        value, value_ptr = (0 if int16 else o.quant.zp), "0"
    elif v.is_const:
        value, value_ptr = int(np.asarray(v.data).reshape(-1)[0]), "0"
    else:
        value, value_ptr = 0, ctx.ptr(v.id)
        value_ptr = f"(const int8_t *){value_ptr}" if int16 else value_ptr
    p = ctx.params(
        "tc_pad_params_t",
        {
            "rank": len(loops),
            "in_dims": ctx.array("in_dims", "int32_t", np.array([lp[0] for lp in loops])),
            "pad_before": ctx.array("pad_before", "int32_t", np.array([lp[1] for lp in loops])),
            "pad_after": ctx.array("pad_after", "int32_t", np.array([lp[2] for lp in loops])),
            "value": value,
            "elem_size": 2 if int16 else 1,
        },
    )
    src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
    if int16:
        src, dst = f"(const int8_t *){src}", f"(int8_t *){dst}"
    return f"tc_pad_s8({p}, {src}, {value_ptr}, {dst});"
