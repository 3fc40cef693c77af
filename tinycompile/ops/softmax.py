"""SOFTMAX (int8 in, int8 out at scale 1/256, zero point -128), TFLM's fixed-point int8 path
(softmax_common.cc): the exp() of every possible ``x - max`` difference (0..255) is tabulated at
compile time (``tables.softmax_exp_table``); the per-row sum, reciprocal and final scaling run on
the device with the same gemmlowp arithmetic, ``tc_softmax_s8``
(firmware/kernels/tc_activations.c). Runs in place over its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import tables as T
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import io_call, io_int8


@dataclass(frozen=True, kw_only=True)
class Softmax(Prepared):
    rows: int
    depth: int
    exp_table: np.ndarray  # int32[256]


@register
class SoftmaxOp(Operator):
    kinds = ("SOFTMAX",)
    elementwise = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"beta": float(options.get("beta", 1.0))}

    def prepare(self, op: Op, g: Graph) -> Softmax:
        i, o = io_int8(op, g)
        if len(i.shape) < 1 or i.shape != o.shape:
            raise fail(op, f"input shape {list(i.shape)} and output shape {list(o.shape)} differ")
        if o.quant.zp != -128 or o.quant.scale[0] != np.float32(1.0 / 256.0):
            raise fail(op, "int8 output must have scale 1/256 and zero point -128")
        try:
            table = T.softmax_exp_table(i.quant.s, op.attrs.get("beta", 1.0))
        except ValueError as e:
            raise fail(op, str(e)) from None
        depth = i.shape[-1]
        return Softmax(rows=i.size // max(depth, 1), depth=depth, exp_table=table)

    def lower(self, op: Op, g: Graph, d: Softmax, ctx: LowerCtx, choice: Choice) -> str:
        sym = ctx.array("softmax_exp", "int32_t", d.exp_table)
        p = ctx.params("tc_softmax_params_t", {"rows": d.rows, "depth": d.depth, "exp_lut": sym})
        return io_call("tc_softmax_s8", op, ctx, p)
