"""FULLY_CONNECTED (int8), as TFLM's fully_connected.cc computes it.

Multipliers (``CalculateOpDataFullyConnected``): ``double(input_scale) * double(filter_scale) /
double(output_scale)``, per output channel or once for per-tensor weights. TFLM's source reads as
if the per-tensor product were taken in float (``GetQuantizedConvolutionMultipler``), but the
installed TFLM agrees with the double product on inputs where the two differ
(``test_fc_multiplier_rule`` finds such inputs). The input zero point is folded into the bias
(``conv_common``). weights_format 0 only (shuffled weights are not supported), as TFLM's int8
kernel. Kernel: ``tc_fc_s8`` (firmware/kernels/tc_fully_connected.c).

Weight layout (int8, ``weight_quads``): the kernel never reads TFLite's [out_c][depth] rows, only
a copy re-laid out at compile time (the model's layout never reaches flash; same byte count).
Output channels go in quads c0 = 0, 4, 8, ...; quad c0 (n = min(4, out_c - c0) channels) starts
at byte c0 * depth and holds, for each group g of four depth values (g < depth // 4), the four
bytes w[c0 + k][4g .. 4g + 3] of each channel k < n in turn (4n bytes per group), then the
depth % 4 last values of each channel in turn. Each byte is stored as w + 128 (uint8, the sign
bit flipped) and the kernel subtracts 128 * sum(x) per input row. Why: on Cortex-M4/M7 one LDM
reads a group of a whole quad (16 weights) and one input word serves all four channels
(1 LDR + 1 LDM + 10 extends + 8 SMLAD per 16 MACs); on ARMv6-M, which has LDRSB only with a
register offset, the unsigned bytes load with LDRB at immediate offsets 0..31 from one pointer
(one load, one MULS, one ADD per MAC, no index register).

16x8 (int16 input and output, zero point 0, int8 weights, int64 bias or none): TFLM's
int16 ``FullyConnected`` (reference/integer_ops/fully_connected.h), an int64 accumulator and the
64-bit requantization of ``s16`` (per channel or per tensor, multipliers as above); kernel
``tc_fc_s16``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from ..quant.qmath import quantize_multiplier
from . import s16, s16_fast
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import fused_activation, inp, io_call, out
from .conv_common import Requant, channel_multipliers, check_io, requant, smmlar_ok, weights


def multipliers(op: Op, g: Graph) -> tuple[list[int], list[int]]:
    """Per channel, or once per tensor (see the module doc)."""
    x, w, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
    if w.quant.per_channel:
        return channel_multipliers(x.quant.s, w, o.quant.s, w.shape[0])
    m, s = quantize_multiplier(float(x.quant.scale[0]) * float(w.quant.scale[0]) / o.quant.s)
    return [m], [s]


def weight_quads(w: np.ndarray) -> np.ndarray:
    """TFLite's int8 weights [out_c, depth] in the kernel's layout (see the module doc): uint8
    bytes w + 128, quads of four output channels interleaved by groups of four depth values."""
    oc, depth = w.shape
    u = (np.asarray(w, np.int16) + 128).astype(np.uint8)
    full = depth // 4 * 4
    parts = []
    for c0 in range(0, oc, 4):
        q = u[c0 : c0 + 4]
        n = q.shape[0]
        parts.append(q[:, :full].reshape(n, full // 4, 4).transpose(1, 0, 2).reshape(-1))
        parts.append(q[:, full:].reshape(-1))
    return np.concatenate(parts) if parts else np.zeros(0, np.uint8)


@dataclass(frozen=True, kw_only=True)
class FullyConnected(Prepared):
    batches: int
    depth: int
    out_c: int
    rq: Requant | s16.Requant64
    smmlar: bool = False


@register
class FullyConnectedOp(Operator):
    kinds = ("FULLY_CONNECTED",)
    int16 = True

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "activation": fused_activation(options),
            "keep_num_dims": bool(options.get("keep_num_dims", False)),
            "weights_format": options.get("weights_format", 0),
        }

    def prepare(self, op: Op, g: Graph) -> FullyConnected:
        wide = check_io(op, g)
        if op.attrs.get("weights_format", 0) != 0:
            raise fail(op, f"weights format {op.attrs.get('weights_format')} is not supported")
        x, w, o = inp(op, g, 0), inp(op, g, 1), out(op, g)
        if len(w.shape) != 2:
            raise fail(op, f"weights must be rank 2 [out_c, depth], got {list(w.shape)}")
        oc, depth = w.shape
        if not o.shape or o.shape[-1] != oc:
            raise fail(op, f"output shape {list(o.shape)} does not end in {oc} channels")
        batches = o.size // oc if oc else 0
        if depth < 1 or x.size != batches * depth:
            raise fail(
                op, f"input of {x.size} values is not {batches} rows of the weights' depth {depth}"
            )
        if op.attrs.get("keep_num_dims") and tuple(o.shape[:-1]) != tuple(x.shape[:-1]):
            raise fail(op, f"keep_num_dims output {list(o.shape)} does not match input {x.shape}")
        weights(op, g, oc)
        if wide:
            rq16 = s16.requant(op, g, oc, *multipliers(op, g))
            return FullyConnected(
                macs=o.size * depth, batches=batches, depth=depth, out_c=oc, rq=rq16
            )
        return fc_s8(op, g, batches, *multipliers(op, g))

    def lower(self, op: Op, g: Graph, d: FullyConnected, ctx: LowerCtx, choice: Choice) -> str:
        if isinstance(d.rq, s16.Requant64):
            wd = np.asarray(inp(op, g, 1).data)
            fast = s16_fast.lower_fc(op, ctx, d.batches, d.rq, wd)
            if fast is not None:
                return fast
            p = ctx.params(
                "tc_fc_s16_params_t",
                {
                    "batches": d.batches,
                    "depth": d.depth,
                    "out_c": d.out_c,
                    "act_min": d.rq.act_min,
                    "act_max": d.rq.act_max,
                    "per_channel": int(d.rq.rm.size > 1),
                    "rm": ctx.array("rm", "int32_t", d.rq.rm),
                    "ts": ctx.array("ts", "int32_t", d.rq.ts),
                    "weights": ctx.ptr(op.inputs[1]),
                    "bias": ctx.array("bias64", "int64_t", d.rq.bias),
                },
            )
            return io_call("tc_fc_s16", op, ctx, p)
        return lower_s8(op, g, d, ctx)


def fc_s8(op: Op, g: Graph, batches: int, mults: list, shifts: list) -> FullyConnected:
    """The int8 fully connected layer of ``op`` (``batches`` rows of input 0, weights
    [out_c, depth] at input 1, optional int32 bias at input 2), requantized by ``mults`` and
    ``shifts`` (one, or one per channel): TFLite's multipliers, or onnxruntime's scales in
    tc_requant_conv's ONNX variant (``onnx_requant.onnx_multipliers``; ONNX_GEMM runs on this
    kernel too, whose shifts above 31 rule out ``smmlar``)."""
    w = np.asarray(inp(op, g, 1).data)
    oc, depth = w.shape
    rq = requant(op, g, oc, w.astype(np.int64).sum(axis=1), mults, shifts)
    return FullyConnected(
        macs=batches * oc * depth,
        batches=batches,
        depth=depth,
        out_c=oc,
        rq=rq,
        smmlar=smmlar_ok(rq, w),
    )


def lower_s8(op: Op, g: Graph, d: FullyConnected, ctx: LowerCtx) -> str:
    """The ``tc_fc_s8`` call of a layer prepared by ``fc_s8``."""
    assert isinstance(d.rq, Requant)
    fields = {
        "batches": d.batches,
        "depth": d.depth,
        "out_c": d.out_c,
        "out_offset": d.rq.out_offset,
        "act_min": d.rq.act_min,
        "act_max": d.rq.act_max,
        "per_channel": int(d.rq.mult.size > 1),
        "rq_smmlar": int(d.smmlar),
        # the kernel reads the re-laid-out weights only: the model's layout never reaches flash
        "weights": ctx.array("weights", "uint8_t", weight_quads(np.asarray(inp(op, g, 1).data))),
        "bias_eff": ctx.array("bias_eff", "int32_t", d.rq.bias_eff),
        # per tensor: the one entry four times where there are blocks of four channels (the
        # Cortex-M0+ requantizes them together)
        "mult": ctx.array("mult", "int32_t", _four(d.rq.mult, d.out_c)),
        "shift": ctx.array("shift", "int32_t", _four(d.rq.shift, d.out_c)),
    }
    return io_call("tc_fc_s8", op, ctx, ctx.params("tc_fc_params_t", fields))


def _four(v: np.ndarray, out_c: int) -> np.ndarray:
    """A per-tensor multiplier or shift repeated four times for a layer of at least four
    channels (tc_fully_connected.h); per-channel ones as they are."""
    return np.resize(v, 4) if v.size == 1 and out_c >= 4 else v
