"""The reduce family: MEAN, SUM, REDUCE_MAX and REDUCE_MIN (int8; MEAN int16 too, in 16x8
models) over any constant set of axes, as TensorFlow Lite Micro computes them.

TFLM's int8 MEAN (``EvalIntegerMean`` in reduce_common.cc) runs ``QuantizedMeanOrSum`` for
every axis set and keep_dims: the multiplier of ``input_scale / output_scale`` is folded with
``1 / count`` (shift by ``floor(log2(count))``, capped, then integer division) and applied to
``sum - input_zero_point * count``. Older TFLM releases took a plain ``sum / count`` shortcut when
input and output quantization were equal; the TFLM this project checks against does not (the
``mean_eqquant`` test model pins that). ``keep_dims`` changes only the output shape, not the
bytes. int8 SUM is the same ``QuantizedMeanOrSum`` without the 1/count (the multiplier of
``input_scale / output_scale`` alone). REDUCE_MAX / REDUCE_MIN compare the raw int8 values
(``ReduceGeneric``); TFLM requires input and output quantization to be equal, and so do we. The
kernels are ``tc_mean_s8`` (MEAN, SUM), ``tc_reduce_max_s8`` and ``tc_reduce_min_s8`` in
firmware/kernels/tc_mean.c, one walk over the axes for all. REDUCE_ALL (bool, TFLM's only type
for it) is ``tc_reduce_min_s8`` on the bool bytes (0 or 1). TFLM's int16 MEAN is the same
template on int16 (zero points 0, saturated to int16): ``tc_mean_s16``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, out, require_int8
from .s16 import is_int16, require_int16

MAX_RANK = 6


def resolve_axes(op: Op, g: Graph) -> list[int]:
    """The reduced axes: from the constant axis tensor, negatives resolved, duplicates dropped."""
    x = inp(op, g, 0)
    rank = len(x.shape)
    ax = inp(op, g, 1)
    if not ax.is_const:
        raise fail(op, "the axis tensor must be constant")
    if ax.dtype != "int32":
        raise fail(op, f"{ax.dtype} axis tensor is not supported (TFLM requires int32)")
    axes: list[int] = []
    for v in np.asarray(ax.data).reshape(-1).tolist():
        a = int(v) + rank if v < 0 else int(v)
        if not 0 <= a < rank:
            raise fail(op, f"axis {v} out of range for rank {rank}")
        if a not in axes:
            axes.append(a)
    return axes


def _merge(dims: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge (extent, stride) loops, outermost first, where the outer one continues the inner."""
    merged: list[tuple[int, int]] = []
    for ext, stride in dims:
        if ext == 1:
            continue
        if merged and merged[-1][1] == ext * stride:
            merged[-1] = (merged[-1][0] * ext, stride)
        else:
            merged.append((ext, stride))
    return merged


