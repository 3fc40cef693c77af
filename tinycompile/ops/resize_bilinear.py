"""RESIZE_BILINEAR (int8), as TFLM's resize_bilinear.cc computes it: the reference
``ResizeBilinearInteger``, whose source coordinates are 10-bit fixed point.

Per axis (computed here, once, with C's truncating division): the scale
``((1 << 10) * in + out / 2) / out`` (align_corners and out > 1: ``(in - 1)`` over ``(out - 1)``),
the source coordinate ``v * scale`` (half_pixel_centers: ``+ scale / 2 - 512``), its lower index
``max(coord / 1024, 0)``, upper index ``min((coord + 1023) / 1024, in - 1)`` and weight
``coord - 1024 * lower`` (negative at a half-pixel border, as in TFLM). The kernel
(``tc_resize_bilinear_s8``, firmware/kernels/tc_resize_bilinear.c) only reads these tables.

As TFLM: the size input must be a constant int32 [2]; align_corners with half_pixel_centers is
refused; no requantization (the output gets the input's integers whatever its quantization).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import inp, io_call, out, require_int8


def _cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def axis_table(n_in: int, n_out: int, align: bool, half: bool) -> np.ndarray:
    """[n_out, 3] int32: lower index, upper index, weight (1/1024ths) of each output index."""
    scale = _cdiv((1 << 10) * n_in + n_out // 2, n_out)
    if align and n_out > 1:
        scale = _cdiv((1 << 10) * (n_in - 1) + (n_out - 1) // 2, n_out - 1)
    rows = []
    for v in range(n_out):
        coord = v * scale + (_cdiv(scale, 2) - (1 << 9) if half else 0)
        lo = max(_cdiv(coord, 1 << 10), 0)
        hi = min(_cdiv(coord + (1 << 10) - 1, 1 << 10), n_in - 1)
        rows.append((lo, hi, coord - (1 << 10) * lo))
    return np.array(rows, np.int64).reshape(n_out, 3)


@dataclass(frozen=True, kw_only=True)
class ResizeBilinear(Prepared):
    dims: tuple[tuple[str, int], ...]
    ys: np.ndarray
    xs: np.ndarray


@register
class ResizeBilinearOp(Operator):
    kinds = ("RESIZE_BILINEAR",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "align_corners": bool(options.get("align_corners", False)),
            "half_pixel_centers": bool(options.get("half_pixel_centers", False)),
        }

    def prepare(self, op: Op, g: Graph) -> ResizeBilinear:
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            raise fail(op, "expects an input, a size and one output")
        require_int8(op, g, [op.inputs[0], op.outputs[0]])
        x, size, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if len(x.shape) != 4 or len(o.shape) != 4:
            raise fail(op, f"expects rank-4 NHWC input and output, got {list(x.shape)}")
        if size.dtype != "int32" or len(size.shape) != 1 or size.size != 2:
            raise fail(op, "size must be an int32 tensor of 2 values")
        if not size.is_const:
            raise fail(op, "a non-constant size tensor is not supported (as in TFLM)")
        align, half = bool(op.attrs.get("align_corners")), bool(op.attrs.get("half_pixel_centers"))
        if align and half:
            raise fail(op, "align_corners and half_pixel_centers cannot both be set (as in TFLM)")
        oh, ow = (int(v) for v in np.asarray(size.data).reshape(-1))
        n, h, w, c = x.shape
        if tuple(o.shape) != (n, oh, ow, c):
            raise fail(op, f"output shape {list(o.shape)} is not {[n, oh, ow, c]}")
        if min(oh, ow, h, w, c) < 1:
            raise fail(op, "empty input or output")
        if max(h, w, oh, ow) > 1 << 20:
            raise fail(op, "sizes beyond 2^20 overflow TFLM's 10-bit fixed-point coordinates")
        dims = dict(batches=n, in_h=h, in_w=w, depth=c, out_h=oh, out_w=ow)
        return ResizeBilinear(
            macs=o.size * 4,
            dims=tuple(dims.items()),
            ys=axis_table(h, oh, align, half),
            xs=axis_table(w, ow, align, half),
        )

    def lower(self, op: Op, g: Graph, d: ResizeBilinear, ctx: LowerCtx, choice: Choice) -> str:
        fields: dict[str, object] = dict(d.dims)
        fields.update(
            ys=ctx.array("ys", "int32_t", d.ys.reshape(-1)),
            xs=ctx.array("xs", "int32_t", d.xs.reshape(-1)),
        )
        return io_call(
            "tc_resize_bilinear_s8", op, ctx, ctx.params("tc_resize_bilinear_params_t", fields)
        )
