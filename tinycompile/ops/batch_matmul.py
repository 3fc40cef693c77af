"""BATCH_MATMUL (int8), as TFLM's batch_matmul.cc computes it.

``out[..., i, j] = sum_k (lhs[..., i, k] - lhs_zp) * (rhs[..., k, j] - rhs_zp)`` in int32 (with
``adj_x`` / ``adj_y`` the operands are stored transposed), requantized by one multiplier
(``GetQuantizedConvolutionMultipler``: ``lhs_scale * rhs_scale / output_scale`` in double,
the rule FULLY_CONNECTED follows too), output zero point, clamped to int8 (no fused activation).
Ranks 2 to 5; batch dimensions broadcast (equal, or one of them 1), as TFLM checks them.

The compiler resolves the layout: element strides for the adjoints, per-batch element offsets for
broadcasting, and a constant right-hand side stored un-adjointed is written to flash transposed
(TFLM transposes it once at run time into a persistent buffer), so its depth is contiguous.
Kernel: ``tc_batch_matmul_s8`` (firmware/kernels/tc_batch_matmul.c).

16x8 (TFLM's EvalInt16): both operands and the output int16 with zero point 0 (TFLM checks all
three), int64 sums, the multiplier reduced for TFLM's 64-bit requantization (``s16``), clamped to
int16: ``tc_batch_matmul_s16``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from . import s16
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, out, positive_scales, require_int8


@dataclass(frozen=True, kw_only=True)
class BatchMatMul(Prepared):
    fields: tuple[tuple[str, int], ...]  # dims, strides, offsets, multiplier
    l_off: np.ndarray  # [batches] element offset of each output batch's lhs matrix
    r_off: np.ndarray
    rhs_t: np.ndarray | None  # constant rhs stored transposed ([..., cols, depth]), or None


def _batch_offsets(batch: tuple[int, ...], out_batch: tuple[int, ...], size: int) -> np.ndarray:
    """Element offset of each output batch's matrix in an operand of batch shape ``batch``
    (left-padded with 1s, broadcast to ``out_batch``), ``size`` elements per matrix."""
    ext = (1,) * (len(out_batch) - len(batch)) + batch
    idx = np.arange(int(np.prod(ext, dtype=np.int64)), dtype=np.int64).reshape(ext)
    return (np.broadcast_to(idx, out_batch).reshape(-1) * size).astype(np.int64)


@register
class BatchMatMulOp(Operator):
    kinds = ("BATCH_MATMUL",)
    int16 = True  # 16x8: int16 x int16

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "adj_x": bool(options.get("adj_x", False)),
            "adj_y": bool(options.get("adj_y", False)),
        }

    def prepare(self, op: Op, g: Graph) -> BatchMatMul:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects 2 inputs and 1 output")
        int16 = s16.is_int16(op, g)
        if int16:  # TFLM: both operands int16 (not int8 weights), zero points 0
            s16.require_int16(op, g, [*op.inputs, op.outputs[0]])
        else:
            require_int8(op, g, [*op.inputs, op.outputs[0]])
        a, b, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        positive_scales(op, a, b, o)
        if not (2 <= len(a.shape) <= 5 and 2 <= len(b.shape) <= 5):
            raise fail(op, f"operand ranks {len(a.shape)}, {len(b.shape)}: 2 to 5 supported")
        adj_x, adj_y = bool(op.attrs.get("adj_x")), bool(op.attrs.get("adj_y"))
        rows, depth = (a.shape[-1], a.shape[-2]) if adj_x else (a.shape[-2], a.shape[-1])
        kb, cols = (b.shape[-1], b.shape[-2]) if adj_y else (b.shape[-2], b.shape[-1])
        if kb != depth:
            raise fail(op, f"depths {depth} and {kb} differ (shapes {a.shape}, {b.shape})")
        rank = max(len(a.shape), len(b.shape))
        ab = (1,) * (rank - len(a.shape)) + tuple(a.shape[:-2])
        bb = (1,) * (rank - len(b.shape)) + tuple(b.shape[:-2])
        if any(x != y and 1 not in (x, y) for x, y in zip(ab, bb, strict=True)):
            raise fail(op, f"batch dimensions of {a.shape} and {b.shape} do not broadcast")
        ob = tuple(max(x, y) for x, y in zip(ab, bb, strict=True))
        if tuple(o.shape) != (*ob, rows, cols):
            raise fail(op, f"output shape {list(o.shape)} is not {[*ob, rows, cols]}")
        if min(rows, cols, depth) < 1 or o.size == 0:
            raise fail(op, "empty matrices")
        m, s = quantize_multiplier(float(a.quant.scale[0]) * float(b.quant.scale[0]) / o.quant.s)
        if int16:
            m, s = s16.reduce_multiplier(op, m, s)
        rhs_t = None
        r_sk, r_sj = (1, depth) if adj_y else (cols, 1)
        if b.is_const and not adj_y:  # store it transposed: depth contiguous
            bm = np.asarray(b.data, b.dtype).reshape(-1, depth, cols)
            rhs_t = np.ascontiguousarray(bm.transpose(0, 2, 1)).reshape(-1)
            r_sk, r_sj = 1, depth
        fields = dict(
            batches=int(np.prod(ob, dtype=np.int64)), rows=rows, cols=cols, depth=depth,
            l_si=1 if adj_x else depth, l_sk=rows if adj_x else 1, r_sk=r_sk, r_sj=r_sj,
            lhs_offset=-a.quant.zp, rhs_offset=-b.quant.zp, out_offset=o.quant.zp,
            mult=m, shift=s,
        )  # fmt: skip
        return BatchMatMul(
            macs=o.size * depth,
            fields=tuple(fields.items()),
            l_off=_batch_offsets(ab, ob, rows * depth),
            r_off=_batch_offsets(bb, ob, cols * depth),
            rhs_t=rhs_t,
        )

    def lower(self, op: Op, g: Graph, d: BatchMatMul, ctx: LowerCtx, choice: Choice) -> str:
        fields: dict[str, object] = dict(d.fields)
        fields.update(
            l_off=ctx.array("l_off", "int32_t", d.l_off),
            r_off=ctx.array("r_off", "int32_t", d.r_off),
        )
        p = ctx.params("tc_batch_matmul_params_t", fields)
        lhs = ctx.ptr(op.inputs[0])
        ctype = "int16_t" if d.rhs_t is not None and d.rhs_t.dtype == np.int16 else "int8_t"
        rhs = ctx.ptr(op.inputs[1]) if d.rhs_t is None else ctx.array("rhs_t", ctype, d.rhs_t)
        fn = "tc_batch_matmul_s16" if g.t(op.outputs[0]).dtype == "int16" else "tc_batch_matmul_s8"
        return f"{fn}({p}, {lhs}, {rhs}, {ctx.ptr(op.outputs[0], const=False)});"
