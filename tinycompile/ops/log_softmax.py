"""LOG_SOFTMAX (int8 in, int8 out at scale 16/256, zero point 127), TFLM's int8 path
(log_softmax.cc with reference/log_softmax.h, LogSoftmaxQuantized): along the last axis, with
``d = max - x`` per row, the exp of every possible difference (Rescale<12> of gemmlowp's
exp_on_negative_values of the Q5.26 difference) and the Q5.26 difference itself are tabulated
at compile time over d = 0..255; the row's sum, its logarithm (log_x_for_x_greater_than_or_equal
_to_1, gemmlowp fixed point), the adjusted minimum difference and the final rounding shift run
on the device, ``tc_log_softmax_s8`` (firmware/kernels/tc_log_softmax.c). Runs in place over its
input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from ..quant import fixedpoint as fp
from ..quant.qmath import quantize_multiplier
from .base import Choice, LowerCtx, Operator, Prepared, fail, register
from .common import io_call, io_int8

OUTPUT_SCALE = np.float32(16.0 / 256.0)
OUTPUT_ZERO_POINT = 127


@dataclass(frozen=True, kw_only=True)
class LogSoftmax(Prepared):
    rows: int
    depth: int
    diff_min: int
    reverse_multiplier: int
    reverse_shift: int
    exp_table: np.ndarray  # int32[256] by d = max - x: Rescale<12>(exp), Q12.19
    diff_table: np.ndarray  # int32[256] by d: the difference in Q5.26


def log_softmax_params(in_scale: float) -> tuple[int, int, int, int, int]:
    """PreprocessLogSoftmaxScalingExp (beta 1, 5 integer bits) and CalculateInputRadius:
    (input multiplier, left shift, reverse multiplier, reverse shift, diff_min)."""
    real = min(float(in_scale) * float(1 << 26), float(2**31 - 1))
    if not real > 1.0:
        raise ValueError(f"input scale {in_scale:g} is too small (scale * 2^26 must exceed 1)")
    mult, shift = quantize_multiplier(real)
    diff_min = -fp.calculate_input_radius(5, shift)
    rev_mult, rev_shift = quantize_multiplier(float(1 << (31 - shift)) / float(mult))
    return mult, shift, rev_mult, rev_shift, diff_min


def log_softmax_tables(in_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(exp table, difference table) over d = max - x in 0..255; 0 where d is below diff_min
    (TFLM leaves those out of the sum and gives them the lowest output)."""
    mult, shift, _, _, diff_min = log_softmax_params(in_scale)
    exp_t = np.zeros(256, dtype=np.int32)
    diff_t = np.zeros(256, dtype=np.int32)
    for d in range(256):
        if -d >= diff_min:
            q5 = fp.mul_by_quantized_multiplier(-d, mult, shift)
            diff_t[d] = q5
            exp_t[d] = fp.rescale(fp.exp_on_negative_values(q5, 5), 0, 12)
    return exp_t, diff_t


@register
class LogSoftmaxOp(Operator):
    kinds = ("LOG_SOFTMAX",)
    elementwise = True

    def prepare(self, op: Op, g: Graph) -> LogSoftmax:
        i, o = io_int8(op, g)
        if len(i.shape) < 1 or tuple(i.shape) != tuple(o.shape):
            raise fail(op, f"input shape {list(i.shape)} and output shape {list(o.shape)} differ")
        if o.quant.zp != OUTPUT_ZERO_POINT or o.quant.scale[0] != OUTPUT_SCALE:
            raise fail(op, "int8 output must have scale 16/256 and zero point 127 (TFLM)")
        try:
            _, _, rev_mult, rev_shift, diff_min = log_softmax_params(i.quant.s)
            exp_t, diff_t = log_softmax_tables(i.quant.s)
        except ValueError as e:
            raise fail(op, str(e)) from None
        depth = i.shape[-1]
        return LogSoftmax(
            macs=2 * i.size,
            rows=i.size // max(depth, 1),
            depth=depth,
            diff_min=diff_min,
            reverse_multiplier=rev_mult,
            reverse_shift=rev_shift,
            exp_table=exp_t,
            diff_table=diff_t,
        )

    def lower(self, op: Op, g: Graph, d: LogSoftmax, ctx: LowerCtx, choice: Choice) -> str:
        fields = {
            "rows": d.rows,
            "depth": d.depth,
            "diff_min": d.diff_min,
            "reverse_multiplier": d.reverse_multiplier,
            "reverse_shift": d.reverse_shift,
            "exp_lut": ctx.array("log_softmax_exp", "int32_t", d.exp_table),
            "diff_lut": ctx.array("log_softmax_diff", "int32_t", d.diff_table),
        }
        return io_call("tc_log_softmax_s8", op, ctx, ctx.params("tc_log_softmax_params_t", fields))
