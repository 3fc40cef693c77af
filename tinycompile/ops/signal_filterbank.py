"""TFLM's signal library, filter bank half (the micro_speech audio front end after the
energies), as TFLM's signal/micro/kernels compute them: CUSTOM operators ``SignalFilterBank``
(uint32 energies into num_channels uint64 triangular-filter sums, weights and band tables as
int16 constant inputs), ``SignalFilterBankSquareRoot`` (integer square root of each channel,
shifted right by the FFT's auto-scale shift, a runtime int32 scalar), ``SignalFilterBank
SpectralSubtraction`` (a smoothed noise estimate subtracted from each channel, with a floor;
the estimate is state kept from one inference to the next, as TFLM keeps it across Invoke,
and a second output), ``SignalPCAN`` (per-channel automatic gain from the noise estimate
through an int16 gain table, then PCAN's shrink) and ``SignalFilterBankLog`` (fixed-point
natural log, scaled, into int16). The spectral subtraction's state is a uint32 variable
tensor the ``signal_state`` pass gives it (reset to 0, as TFLM's Reset). Kernels:
firmware/kernels/tc_signal_filterbank.c (header tc_signal.h).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ir import Graph, Op
from .base import Choice, LowerCtx, Prepared, fail, register
from .signal_spectrum import Fields, SignalOp, check_types, option, rank1

SPECTRAL_SUBTRACTION = "CUSTOM(SignalFilterBankSpectralSubtraction)"


@register
class FilterBankOp(SignalOp):
    kinds = ("CUSTOM(SignalFilterBank)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"num_channels": option(options, "num_channels")}

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("uint32",) + ("int16",) * 5, ("uint64",))
        rank1(op, g, *op.inputs, *op.outputs)
        n = op.attrs["num_channels"]
        i, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        w, u, starts, wstarts, widths = (g.t(t) for t in op.inputs[1:])
        for t in (w, u, starts, wstarts, widths):
            if not t.is_const:
                raise fail(op, f"tensor {t.id} (weights or band tables) must be a constant")
        if o.size != n or not starts.size == wstarts.size == widths.size == n + 1:
            raise fail(op, f"{n} channels need {n} outputs and band tables of {n + 1}")
        if w.size != u.size:
            raise fail(op, "weights and unweights differ in length")
        macs = 0
        for c in range(n + 1):
            f0, w0, k = int(starts.data[c]), int(wstarts.data[c]), int(widths.data[c])
            if k < 0 or f0 < 0 or w0 < 0 or f0 + k > i.size or w0 + k > w.size:
                raise fail(op, f"channel band {c} reaches outside the energies or the weights")
            macs += 2 * k
        return Fields(macs=macs, fields=(("num_channels", n),))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        names = ("weights", "unweights", "freq_starts", "weight_starts", "widths")
        fields: dict[str, object] = dict(d.fields)
        fields.update({k: ctx.ptr(t) for k, t in zip(names, op.inputs[1:], strict=True)})
        p = ctx.params("tc_signal_filter_bank_params_t", fields)
        out = ctx.ptr(op.outputs[0], const=False)
        return f"tc_signal_filter_bank({p}, {ctx.ptr(op.inputs[0])}, {out});"


@register
class FilterBankSqrtOp(SignalOp):
    kinds = ("CUSTOM(SignalFilterBankSquareRoot)",)

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("uint64", "int32"), ("uint32",))
        i, s, o = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
        rank1(op, g, i.id, o.id)
        if s.shape != () or o.size != i.size:
            raise fail(op, "expects a scalar shift and as many outputs as inputs")
        return Fields(macs=32 * i.size, fields=(("num_channels", i.size),))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_fb_sqrt_params_t", dict(d.fields))
        i, s = (ctx.ptr(t) for t in op.inputs)
        return f"tc_signal_fb_sqrt({p}, {i}, {s}, {ctx.ptr(op.outputs[0], const=False)});"


_SS_KEYS = (
    "num_channels",
    "smoothing",
    "one_minus_smoothing",
    "alternate_smoothing",
    "alternate_one_minus_smoothing",
    "min_signal_remaining",
    "smoothing_bits",
    "spectral_subtraction_bits",
)


@register
class SpectralSubtractionOp(SignalOp):
    kinds = (SPECTRAL_SUBTRACTION,)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: option(options, k) for k in _SS_KEYS}
        out["clamping"] = int(bool(options.get("clamping", False)))
        return out

    def prepare(self, op: Op, g: Graph) -> Fields:
        if len(op.inputs) != 2 or not g.t(op.inputs[-1]).variable:
            raise fail(op, "has no state tensor (the signal_state pass gives it one)")
        check_types(op, g, ("uint32", "uint32"), ("uint32", "uint32"))
        rank1(op, g, *op.inputs, *op.outputs)
        n = op.attrs["num_channels"]
        if any(g.t(t).size != n for t in [*op.inputs, *op.outputs]):
            raise fail(op, f"every tensor must hold num_channels = {n} values")
        for k in ("smoothing_bits", "spectral_subtraction_bits"):
            if not 0 <= op.attrs[k] < 32:
                raise fail(op, f"{k} {op.attrs[k]} is outside [0, 31]")
        fields = {k: op.attrs[k] for k in (*_SS_KEYS, "clamping")}
        return Fields(macs=4 * n, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_spectral_sub_params_t", dict(d.fields))
        i, state = ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1], const=False)
        o, noise = (ctx.ptr(t, const=False) for t in op.outputs)
        return f"tc_signal_spectral_sub({p}, {i}, {state}, {o}, {noise});"


@register
class PcanOp(SignalOp):
    kinds = ("CUSTOM(SignalPCAN)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"snr_shift": option(options, "snr_shift")}

    def prepare(self, op: Op, g: Graph) -> Fields:
        check_types(op, g, ("uint32", "uint32", "int16"), ("uint32",))
        rank1(op, g, *op.inputs, *op.outputs)
        i, noise, lut, o = (g.t(t) for t in [*op.inputs, *op.outputs])
        if noise.size != i.size or o.size != i.size:
            raise fail(op, "input, noise estimate and output differ in length")
        # the gain lookup reads entries up to 4 * 32 - 6 + 2 (a noise estimate of 32 bits)
        if lut.size < 4 * 32 - 3:
            raise fail(op, f"gain table has {lut.size} entries; 125 are read")
        if not 0 <= op.attrs["snr_shift"] < 64:
            raise fail(op, f"snr_shift {op.attrs['snr_shift']} is outside [0, 63]")
        fields = {"num_channels": i.size, "snr_shift": op.attrs["snr_shift"]}
        return Fields(macs=8 * i.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_pcan_params_t", dict(d.fields))
        i, noise, lut = (ctx.ptr(t) for t in op.inputs)
        out = ctx.ptr(op.outputs[0], const=False)
        return f"tc_signal_pcan({p}, {i}, {noise}, {lut}, {out});"


@register
class FilterBankLogOp(SignalOp):
    kinds = ("CUSTOM(SignalFilterBankLog)",)

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "output_scale": option(options, "output_scale"),
            "input_correction_bits": option(options, "input_correction_bits"),
        }

    def prepare(self, op: Op, g: Graph) -> Prepared:
        check_types(op, g, ("uint32",), ("int16",))
        rank1(op, g, *op.inputs, *op.outputs)
        i, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        if o.size != i.size:
            raise fail(op, "input and output differ in length")
        bits = op.attrs["input_correction_bits"]
        if not 0 <= bits < 32:
            raise fail(op, f"input_correction_bits {bits} is outside [0, 31]")
        fields = {
            "num_channels": i.size,
            "output_scale": op.attrs["output_scale"],
            "input_correction_bits": bits,
        }
        return Fields(macs=8 * i.size, fields=tuple(fields.items()))

    def lower(self, op: Op, g: Graph, d: Fields, ctx: LowerCtx, choice: Choice) -> str:
        p = ctx.params("tc_signal_fb_log_params_t", dict(d.fields))
        out = ctx.ptr(op.outputs[0], const=False)
        return f"tc_signal_fb_log({p}, {ctx.ptr(op.inputs[0])}, {out});"