def mean_loops(
    shape: tuple[int, ...], axes: list[int]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """Kept loops (output order) and reduced loops as (extent, input stride), and the count."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    kept = _merge([(shape[d], strides[d]) for d in range(len(shape)) if d not in axes])
    red = _merge([(shape[d], strides[d]) for d in range(len(shape)) if d in axes])
    count = int(np.prod([shape[d] for d in axes], dtype=np.int64)) if axes else 1
    return kept, red, count


def mean_multiplier(in_scale: float, out_scale: float, count: int) -> tuple[int, int]:
    """QuantizedMeanOrSum's output rescaling with 1/count folded in."""
    m, s = quantize_multiplier(in_scale / out_scale)
    if count <= 0:
        return m, s
    # QuantizeMultiplier keeps s >= -31, so the shift below is never negative.
    shift = max(0, min(count.bit_length() - 1, 32, 31 + s))
    return int((m << shift) // count), int(s - shift)


@dataclass(frozen=True, kw_only=True)
class Mean(Prepared):
    kept: tuple[tuple[int, int], ...]
    red: tuple[tuple[int, int], ...]
    count: int
    multiplier: int
    shift: int


FUNCS = {
    "MEAN": "tc_mean_s8",
    "SUM": "tc_mean_s8",
    "REDUCE_MAX": "tc_reduce_max_s8",
    "REDUCE_MIN": "tc_reduce_min_s8",
    "REDUCE_ALL": "tc_reduce_min_s8",  # bool bytes are 0 or 1: all() is their minimum
}


@register
class MeanOp(Operator):
    kinds = tuple(FUNCS)
    int16 = True  # MEAN in 16x8 models; the others refuse int16 in prepare

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"keep_dims": bool(options.get("keep_dims", False))}

    def prepare(self, op: Op, g: Graph) -> Mean:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or -1 in op.inputs:
            raise fail(op, "expects an input, an axis tensor and 1 output")
        x, o = inp(op, g, 0), out(op, g)
        if op.kind == "REDUCE_ALL":
            if x.dtype != "bool" or o.dtype != "bool":
                raise fail(op, f"{x.dtype} -> {o.dtype} is not supported (TFLM: bool only)")
        elif op.kind == "MEAN" and is_int16(op, g):
            require_int16(op, g, [op.inputs[0], op.outputs[0]])
        else:
            require_int8(op, g, [op.inputs[0], op.outputs[0]])
        if len(x.shape) > MAX_RANK:
            raise fail(op, f"rank above {MAX_RANK} is not supported")
        axes = resolve_axes(op, g)
        want = [x.shape[d] for d in range(len(x.shape)) if d not in axes]
        if int(np.prod(want, dtype=np.int64)) != o.size:
            raise fail(op, f"output shape {list(o.shape)} does not match reducing {axes}")
        if x.size == 0:
            raise fail(op, "empty input tensor")
        kept, red, count = mean_loops(x.shape, axes)
        if op.kind == "REDUCE_ALL":
            m, s = 0, 0
        elif op.kind in ("REDUCE_MAX", "REDUCE_MIN"):
            if x.quant.s != o.quant.s or x.quant.zp != o.quant.zp:
                raise fail(op, "input and output quantization differ (TFLM requires them equal)")
            m, s = 0, 0
        elif op.kind == "SUM":
            try:
                m, s = quantize_multiplier(x.quant.s / o.quant.s)
            except ValueError as e:
                raise fail(op, str(e)) from None
        else:
            m, s = mean_multiplier(x.quant.s, o.quant.s, count)
        return Mean(
            macs=x.size, kept=tuple(kept), red=tuple(red), count=count, multiplier=m, shift=s
        )

    def lower(self, op: Op, g: Graph, d: Mean, ctx: LowerCtx, choice: Choice) -> str:
        x, o = inp(op, g, 0), out(op, g)

        def arr(name: str, vals: list[int]) -> str:
            return ctx.array(name, "int32_t", np.array(vals)) if vals else "0"

        p = ctx.params(
            "tc_mean_params_t",
            {
                "out_size": o.size,
                "n_kept": len(d.kept),
                "kept_dims": arr("kept_dims", [k[0] for k in d.kept]),
                "kept_strides": arr("kept_strides", [k[1] for k in d.kept]),
                "n_red": len(d.red),
                "red_dims": arr("red_dims", [r[0] for r in d.red]),
                "red_strides": arr("red_strides", [r[1] for r in d.red]),
                "count": d.count,
                "in_zp": x.quant.zp if x.quant is not None else 0,
                "out_zp": o.quant.zp if o.quant is not None else 0,
                "multiplier": d.multiplier,
                "shift": d.shift,
            },
        )
        if op.kind == "REDUCE_ALL":  # bool bytes through the int8 kernel
            src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0], const=False)
            return f"{FUNCS[op.kind]}({p}, (const int8_t *){src}, (int8_t *){dst});"
        return io_call("tc_mean_s16" if x.dtype == "int16" else FUNCS[op.kind], op, ctx, p)
