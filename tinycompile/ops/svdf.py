"""SVDF (int8 input and output, int16 or int8 activation state), as TFLM's svdf.cc /
svdf_common.cc (PrepareSvdf, EvalIntegerSvdfReference) compute it.

Inputs: input [batches, input_size], weights_feature int8 [filters, input_size], weights_time
[filters, memory] (int16, or int8), bias int32 [units] and the activation state, a variable
tensor [batches, memory * filters] of weights_time's type, updated in place and kept across
inferences (the planner's state region). Multipliers as PrepareSvdf: the scale products and
quotients are taken in float32, then QuantizeMultiplier. TFLM's integer path applies no fused
activation (only the int8 clamp), and so does this unit. Kernels: ``tc_svdf_s8_s16``,
``tc_svdf_s8_s8`` (firmware/kernels/tc_svdf.c); TFLM's two int32 scratch buffers are not needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op, Tensor
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import fused_activation, inp, out, positive_scales, require_int8


@dataclass(frozen=True, kw_only=True)
class Svdf(Prepared):
    state_dtype: str
    fields: tuple[tuple[str, int], ...]
    feat_bias: np.ndarray  # int32 [filters]: -input_zp * sum(weights_feature[f])


def _const(op: Op, t: Tensor, what: str, dtypes: tuple[str, ...], rank: int) -> None:
    if t.dtype not in dtypes:
        raise fail(op, f"{what} is {t.dtype}; {' or '.join(dtypes)} is needed")
    if not t.is_const:
        raise fail(op, f"{what} must be a constant tensor")
    if len(t.shape) != rank:
        raise fail(op, f"{what} must have rank {rank}, has shape {list(t.shape)}")
    if t.quant is None or t.quant.per_channel:
        raise fail(op, f"{what} must be quantized per tensor")
    if what != "bias" and t.quant.zp != 0:
        raise fail(op, f"{what} has zero point {t.quant.zp} (TFLM assumes 0)")
    positive_scales(op, t)


def _f32(x: float) -> np.float32:
    return np.float32(x)


@register
class SvdfOp(Operator):
    kinds = ("SVDF",)
    checks_types = True  # an int16 input is refused with TFLM's reason

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"rank": int(options.get("rank", 0)), "activation": fused_activation(options)}

    def prepare(self, op: Op, g: Graph) -> Svdf:
        if len(op.inputs) != 5 or len(op.outputs) != 1:
            raise fail(op, f"expects 5 inputs and 1 output, has {len(op.inputs)} and 1+")
        if op.inputs[3] < 0:
            raise fail(op, "the bias is absent; TFLM's int8 SVDF needs it")
        x, wf, wt, bias, st = (inp(op, g, i) for i in range(5))
        o = out(op, g)
        if x.dtype == "int16":  # PrepareSvdf: input->type is float32 or int8
            raise fail(
                op,
                f"int16 input tensor {x.id} is not supported: TFLM's SVDF takes an int8 (or"
                " float32) input only; int16 is for weights_time and the activation state",
            )
        require_int8(op, g, [x.id, o.id])
        positive_scales(op, x, o)
        _const(op, wf, "weights_feature", ("int8",), 2)
        _const(op, wt, "weights_time", ("int16", "int8"), 2)
        _const(op, bias, "bias", ("int32",), 1)
        if not st.variable:
            raise fail(op, f"activation state tensor {st.id} is not a variable tensor")
        if st.dtype != wt.dtype:
            raise fail(op, f"activation state is {st.dtype} but weights_time is {wt.dtype}")
        if st.quant is None or st.quant.per_channel:
            raise fail(op, "activation state must be quantized per tensor")
        positive_scales(op, st)
        rank = op.attrs.get("rank", 0)
        if len(x.shape) != 2:
            raise fail(op, f"input must have rank 2 [batches, input_size], has {list(x.shape)}")
        batches, n_in = x.shape
        filters, memory = wt.shape
        if rank < 1 or filters % rank:
            raise fail(op, f"rank {rank} does not divide the {filters} filters")
        units = filters // rank
        if wf.shape != (filters, n_in):
            raise fail(op, f"weights_feature {list(wf.shape)} is not [{filters}, {n_in}]")
        if bias.shape != (units,):
            raise fail(op, f"bias {list(bias.shape)} is not [{units}]")
        if tuple(o.shape) != (batches, units):
            raise fail(op, f"output {list(o.shape)} is not [{batches}, {units}]")
        if tuple(st.shape) != (batches, memory * filters):
            raise fail(op, f"state {list(st.shape)} is not [{batches}, {memory * filters}]")
        # PrepareSvdf. The installed TFLM computes effective_scale_1 in double (the mirror's
        # source reads float32): only double agrees with its state on every feature of the
        # SVDF models here (the float32 quotient missed 8 features in 60 inputs); effective_scale_2:
        # float32 products and quotient, widened to double (no model here tells them apart)
        s_x, s_wf, s_wt, s_st = (_f32(t.quant.s) for t in (x, wf, wt, st))
        scale_1 = float(s_x) * float(s_wf) / float(s_st)
        scale_2 = float(s_st * s_wt / _f32(o.quant.s))
        if abs(float(bias.quant.s) - float(s_st * s_wt)) >= 1e-5:
            raise fail(op, "bias scale is not state scale x weights_time scale")
        m1, sh1 = quantize_multiplier(scale_1)
        m2, sh2 = quantize_multiplier(scale_2)
        wsum = np.asarray(wf.data, np.int64).sum(axis=1)
        feat_bias = (-x.quant.zp * wsum).astype(np.int32)
        fields = {
            "batches": batches,
            "input_size": n_in,
            "filters": filters,
            "rank": rank,
            "memory": memory,
            "feat_mult": m1,
            "feat_shift": sh1,
            "state_zp": st.quant.zp,
            "out_mult": m2,
            "out_shift": sh2,
            "out_zp": o.quant.zp,
        }
        macs = batches * filters * (n_in + memory)
        return Svdf(
            macs=macs, state_dtype=st.dtype, fields=tuple(fields.items()), feat_bias=feat_bias
        )

    def lower(self, op: Op, g: Graph, d: Svdf, ctx: LowerCtx, choice: Choice) -> str:
        fields: dict[str, object] = dict(d.fields)
        fields["weights_feature"] = ctx.ptr(op.inputs[1])
        fields["feat_bias"] = ctx.array("feat_bias", "int32_t", d.feat_bias)
        fields["weights_time"] = f"(const void *){ctx.ptr(op.inputs[2])}"
        fields["bias"] = ctx.ptr(op.inputs[3])
        p = ctx.params("tc_svdf_params_t", fields)
        fn = "tc_svdf_s8_s16" if d.state_dtype == "int16" else "tc_svdf_s8_s8"
        return (
            f"{fn}({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[4], const=False)}, "
            f"{ctx.ptr(op.outputs[0], const=False)});"
        )
