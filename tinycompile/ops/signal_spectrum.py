"""TFLM's signal library, spectrum half (the micro_speech audio front end's first four
operators), as TFLM's signal/micro/kernels compute them: CUSTOM operators named
``SignalWindow`` (int16 samples times an int16 window, shifted right and saturated),
``SignalFftAutoScale`` (the frame shifted left until its largest magnitude fills 15 bits; the
shift is a second, int32 scalar output), ``SignalRfft`` (int16 only: kiss_fft's fixed-point
real FFT of a zero-padded frame, every stage scaling by its radix; a power-of-2 length) and
``SignalEnergy`` (re^2 + im^2 per bin in [start_index, end_index), uint32). Options come from
each operator's flexbuffer map (``frontend.tflite``). The compiler computes the FFT's
factorisation and twiddles exactly as kiss_fft does at init (double precision cos/sin, then
floor(0.5 + 32767 x)), so the kernel needs no libm. Kernels: firmware/kernels/
tc_signal_spectrum.c (header tc_signal.h). ``check_types`` is shared with signal_filterbank.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Operator, Prepared, fail, register


def check_types(op: Op, g: Graph, ins: Sequence[str], outs: Sequence[str]) -> None:
    """The op has exactly these input and output dtypes (TFLM's Prepare checks: the signal
    kernels take no quantization)."""
    if len(op.inputs) != len(ins) or len(op.outputs) != len(outs):
        raise fail(op, f"expects {len(ins)} inputs and {len(outs)} outputs")
    for what, tids, want in (("input", op.inputs, ins), ("output", op.outputs, outs)):
        for k, (tid, dtype) in enumerate(zip(tids, want, strict=True)):
            if tid < 0:
                raise fail(op, f"{what} {k} is absent")
            if g.t(tid).dtype != dtype:
                raise fail(op, f"{what} {k} is {g.t(tid).dtype}; TFLM's kernel takes {dtype}")


def option(options: Mapping[str, Any], key: str) -> int:
    """An integer option of the flexbuffer map (a missing one is an error: TFLM reads it)."""
    if key not in options:
        raise ValueError(f"custom option '{key}' is missing")
    return int(options[key])


def rank1(op: Op, g: Graph, *tids: int) -> None:
    for tid in tids:
        if len(g.t(tid).shape) != 1:
            raise fail(op, f"tensor {tid} has shape {list(g.t(tid).shape)}; TFLM wants rank 1")


@dataclass(frozen=True, kw_only=True)
class Fields(Prepared):
    fields: tuple[tuple[str, int], ...]


class SignalOp(Operator):
    """What the signal units share: their own type checks (no quantization, int16 inputs)."""

    int16 = True
    checks_types = True


@register
class WindowOp(SignalOp):
    kinds = ("CUSTOM(SignalWindow)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"shift": option(options, "shift")}

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("int16", "int16"), ("int16",))
        i, w, o = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
        rank1(op, g, w.id)
        if len(i.shape) < 1 or len(i.shape) != len(o.shape) or i.size != o.size:
            raise fail(op, "input and output must have the same shape")
        if w.size < 1 or i.size % w.size:
            raise fail(op, f"{i.size} samples are not whole windows of {w.size}")
        shift = op.attrs["shift"]
        if not 0 <= shift < 32:
            raise fail(op, f"shift {shift} is outside [0, 31]")
        fields = {"size": i.size, "weight_size": w.size, "shift": shift}
        return Fields(macs=i.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_window_params_t", dict(d.fields))
        i, w = (ctx.ptr(t) for t in op.inputs)
        return f"tc_signal_window({p}, {i}, {w}, {ctx.ptr(op.outputs[0], const=False)});"


@register
class FftAutoScaleOp(SignalOp):
    kinds = ("CUSTOM(SignalFftAutoScale)",)

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("int16",), ("int16", "int32"))
        i, o, s = g.t(op.inputs[0]), g.t(op.outputs[0]), g.t(op.outputs[1])
        rank1(op, g, i.id, o.id)
        if s.shape != () or o.size != i.size:
            raise fail(op, "expects a rank-1 output like its input and a scalar shift")
        return Fields(macs=2 * i.size, fields=(("size", o.size),))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_fft_auto_scale_params_t", dict(d.fields))
        o, s = (ctx.ptr(t, const=False) for t in op.outputs)
        return f"tc_signal_fft_auto_scale({p}, {ctx.ptr(op.inputs[0])}, {o}, {s});"


def kiss_factors(n: int) -> list[int]:
    """kiss_fft's kf_factor: (radix, remaining length) pairs, 4s first, then 2s, then odd."""
    out: list[int] = []
    p = 4
    floor_sqrt = math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = {4: 2, 2: 3}.get(p, p + 2)
            if p > floor_sqrt:
                p = n
        n //= p
        out += [p, n]
        if n <= 1:
            return out


