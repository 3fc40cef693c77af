"""UNIDIRECTIONAL_SEQUENCE_LSTM, the integer path (int8 input, output and hidden state, int8
weights, int32 biases, int16 cell state), as TFLM's unidirectional_sequence_lstm.cc,
lstm_eval_common.cc (UnidirectionalSequenceLstmPrepare, PrepareGateParametersInteger,
CreateGateParams, CreateInterGateMulParams, CreateLstmCellStateInfo) and lstm_eval.h/.cc
(EvalLstm<int8_t, int8_t, int16_t, int32_t>) compute it.

Inputs (lstm_shared.h): 0 input, 1-4 input-to-{input, forget, cell, output} weights, 5-8
recurrent-to-{...} weights, 9-11 peephole (absent), 12-15 gate biases, 16-17 projection
(absent), 18 hidden state (int8 variable), 19 cell state (int16 variable), 20-23 layer norm
(absent); TFLM's kernel refuses peephole, projection, layer norm and CIFG, and so does this unit.
Per step and batch row, each gate is activation(clamp16(FC_input) + clamp16(FC_recurrent)) with
both FCs requantized to Q3.12 (scale 2^-12); sigmoid and tanh are TFLM's int16 LUT versions;
cell = clip(clamp16(f * cell) + clamp16(i * g)); hidden = tanh(cell) * o requantized to the
hidden state's int8 quantization, copied to the output. Every multiplier is computed here as
TFLM's Prepare does (double-precision scale products, QuantizeMultiplier); the input and hidden
zero points are folded into per-gate biases. Kernel: ``tc_lstm_s8`` (firmware/kernels/tc_lstm.c),
no arena scratch: the new hidden row is built in the output slice TFLM copies it to.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op, Tensor
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import fused_activation, inp, out, positive_scales
from .tables import sigmoid_interp_table

GATES = ("input", "forget", "cell", "output")
Q3_12 = 2.0**-12  # the gates' pre-activation scale (nonlinear_input_scale)
Q0_15 = 2.0**-15  # the gates' output scale (nonlinear_output_scale)
ABSENT = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection", 17: "projection",
          20: "layer norm", 21: "layer norm", 22: "layer norm", 23: "layer norm"}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Lstm(Prepared):
    fields: tuple[tuple[str, int], ...]
    gate_mults: np.ndarray  # int32 [4 gates][input m, input shift, recurrent m, recurrent shift]
    gate_bias: np.ndarray  # int32 [2][4 gates][units]: input FC bias + folded zp, recurrent zp


def _f32(x: float) -> float:
    return float(np.float32(x))


def fc_multiplier(in_scale: float, w_scale: float) -> tuple[int, int]:
    """GetQuantizedConvolutionMultipler + QuantizeMultiplier for a gate FC into Q3.12."""
    return quantize_multiplier(float(in_scale) * float(w_scale) / Q3_12)


def mul_multiplier(s1: float, s2: float, s_out: float) -> tuple[int, int]:
    """CreateInterGateMulParams: double product over the output scale."""
    return quantize_multiplier(float(s1) * float(s2) / float(s_out))


def cell_scale_power(scale: float) -> int:
    """CheckedLog2 as CreateLstmCellStateInfo uses it (rounded, the check ignored), in float."""
    x = _f32(_f32(math.log(_f32(scale))) * _f32(1.0 / _f32(math.log(2.0))))
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def quantized_cell_clip(clip: float, scale: float) -> int:
    """static_cast<int16_t>(min(max(clip / scale, -32768), 32767)) in double (truncates)."""
    return int(min(max(float(clip) / float(scale), -32768.0), 32767.0))


def tanh_input_scaling(power: int) -> tuple[int, int]:
    """(multiplier, right shift) TFLM's LSTM Tanh feeds reference_integer_ops::Tanh for a cell
    state of scale 2^power: x * multiplier, then a rounding right shift."""
    left = 15 + power - 3
    if left < 0:
        return 3, -left
    return 3 << left, 0


def _weight(op: Op, t: Tensor, i: int, shape: tuple[int, int]) -> None:
    if t.dtype != "int8":
        raise fail(op, f"{GATES[(i - 1) % 4]} weights (input {i}) are {t.dtype}; int8 is needed")
    if not t.is_const:
        raise fail(op, f"weights (input {i}) must be a constant tensor")
    if tuple(t.shape) != shape:
        raise fail(op, f"weights (input {i}) {list(t.shape)} are not {list(shape)}")
    if t.quant is None or t.quant.per_channel:
        raise fail(op, f"weights (input {i}) must be quantized per tensor")
    if t.quant.zp != 0:
        raise fail(op, f"weights (input {i}) have zero point {t.quant.zp}; 0 is needed")
    positive_scales(op, t)


def _state(op: Op, t: Tensor, what: str, dtype: str, n: int) -> None:
    if not t.variable:
        raise fail(op, f"{what} tensor {t.id} is not a variable tensor")
    if t.dtype != dtype:
        raise fail(op, f"{what} is {t.dtype}; {dtype} is needed")
    if t.quant is None or t.quant.per_channel:
        raise fail(op, f"{what} must be quantized per tensor")
    if t.size != n:
        raise fail(op, f"{what} has {t.size} elements, not batches x units = {n}")
    positive_scales(op, t)


@register
class LstmOp(Operator):
    kinds = ("UNIDIRECTIONAL_SEQUENCE_LSTM",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "activation": fused_activation(options),
            "cell_clip": float(options.get("cell_clip", 0.0)),
            "time_major": bool(options.get("time_major", False)),
        }

    def prepare(self, op: Op, g: Graph) -> Lstm:
        if len(op.inputs) != 24 or len(op.outputs) != 1:
            raise fail(op, f"expects 24 inputs and 1 output, has {len(op.inputs)}")
        ins = list(op.inputs)
        for i, what in ABSENT.items():
            if ins[i] >= 0:
                raise fail(op, f"{what} (input {i}) is not supported (TFLM's kernel refuses it)")
        if ins[1] < 0 or ins[5] < 0:
            raise fail(op, "CIFG (no input gate) is not supported (TFLM's kernel refuses it)")
        x, o = inp(op, g, 0), out(op, g)
        if x.dtype != "int8" or o.dtype != "int8":
            raise fail(op, f"{x.dtype} input / {o.dtype} output: only the int8 LSTM is supported")
        if x.quant is None or x.quant.per_channel:
            raise fail(op, "the input must be quantized per tensor")
        positive_scales(op, x)
        if len(x.shape) != 3 or len(o.shape) != 3:
            raise fail(op, f"input {list(x.shape)} and output {list(o.shape)} must have rank 3")
        tm = op.attrs.get("time_major", False)
        steps, batches, n_in = x.shape if tm else (x.shape[1], x.shape[0], x.shape[2])
        if ins[18] < 0 or ins[19] < 0:
            raise fail(op, "the hidden and cell states are required")
        w_in = [g.t(ins[1 + k]) for k in range(4)]
        units = w_in[1].shape[0] if len(w_in[1].shape) == 2 else -1
        if tuple(o.shape[:2]) != tuple(x.shape[:2]) or o.shape[2] != units:
            raise fail(op, f"output {list(o.shape)} does not match input {list(x.shape)}")
        for k in range(4):
            _weight(op, w_in[k], 1 + k, (units, n_in))
            _weight(op, g.t(ins[5 + k]), 5 + k, (units, units))
            b = g.t(ins[12 + k]) if ins[12 + k] >= 0 else None
            if b is None or b.dtype != "int32" or not b.is_const or tuple(b.shape) != (units,):
                raise fail(op, f"gate bias (input {12 + k}) must be a constant int32 [{units}]")
        hs, cs = g.t(ins[18]), g.t(ins[19])
        _state(op, hs, "hidden state", "int8", batches * units)
        _state(op, cs, "cell state", "int16", batches * units)
        if cs.quant.zp != 0:
            raise fail(op, f"cell state has zero point {cs.quant.zp}; 0 is needed")
        act = op.attrs.get("activation", "NONE")
        if act != "TANH":
            raise fail(op, f"cell gate activation {act} is not supported (TFLM: tanh)")
        clip = _f32(op.attrs.get("cell_clip", 0.0))
        if clip < 0:
            raise fail(op, f"cell_clip {clip:g} is negative")
        power = cell_scale_power(cs.quant.s)
        # 2^-12 and below: TFLM's tanh input is rescaled by 3 and a right shift; above, by
        # 3 << (power + 12) (reference_integer_ops::Tanh's power-of-two case), as here
        if not -30 <= power <= -9:
            raise fail(op, f"cell state scale 2^{power} is out of range (2^-30..2^-9)")
        tanh_mult, tanh_shift = tanh_input_scaling(power)
        mults, biases = [], np.zeros((2, 4, units), np.int64)
        for k in range(4):
            wi, wr = w_in[k], g.t(ins[5 + k])
            mi, si = fc_multiplier(x.quant.s, wi.quant.s)
            mr, sr = fc_multiplier(hs.quant.s, wr.quant.s)
            mults.append([mi, si, mr, sr])
            rows_i = np.asarray(wi.data, np.int64).sum(axis=1)
            rows_r = np.asarray(wr.data, np.int64).sum(axis=1)
            biases[0, k] = np.asarray(g.t(ins[12 + k]).data, np.int64) - x.quant.zp * rows_i
            biases[1, k] = -hs.quant.zp * rows_r
        wrapped = ((biases + 2**31) % 2**32 - 2**31).astype(np.int32)  # int32 sums wrap alike
        fm, fs = mul_multiplier(Q0_15, cs.quant.s, cs.quant.s)
        im, is_ = mul_multiplier(Q0_15, Q0_15, cs.quant.s)
        hm, hsh = mul_multiplier(Q0_15, Q0_15, hs.quant.s)
        fields = {
            "batches": batches,
            "steps": steps,
            "input_size": n_in,
            "units": units,
            "time_major": int(tm),
            "forget_mult": fm,
            "forget_shift": fs,
            "input_mult": im,
            "input_shift": is_,
            "hidden_mult": hm,
            "hidden_shift": hsh,
            "hidden_zp": hs.quant.zp,
            "cell_clip": quantized_cell_clip(clip, _f32(cs.quant.s)) if clip > 0 else 0,
            "tanh_mult": tanh_mult,
            "tanh_shift": tanh_shift,
        }
        macs = batches * steps * 4 * units * (n_in + units)
        return Lstm(
            macs=macs,
            fields=tuple(fields.items()),
            gate_mults=np.asarray(mults, np.int32),
            gate_bias=wrapped,
        )

    def lower(self, op: Op, g: Graph, d: Lstm, ctx: LowerCtx, choice: Choice) -> str:
        fields: dict[str, object] = dict(d.fields)
        # the four gates' matrices packed consecutively (tc_lstm.c: one pass per row feeds
        # the four accumulators): the model's arrays are not emitted beside them
        for kind, first in (("w", 1), ("r", 5)):
            mats = [np.asarray(g.t(op.inputs[first + k]).data, np.int8) for k in range(4)]
            sym = ctx.array(f"lstm_{kind}", "int8_t", np.concatenate([m.reshape(-1) for m in mats]))
            n = mats[0].size
            for k, gate in enumerate(GATES):
                fields[f"{kind}_{gate}"] = f"((const int8_t *){sym} + {k * n})"
        fields["gate_mults"] = ctx.array("lstm_mults", "int32_t", d.gate_mults.reshape(-1))
        fields["gate_bias"] = ctx.array("lstm_bias", "int32_t", d.gate_bias.reshape(-1))
        fields["sigmoid_lut"] = ctx.array("sigmoid_lut", "uint16_t", sigmoid_interp_table())
        p = ctx.params("tc_lstm_params_t", fields)
        return (
            f"tc_lstm_s8({p}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[18], const=False)}, "
            f"{ctx.ptr(op.inputs[19], const=False)}, {ctx.ptr(op.outputs[0], const=False)});"
        )
