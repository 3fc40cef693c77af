"""L2_NORMALIZATION (int8), as TFLM's l2norm.cc computes it (reference/integer_ops/
l2normalization.h): along the last axis, each offset input times the integer reciprocal
square root of the row's sum of squares (GetInvSqrtQuantizedMultiplierExp, evaluated on the
device), into the output scale 1/128. The output quantization must be scale 1/128, zero point
0 (TFLite's kernel checks it; TFLM's writes those values whatever the tensor says), rank at most
4 and no fused activation (TFLM's checks). Kernel: ``tc_l2norm_s8``
(firmware/kernels/tc_l2norm.c). Runs in place over its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import fused_activation, io_call, io_int8


@dataclass(frozen=True, kw_only=True)
class L2Norm(Prepared):
    rows: int
    depth: int
    in_zero_point: int


@register
class L2NormOp(Operator):
    kinds = ("L2_NORMALIZATION",)
    elementwise = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> L2Norm:
        i, o = io_int8(op, g)
        if op.attrs.get("activation", "NONE") != "NONE":
            raise fail(op, f"fused activation {op.attrs['activation']} is not supported (TFLM)")
        if not 1 <= len(i.shape) <= 4 or tuple(i.shape) != tuple(o.shape):
            raise fail(op, f"input shape {list(i.shape)}: rank 1 to 4, output of the same shape")
        if o.quant.zp != 0 or o.quant.scale[0] != np.float32(1.0 / 128.0):
            raise fail(op, "int8 output must have scale 1/128 and zero point 0")
        depth = i.shape[-1]
        return L2Norm(
            macs=2 * i.size, rows=i.size // max(depth, 1), depth=depth, in_zero_point=i.quant.zp
        )

    def lower(self, op: Op, g: Graph, d: L2Norm, ctx: LowerCtx, choice: Choice) -> str:
        fields = {"rows": d.rows, "depth": d.depth, "in_zero_point": d.in_zero_point}
        return io_call("tc_l2norm_s8", op, ctx, ctx.params("tc_l2norm_params_t", fields))