def kiss_perm(stages: list[int], n: int) -> np.ndarray:
    """The input point each output slot of kiss_fft's recursion starts from (mixed-radix digit
    reversal of the stages ``stages``: (radix, sub-length) pairs)."""
    perm = np.zeros(n, np.int64)
    for j in range(n):
        rem, idx, stride = j, 0, 1
        for radix, m in zip(stages[::2], stages[1::2], strict=True):
            idx += (rem // m) * stride
            rem %= m
            stride *= radix
        perm[j] = idx
    return perm


def _fixed(phase: float) -> tuple[int, int]:
    """kiss_fft's kf_cexp in FIXED_POINT 16: floor(0.5 + 32767 cos), likewise sin."""
    return math.floor(0.5 + 32767 * math.cos(phase)), math.floor(0.5 + 32767 * math.sin(phase))


def kiss_twiddles(fft_length: int) -> tuple[np.ndarray, np.ndarray]:
    """The twiddles of kiss_fftr_alloc(fft_length, forward): the complex FFT's (fft_length / 2)
    and the real split's super twiddles (fft_length / 4), interleaved (re, im) int16."""
    n = fft_length // 2
    tw = [_fixed(-2 * math.pi * i / n) for i in range(n)]
    sup = [_fixed(-math.pi * ((i + 1) / n + 0.5)) for i in range(n // 2)]
    return np.array(tw, np.int16).reshape(-1), np.array(sup, np.int16).reshape(-1)


@dataclass(frozen=True, kw_only=True)
class Rfft(Prepared):
    fields: tuple[tuple[str, int], ...]
    stages: tuple[int, ...]


@register
class RfftOp(SignalOp):
    kinds = ("CUSTOM(SignalRfft)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"fft_length": option(options, "fft_length"), "type": option(options, "T")}

    def prepare(self, op: Op, g: Graph) -> Rfft:
        n = op.attrs["fft_length"]
        if op.attrs["type"] != 7:  # TensorType INT16
            raise fail(op, "only the int16 RFFT is supported (not int32 or float32)")
        check_types(op, g, ("int16",), ("int16",))
        i, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        if n < 4 or n & (n - 1) or n > 1 << 16:
            raise fail(op, f"fft_length {n} is not a power of 2 in [4, 65536]")
        if not i.shape or len(i.shape) != len(o.shape):
            raise fail(op, "input and output must have the same rank")
        frame, bins = i.shape[-1], o.shape[-1] // 2
        if frame > n or bins != n // 2 + 1 or i.size // frame != o.size // (2 * bins):
            raise fail(op, f"frames of {frame} into {o.shape[-1]} values do not fit fft_length {n}")
        stages = kiss_factors(n // 2)
        fields = {
            "fft_length": n,
            "input_length": frame,
            "input_size": i.size,
            "output_length": bins,
            "n_stages": len(stages) // 2,
        }
        frames = i.size // frame
        macs = frames * n * max(1, n.bit_length())
        return Rfft(macs=macs, fields=tuple(fields.items()), stages=tuple(stages), workspace=4 * n)

    def lower(self, op: Op, g: Graph, d: Rfft, ctx: LowerCtx, choice: Choice) -> str:
        f = dict(d.fields)
        tw, sup = kiss_twiddles(f["fft_length"])
        fields = {
            **f,
            "stages": ctx.array("rfft_stages", "int16_t", np.array(d.stages)),
            "perm": ctx.array(
                "rfft_perm", "int16_t", kiss_perm(list(d.stages), f["fft_length"] // 2)
            ),
            "twiddles": ctx.array("rfft_twiddles", "int16_t", tw),
            "super_twiddles": ctx.array("rfft_super_twiddles", "int16_t", sup),
        }
        p = ctx.params("tc_signal_rfft_params_t", fields)
        scratch = f"(int16_t *){ctx.scratch(d.workspace)}"
        out = ctx.ptr(op.outputs[0], const=False)
        return f"tc_signal_rfft_s16({p}, {ctx.ptr(op.inputs[0])}, {out}, {scratch});"


@register
class EnergyOp(SignalOp):
    kinds = ("CUSTOM(SignalEnergy)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"start": option(options, "start_index"), "end": option(options, "end_index")}

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("int16",), ("uint32",))
        i, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        rank1(op, g, i.id, o.id)
        start, end = op.attrs["start"], op.attrs["end"]
        if 2 * o.size > i.size or not 0 <= start <= end <= o.size:
            raise fail(op, f"bins [{start}, {end}) do not fit {o.size} outputs of {i.size} values")
        fields = {"size": o.size, "start_index": start, "end_index": end}
        return Fields(macs=2 * (end - start), fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_energy_params_t", dict(d.fields))
        out = ctx.ptr(op.outputs[0], const=False)
        return f"tc_signal_energy({p}, {ctx.ptr(op.inputs[0])}, {out});"
