"""AVERAGE_POOL_2D and MAX_POOL_2D (int8), as TensorFlow Lite Micro computes them.

TFLM (pooling_common.cc, reference_integer_ops::AveragePool / MaxPool): padding from
``ComputePaddingHeightWidth`` with dilation 1; the window is clipped to the image, so padded
positions are never counted; the average is ``(sum +- count / 2) / count`` with C's truncating
division; max starts from -128; both clamp to the fused activation's range. Input and output
must share their quantization (TFLM refuses otherwise), so no requantization happens.
The window geometry and its checks are the convolutions' (``conv_common.window``). In a streamed
segment (``ops.rows``, int8, batch 1) an output row is the kernel run on the band of input rows
its windows read, with the padding rows above the band as ``pad_h``: the windows are clipped to
the same taps as in the whole layer, so the results are the same.
Kernels: ``tc_avgpool_s8`` / ``tc_maxpool_s8`` in firmware/kernels/tc_pool.c; 16x8 (int16,
zero point 0): ``tc_avgpool_s16`` / ``tc_maxpool_s16``, the same arithmetic (max from -32768).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..ir import Graph, Op
from .base import Bands, Choice, LowerCtx, Operator, Prepared, fail, register
from .common import activation_range, inp, io_call, out, require_int8, window_options
from .conv_common import window
from .rows import Reach
from .s16 import is_int16, require_int16

KERNELS = {"AVERAGE_POOL_2D": "tc_avgpool_s8", "MAX_POOL_2D": "tc_maxpool_s8"}


@dataclass(frozen=True, kw_only=True)
class Pool(Prepared):
    fields: tuple[tuple[str, int], ...]  # the params struct, in order


@register
class PoolOp(Operator):
    kinds = ("AVERAGE_POOL_2D", "MAX_POOL_2D")
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        a = window_options(options, "Pool2DOptions")
        a["filter"] = (options.get("filter_height", 1), options.get("filter_width", 1))
        return a

    def prepare(self, op: Op, g: Graph) -> Pool:
        if len(op.inputs) != 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
            raise fail(op, f"expects 1 input and 1 output, has {len(op.inputs)}/{len(op.outputs)}")
        if is_int16(op, g):
            require_int16(op, g, [op.inputs[0], op.outputs[0]])
        else:
            require_int8(op, g, [op.inputs[0], op.outputs[0]])
        x, o = inp(op, g, 0), out(op, g)
        if (
            abs(float(x.quant.scale[0]) - float(o.quant.scale[0])) > 1e-6
            or x.quant.zp != o.quant.zp
        ):
            raise fail(op, "input and output quantization differ (TFLM requires them equal)")
        fh, fw = op.attrs.get("filter", (1, 1))
        geo = window(op, g, fh, fw)
        if geo.out_c != geo.in_c:
            raise fail(op, f"pooling maps {geo.in_c} channels to {geo.out_c}")
        # TFLM's average pool fails at run time on a window with no tap inside the image.
        for o_i, stride, pad, size, f in (
            (geo.out_h, geo.stride_h, geo.pad_h, geo.in_h, fh),
            (geo.out_w, geo.stride_w, geo.pad_w, geo.in_w, fw),
        ):
            for k in range(o_i):
                start = k * stride - pad
                if min(size, start + f) <= max(0, start):
                    raise fail(op, "a pooling window lies entirely in the padding")
        lo, hi = activation_range(op, o)
        keep = ("batches", "in_h", "in_w", "out_h", "out_w", "stride_h", "stride_w", "pad_h")
        gf = geo.fields()
        fields = [(k, gf[k]) for k in (*keep, "pad_w")]
        fields += [("channels", geo.in_c), ("f_h", fh), ("f_w", fw)]
        fields += [("act_min", lo), ("act_max", hi)]
        # window taps visited (adds or compares): pooling has no multiplies; this is its work
        return Pool(macs=o.size * fh * fw, fields=tuple(fields))

    def lower(self, op: Op, g: Graph, d: Pool, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_pool_params_t", dict(d.fields))
        fn = KERNELS[op.kind]
        return io_call(fn.replace("_s8", "_s16q") if is_int16(op, g) else fn, op, ctx, p)

    def row_reach(self, op: Op, g: Graph, d: Pool) -> tuple[Reach, ...] | None:
        f = dict(d.fields)
        if f["batches"] != 1 or is_int16(op, g):
            return None
        return (Reach(f["f_h"], f["stride_h"], 1, f["pad_h"]),)

    def lower_row(
        self, op: Op, g: Graph, d: Pool, ctx: LowerCtx, choice: Choice, bands: Bands
    ) -> str:
        rows, pad = bands[0]
        f = dict(d.fields) | {"in_h": rows, "out_h": 1, "pad_h": pad}
        return self.lower(op, g, replace(d, fields=tuple(f.items())), ctx, choice)
