"""TRANSPOSE_CONV (int8 activations, int8 weights per channel or per tensor, optional int32
bias; or 16x8: int16 activations with zero point 0, int64 bias), as TFLM's transpose_conv.cc
computes it.

Inputs: 0 the output shape (never read, as TFLM never reads it: the output tensor's static shape
is used; it may be a constant or, as in TFLM's int16 integration tests, an int32 graph input,
whose values the generated code does not read), 1 the
weights [out_c, k_h, k_w, in_c], 2 the input, 3 the optional bias. Multipliers: per channel,
``PopulateConvolutionQuantizationParams`` (``conv_common.channel_multipliers``). Padding:
``ComputePaddingHeightWidth`` run on the *output* size (TFLM's call), i.e. the padding of the
forward convolution the op transposes. The fused activation clamps the output (TFLM passes the
op's activation to ``PopulateConvolutionQuantizationParams``).

TFLM accumulates in an int32 scratch buffer the size of the output; the kernel
(``tc_transpose_conv_s8``, firmware/kernels/tc_transpose_conv.c) gathers the same products per
output element instead, so it needs no scratch at all. 16x8 (``tc_transpose_conv_s16``): the
same gathering into an int64 sum (TFLM's int64 scratch), int64 bias, TFLM's 64-bit
requantization (``s16``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from . import s16
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import activation_range, inp, out, require_int8, window_options
from .conv_common import MAX_WINDOW, bias, channel_multipliers, out_size, pad_before, weights


@dataclass(frozen=True, kw_only=True)
class TransposeConv(Prepared):
    geo: tuple[tuple[str, int], ...]  # params fields: dims, strides, padding, offsets, clamp
    mult: np.ndarray
    shift: np.ndarray
    has_bias: bool
    rq: s16.Requant64 | None = None  # 16x8: int64 bias, Q15 multipliers


@register
class TransposeConvOp(Operator):
    kinds = ("TRANSPOSE_CONV",)
    int16 = True  # 16x8 (int16 input and output)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return window_options(options, "TransposeConvOptions")

    def prepare(self, op: Op, g: Graph) -> TransposeConv:
        if len(op.outputs) != 1:
            raise fail(op, f"expects 1 output, has {len(op.outputs)}")
        if len(op.inputs) not in (3, 4):
            raise fail(op, f"expects 3 or 4 inputs, has {len(op.inputs)}")
        if op.inputs[1] < 0 or op.inputs[2] < 0:
            raise fail(op, "weights and input are required")
        int16 = s16.is_int16(op, g, 2)
        if int16:
            s16.require_int16(op, g, [op.inputs[2], op.outputs[0]])
        else:
            require_int8(op, g, [op.inputs[2], op.outputs[0]])
        x, w, o = inp(op, g, 2), inp(op, g, 1), out(op, g)
        if len(x.shape) != 4 or len(o.shape) != 4 or len(w.shape) != 4:
            raise fail(op, "expects rank-4 NHWC input and output and rank-4 weights")
        oc, kh, kw, kc = w.shape
        n, h, wd, c = x.shape
        if kc != c or o.shape[3] != oc or o.shape[0] != n:
            raise fail(
                op, f"input {list(x.shape)}, weights {list(w.shape)} and output "
                f"{list(o.shape)} do not match",
            )  # fmt: skip
        if min(kh, kw, h, wd, c, oc) < 1 or min(o.shape) < 1:
            raise fail(op, "empty input, output or window")
        weights(op, g, oc)
        padding = op.attrs.get("padding")
        if padding not in ("SAME", "VALID"):
            raise fail(op, f"padding {padding} is not supported")
        sh, sw = op.attrs.get("stride", (1, 1))
        if min(sh, sw) < 1 or max(sh, sw, kh, kw) > MAX_WINDOW:
            raise fail(op, f"stride {sh}x{sw} or window {kh}x{kw} is not supported")
        _, oh, ow, _ = o.shape
        # TFLM: ComputePaddingHeightWidth(stride, dilation 1, output size, filter, padding)
        ph = pad_before(sh, 1, oh, kh, out_size(padding, oh, kh, sh, 1))
        pw = pad_before(sw, 1, ow, kw, out_size(padding, ow, kw, sw, 1))
        lo, hi = activation_range(op, o)
        mults, shifts = channel_multipliers(x.quant.s, w, o.quant.s, oc)
        fields = dict(
            batches=n, in_h=h, in_w=wd, in_c=c, out_h=oh, out_w=ow, out_c=oc, k_h=kh, k_w=kw,
            stride_h=sh, stride_w=sw, pad_h=ph, pad_w=pw, in_offset=-x.quant.zp,
            out_offset=o.quant.zp, act_min=lo, act_max=hi,
        )  # fmt: skip
        rq = None
        if int16:
            rq = s16.requant(op, g, oc, mults, shifts, bias_index=3)
            del fields["in_offset"], fields["out_offset"]
        return TransposeConv(
            macs=x.size * kh * kw * oc,
            geo=tuple(fields.items()),
            mult=np.array(mults, np.int64),
            shift=np.array(shifts, np.int64),
            has_bias=rq is not None or bias(op, g, oc, index=3) is not None,
            rq=rq,
        )

    def lower(self, op: Op, g: Graph, d: TransposeConv, ctx: LowerCtx, choice: Choice) -> str:
        fields: dict[str, object] = dict(d.geo)
        x, y = ctx.ptr(op.inputs[2]), ctx.ptr(op.outputs[0], const=False)
        if d.rq is not None:
            fields.update(
                weights=ctx.ptr(op.inputs[1]),
                bias=ctx.array("bias64", "int64_t", d.rq.bias),
                rm=ctx.array("rm", "int32_t", d.rq.rm),
                ts=ctx.array("ts", "int32_t", d.rq.ts),
            )
            p = ctx.params("tc_transpose_conv_s16_params_t", fields)
            return f"tc_transpose_conv_s16({p}, {x}, {y});"
        fields.update(
            weights=ctx.ptr(op.inputs[1]),
            bias=ctx.ptr(op.inputs[3]) if d.has_bias else "0",
            mult=ctx.array("mult", "int32_t", d.mult),
            shift=ctx.array("shift", "int32_t", d.shift),
        )
        p = ctx.params("tc_transpose_conv_params_t", fields)
        return f"tc_transpose_conv_s8({p}, {x}, {y});"
