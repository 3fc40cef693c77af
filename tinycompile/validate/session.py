"""`tinycompile validate`: run inputs on a board over its console, compare with TFLM on the host
(the ONNX reference for an .onnx model, as `run` does: docs/onnx.md).

The board's firmware (the build `tinycompile build` makes and a flasher writes) answers the
validation protocol after its start-up report. `validate` handshakes (the firmware must run
this very model file: same SHA-256), resets the model's state (the start-up inference moved
it), sends each input, invokes, reads the outputs back and compares them byte for byte with
TensorFlow Lite Micro run on the same inputs in the same order (state carried as TFLM carries
it), with the cycles of each inference.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..boards import get_board
from ..errors import CompileError, DeviceError
from ..frontend import load_model
from ..ir import Graph
from ..run import samples
from ..run.compare import diff
from ..run.emulator import ICOUNT_SHIFT, ticks_to_instructions
from ..run.inputs import UserInputs, make_inputs
from ..run.ioformat import NP_DTYPES
from ..run.reference import (
    ONNX_REFERENCE,
    is_onnx_model,
    require_reference,
    run_onnx_reference,
    run_tflm,
)
from ..serialport import Port
from .device import Device
from .protocol import Hello


@dataclass
class InputResult:
    """One input on the board: its cycles and the outputs that differ from the reference."""

    index: int
    cycles: int
    status: int  # tc_invoke()'s
    mismatches: list[dict] = field(default_factory=list)  # output, name, bytes, of, max_abs_diff
    layer_cycles: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == 0 and not self.mismatches


@dataclass
class ValidateReport:
    """A validation run: the board's handshake and one result per input."""

    model: str
    port: str
    hello: Hello
    results: list[InputResult]
    emulated: bool = False
    machine: str = ""  # the QEMU machine when emulated
    notes: list[str] = field(default_factory=list)
    layer_kinds: list[str] = field(default_factory=list)
    reference: str = "TFLM"  # what the outputs were compared with (the ONNX reference for ONNX)
    baud: int = 115200  # the console's: what a clock measured against the host's bits rests on

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def clock_basis(self) -> tuple[bool, str]:
        """Whether milliseconds can be given (the clock is one the firmware knows), and what
        they rest on or why not (`clock_basis`)."""
        return clock_basis(self.hello, self.emulated, self.baud)

    def ms(self, cycles: int) -> float | None:
        """Milliseconds at the clock the board reports; None where that clock is not known."""
        if not self.clock_basis[0] or not self.hello.clock_hz:
            return None
        return 1e3 * cycles / self.hello.clock_hz

    def line(self, r: InputResult) -> str:
        """One input's line (and its mismatches, one line each)."""
        ms = self.ms(r.cycles)
        head = (
            f"input {r.index:>4}: {'ok      ' if r.ok else 'MISMATCH'} {r.cycles:>13,} cycles"
            + (f" {ms:>10.3f} ms" if ms is not None else "")
        )
        lines = [head]
        if r.status:
            lines.append(f"    tc_invoke() stopped: layer {r.status - 1} refused its input")
        lines += [
            f"    output {m['output']} '{m['name']}': {m['bytes']} of {m['of']} bytes differ,"
            f" max |diff| {m['max_abs_diff']:g}"
            for m in r.mismatches
        ]
        return "\n".join(lines)

    def summary(self) -> str:
        """The verdict, latency statistics and, with layer cycles, the per-layer table."""
        bad = [r for r in self.results if not r.ok]
        nbytes = sum(m["bytes"] for r in self.results for m in r.mismatches)
        maxd = max((m["max_abs_diff"] for r in self.results for m in r.mismatches), default=0.0)
        cyc = [r.cycles for r in self.results]
        h = self.hello
        verdict = (
            f"bit-exact with {self.reference}" if self.ok else f"MISMATCH with {self.reference}"
        )
        lines = [
            f"{verdict}: {len(self.results)} inputs on {h.board}, {len(bad)} with mismatching"
            f" outputs, {nbytes} mismatching output bytes, max |diff| {maxd:g}"
        ]
        if cyc:
            lo, med, hi = min(cyc), int(statistics.median(cyc)), max(cyc)
            known, basis = self.clock_basis
            head = f"latency: {lo:,} / {med:,} / {hi:,} cycles (min / median / max)"
            if known:
                ms = [self.ms(x) or 0.0 for x in (lo, med, hi)]
                lines.append(
                    f"{head} = {ms[0]:.3f} / {ms[1]:.3f} / {ms[2]:.3f} ms at "
                    f"{h.clock_hz / 1e6:g} MHz ({basis}), timer {h.timer}"
                )
            else:
                lines.append(f"{head}, timer {h.timer}; no milliseconds: {basis}")
            if self.emulated and self.machine and h.timer == "systick":
                instr = ticks_to_instructions(med, self.machine)
                lines.append(
                    f"emulated: {med:,} SysTick ticks of {self.machine} under -icount shift="
                    f"{ICOUNT_SHIFT} = {instr:,} instructions per inference (median)"
                )
        layers = [r.layer_cycles for r in self.results if r.layer_cycles]
        if layers:
            lines += ["", "layer  op                   cycles (mean)        ms     share"]
            mean = np.mean(np.array(layers, dtype=np.float64), axis=0)
            total = float(mean.sum()) or 1.0
            for k, c in enumerate(mean):
                kind = self.layer_kinds[k] if k < len(self.layer_kinds) else "?"
                ms, share = self.ms(int(c)), 100 * c / total
                shown = f"{ms:>9.3f}" if ms is not None else f"{'-':>9}"
                lines.append(f"{k:>5}  {kind:<18} {c:>15,.0f} {shown} {share:>8.1f}%")
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    def as_dict(self) -> dict:
        """JSON-ready."""
        h = self.hello
        return {
            "model": self.model,
            "port": self.port,
            "board": h.board,
            "clock_hz": h.clock_hz,
            "clock_source": h.clock_source,
            "ms_basis": self.clock_basis[1],  # what "ms" rests on, or why it is null
            "timer": h.timer,
            "emulated": self.emulated,
            "model_sha256": h.model_sha256,
            "bit_exact": self.ok,
            "reference": self.reference,
            "layer_kinds": self.layer_kinds,  # with --layers: each layer's operator, in order
            "inputs": [
                {
                    "index": r.index,
                    "ok": r.ok,
                    "status": r.status,
                    "cycles": r.cycles,
                    "ms": self.ms(r.cycles),
                    "mismatches": r.mismatches,
                    "layer_cycles": r.layer_cycles,
                }
                for r in self.results
            ],
            "notes": self.notes,
        }


