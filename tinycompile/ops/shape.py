"""Shape and data-movement operators.

- RESHAPE, SQUEEZE, EXPAND_DIMS: aliases; the planner gives the output the input's bytes, so the
  lowering is only a comment.
- PAD, PADV2 (int8): ``tc_pad_s8``. The pad byte is the output zero point for PAD and the
  constant value tensor for PADV2, as TFLM's pad.cc; no requantization.
- CONCATENATION (int8): ``tc_concat_s8``, a byte copy. TFLM's concatenation.cc refuses int8
  inputs whose scale or zero point differs from the output's (it never requantizes), so such
  models are refused here too: copying or requantizing would both be a guess.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, Tensor
from . import LowerCtx, fail, register
from .common import inp, out, require_int8

MAX_RANK = 6


# ------------------------------------------------------------------------------ aliases


def check_alias(op: Op, g: Graph) -> None:
    if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
        raise fail(op, "expects a data input and 1 output")
    x, o = inp(op, g, 0), out(op, g)
    if x.dtype != o.dtype:
        raise fail(op, f"input type {x.dtype} differs from output type {o.dtype}")
    if x.size != o.size:
        raise fail(op, f"input has {x.size} elements, output {o.size}")


@register("RESHAPE", "SQUEEZE", "EXPAND_DIMS", check=check_alias, alias=True)
def lower_alias(op: Op, g: Graph, ctx: LowerCtx) -> str:
    shape = "x".join(str(d) for d in out(op, g).shape) or "scalar"
    return f"/* {op.kind.lower()}: output aliases input ({shape}) */"


# ---------------------------------------------------------------------------------- PAD


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


def check_pad(op: Op, g: Graph) -> None:
    if len(op.inputs) not in (2, 3) or len(op.outputs) != 1 or min(op.inputs[:2]) < 0:
        raise fail(op, "expects an input, a paddings tensor (and a value) and 1 output")
    require_int8(op, g, [op.inputs[0], op.outputs[0]])
    x, o = inp(op, g, 0), out(op, g)
    if len(x.shape) > MAX_RANK:
        raise fail(op, f"rank above {MAX_RANK} is not supported")
    pads = paddings(op, g)
    want = tuple(d + b + a for d, (b, a) in zip(x.shape, pads, strict=True))
    if want != tuple(o.shape):
        raise fail(op, f"output shape {list(o.shape)} does not match padded {list(want)}")
    if not -128 <= o.quant.zp <= 127:
        raise fail(op, f"output zero point {o.quant.zp} outside int8")
    v = _pad_value_tensor(op, g)
    if v is not None:
        require_int8(op, g, [v.id], "pad value")
        if v.size != 1:
            raise fail(op, f"pad value tensor has {v.size} elements, expected 1")
        if v.quant.zp != o.quant.zp or np.float32(v.quant.s) != np.float32(o.quant.s):
            raise fail(op, "pad value quantization differs from the output's (TFLM refuses it)")


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


@register("PAD", "PADV2", check=check_pad)
def lower_pad(op: Op, g: Graph, ctx: LowerCtx) -> str:
    x, o = inp(op, g, 0), out(op, g)
    loops = pad_loops(x.shape, paddings(op, g))
    v = _pad_value_tensor(op, g)
    if v is None:
        value, value_ptr = o.quant.zp, "0"
    elif v.is_const:
        value, value_ptr = int(np.asarray(v.data).reshape(-1)[0]), "0"
    else:
        value, value_ptr = 0, ctx.ptr(v.id)
    p = ctx.params(
        "tc_pad_params_t",
        {
            "rank": len(loops),
            "in_dims": ctx.array("in_dims", "int32_t", np.array([lp[0] for lp in loops])),
            "pad_before": ctx.array("pad_before", "int32_t", np.array([lp[1] for lp in loops])),
            "pad_after": ctx.array("pad_after", "int32_t", np.array([lp[2] for lp in loops])),
            "value": value,
        },
    )
    return (
        f"tc_pad_s8({p}, {ctx.ptr(op.inputs[0])}, {value_ptr}, "
        f"{ctx.ptr(op.outputs[0], const=False)});"
    )


# ------------------------------------------------------------------------ CONCATENATION


def concat_axis(op: Op, g: Graph) -> int:
    rank = len(out(op, g).shape)
    axis = int(op.attrs.get("axis", 0))
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise fail(op, f"axis {axis} out of range for rank {rank}")
    return a


def check_concat(op: Op, g: Graph) -> None:
    if not op.inputs or -1 in op.inputs or len(op.outputs) != 1:
        raise fail(op, "expects at least 1 input and 1 output")
    require_int8(op, g, [*op.inputs, op.outputs[0]])
    if op.attrs.get("activation", "NONE") != "NONE":
        raise fail(op, f"fused activation {op.attrs['activation']} (TFLM supports none)")
    o = out(op, g)
    axis = concat_axis(op, g)
    total = 0
    for tid in op.inputs:
        s = g.t(tid).shape
        if len(s) != len(o.shape) or any(s[d] != o.shape[d] for d in range(len(s)) if d != axis):
            raise fail(op, f"input shape {list(s)} does not fit output {list(o.shape)}")
        total += s[axis]
        q = g.t(tid).quant
        if q.zp != o.quant.zp or np.float32(q.s) != np.float32(o.quant.s):
            raise fail(
                op,
                f"input tensor {tid} is quantized differently from the output; TFLM refuses "
                "int8 concatenation that would need requantization",
            )
    if total != o.shape[axis]:
        raise fail(op, f"inputs sum to {total} along axis {axis}, output has {o.shape[axis]}")


@register("CONCATENATION", check=check_concat)
def lower_concat(op: Op, g: Graph, ctx: LowerCtx) -> str:
    o = out(op, g)
    axis = concat_axis(op, g)
    outer = int(np.prod(o.shape[:axis], dtype=np.int64))
    chunks = [int(np.prod(g.t(t).shape[axis:], dtype=np.int64)) for t in op.inputs]
    p = ctx.params(
        "tc_concat_params_t",
        {
            "n_inputs": len(op.inputs),
            "outer": outer,
            "chunk": ctx.array("chunk", "int32_t", np.array(chunks)),
        },
    )
    ins = ", ".join(ctx.ptr(t) for t in op.inputs)
    return (
        f"tc_concat_s8({p}, (const int8_t *const[]){{{ins}}}, "
        f"{ctx.ptr(op.outputs[0], const=False)});"
    )