# Clock sources the firmware reports (tc_board_clock_source) and what milliseconds at them rest
# on: a crystal (or a loop locked to one), a factory-trimmed RC oscillator (its data sheet's
# accuracy), or nothing known (no milliseconds).
CRYSTAL_SOURCES = {"pll_hse", "hse", "pll", "xosc", "hfxo", "dfll"}
RC_SOURCES = {
    "hsi": "the RC oscillator HSI, +-1%",
    "pll_hsi": "a PLL on the RC oscillator HSI, +-1%",
    "csi": "the RC oscillator CSI, a few %",
    "pll_csi": "a PLL on the RC oscillator CSI, a few %",
    "osc8m": "the RC oscillator OSC8M, +-2%",
    "hfint": "the RC oscillator HFINT, +-1.5%",
    "dfll_open": "the DFLL48M in open loop at its factory calibration, a few %",
}
UNKNOWN_SOURCES = {
    "rosc": "the clock is the ring oscillator (1.8-12 MHz on the RP2040), not yet measured: the"
    " firmware measures it against the host's zero bytes before it receives",
}
# The RP2040's ring oscillator as its console measured it (tc_uart_rp2040.c): low pulses of 9 bit
# times, each timed to one poll of the RX pin (about 5 core cycles; 6 taken as the bound).
POLL_CYCLES = 6


def clock_basis(h: Hello, emulated: bool, baud: int = 115200) -> tuple[bool, str]:
    """(milliseconds can be given, what they rest on or why not) for a board's handshake."""
    if emulated:
        return False, "the board is emulated (QEMU): its ticks are emulated time, not the part's"
    src = h.clock_source
    if src == "rosc_baud" and h.clock_hz:
        pct = 100 * POLL_CYCLES * baud / (9 * h.clock_hz)
        return True, (
            f"the ring oscillator, measured at the handshake against the host's bit timing, "
            f"+-{pct:.1f}% (one {POLL_CYCLES}-cycle poll in 9 bits at {baud} baud); it drifts "
            "with temperature and supply"
        )
    if src in CRYSTAL_SOURCES:
        return True, f"{src}: the board's crystal"
    if src in RC_SOURCES:
        return True, RC_SOURCES[src]
    if src in UNKNOWN_SOURCES:
        return False, UNKNOWN_SOURCES[src]
    if src == "fixed":
        return True, "the board file's fixed clock"
    return False, f"the firmware names no known clock source ({src or 'none'})"


def check_hello(h: Hello, g: Graph, model: str, board: str) -> None:
    """Refuse a board that runs another model or is another board (DeviceError)."""
    if h.model_sha256 != g.sha256:
        raise DeviceError(
            f"the board runs model {h.model_sha256[:16]}, not {model} {g.sha256[:16]}: "
            "flash its build first"
        )
    if h.board != board:
        raise DeviceError(f"the port's firmware is built for board {h.board}, not {board}")
    want_in = tuple(g.t(t).nbytes for t in g.inputs)
    want_out = tuple(g.t(t).nbytes for t in g.outputs)
    if (h.input_bytes, h.output_bytes) != (want_in, want_out):
        raise DeviceError(
            f"the firmware's tensors ({h.input_bytes} in, {h.output_bytes} out) are not the "
            f"model's ({want_in} in, {want_out} out)"
        )


# The least reply deadline on an emulated board: QEMU (-icount) runs the firmware at whatever
# pace the host allows; on a machine with both cores busy a 1 s deadline was seen to expire.
EMULATED_REPLY_S = 5.0


def validate(
    model: str | Path,
    board: str,
    port: str,
    *,
    inputs: list[np.ndarray] | UserInputs | None = None,
    n: int = 20,
    seed: int = 0,
    layers: bool = False,
    emulated: bool = False,
    machine: str = "",
    timeout_s: float = 1.0,
    invoke_timeout_s: float = 60.0,
    connect_s: float = 10.0,
    on_hello: Callable[[Hello], None] | None = None,
    on_result: Callable[[ValidateReport, InputResult], None] | None = None,
    stream: str | int = "auto",
    speed: int | None = 0,
    timeout_factor: float = 1.0,
) -> ValidateReport:
    """Validate the firmware on `port` against TFLM (the ONNX reference for an .onnx model,
    ``run.onnx_reference``) for `model`
    (inputs: batch on axis 0). The first handshake may take up to `connect_s` seconds (a board
    just reset is still busy with its start-up report). ``stream``, ``speed``: the planner's
    options the firmware was built with (they give its layers' order and kinds). Every deadline
    (`timeout_s` plus the link time of what is sent and received, `connect_s`,
    `invoke_timeout_s`) is multiplied by `timeout_factor`; an emulated board's replies get at
    least EMULATED_REPLY_S (QEMU runs the firmware at the host's pace)."""
    onnx_model = is_onnx_model(model)
    if not onnx_model:
        require_reference()
    b = get_board(board)
    if b.uart is None:
        raise CompileError(f"board {b.name} has no console UART to validate over")
    g = load_model(model)
    given = inputs.model if isinstance(inputs, UserInputs) else None  # the file's view
    if isinstance(inputs, UserInputs):
        inputs = inputs.arrays
    xs = inputs if inputs is not None else make_inputs(g, n, seed)
    if onnx_model:
        ref = run_onnx_reference(model, xs, g, model_inputs=given)
    else:
        ref = run_tflm(model, xs, n_outputs=len(g.outputs))
    if emulated:
        timeout_s = max(timeout_s, EMULATED_REPLY_S)
    with Port(port, b.uart.baud, timeout_s=timeout_s) as p:
        dev = Device(
            p,
            timeout_s=timeout_s,
            invoke_timeout_s=invoke_timeout_s,
            byte_s=10.0 / b.uart.baud,
            factor=timeout_factor,
        )
        dev.resync()
        h = dev.hello(connect_s)
        check_hello(h, g, str(model), b.name)
        if on_hello is not None:
            on_hello(h)
        report = ValidateReport(
            str(model), port, h, [], emulated=emulated, machine=machine, baud=b.uart.baud
        )
        report.reference = ONNX_REFERENCE if onnx_model else "TFLM"
        report.notes += _timer_notes(h, b.timer, emulated)
        if layers:
            report.layer_kinds = _layer_kinds(g, b.name, stream, speed)  # (plans a copy)
            if not h.layer_cycles:
                report.notes.append("the firmware is no profile build: no per-layer cycles")
        dev.reset_state()  # the start-up report's inference moved a stateful model's state
        for s in range(samples.count(g.t(g.inputs[0]), xs[0])):
            for i, (x, tid) in enumerate(zip(xs, g.inputs, strict=True)):
                dev.set_input(i, np.ascontiguousarray(samples.sample(g.t(tid), x, s)).tobytes())
            status, cycles = dev.invoke()
            r = InputResult(s, cycles, status)
            for j, tid in enumerate(g.outputs):
                t = g.t(tid)
                want = samples.sample(t, ref.outputs[j], s)
                got = np.frombuffer(dev.get_output(j, h.output_bytes[j]), NP_DTYPES[t.dtype])
                nb, d = diff(got.reshape(want.shape), want)
                if nb:
                    r.mismatches.append(
                        {
                            "output": j,
                            "name": _plain(t.name),
                            "bytes": nb,
                            "of": t.nbytes,
                            "max_abs_diff": d,
                        }  # fmt: skip
                    )
            if layers and h.layer_cycles:
                r.layer_cycles = dev.get_layers(h.layers)
            report.results.append(r)
            if on_result is not None:
                on_result(report, r)
    return report


def _plain(text: str) -> str:
    """A model-supplied name fit for a terminal line (printable ASCII, at most 40 chars)."""
    return re.sub(r"[^\x20-\x7e]", "?", text)[:40]


def _timer_notes(h: Hello, board_timer: str, emulated: bool) -> list[str]:
    notes = []
    if emulated:
        notes.append(
            "the board is emulated (QEMU, -icount): counts are timer ticks of emulated time, "
            "deterministic but not the part's cycles, and the times assume its clock"
        )
    if board_timer == "dwt" and h.timer != "dwt":
        notes.append(
            "the DWT cycle counter did not count (QEMU models none): counts are SysTick ticks"
        )
    return notes


def _layer_kinds(g: Graph, board: str, stream: str | int, speed: int | None) -> list[str]:
    """The operator of every layer, in the firmware's order (the plan's for ``board``)."""
    from ..fit import plan_for

    p = plan_for(load_model(g.source) if g.source else g, board, stream=stream, speed=speed)
    return [p.lowering.ops[i].op.kind for i in p.order]
