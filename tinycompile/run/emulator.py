"""Run firmware in QEMU (qemu-system-arm).

- `run_emulator`: an *emulator* build (semihosting) on its board's mps2 machine, in `workdir`
  (which holds tc_in.bin; the firmware writes tc_out.bin there). Runs under ``-icount shift=7``:
  every guest instruction advances virtual time by 128 ns and SysTick (25 MHz on mps2) follows
  virtual time, so tick counts are deterministic and convert exactly to instructions
  (3.2 ticks per instruction; `ticks_to_instructions`).
- `run_board_firmware`: a *board* build on the QEMU model of its chip, when the board file names
  one (``emulator.board_machine``: netduinoplus2 for the STM32F407, the mps2 machines for the
  qemu-m* boards), capturing the console UART text (`parse_board_report` reads it).

QEMU is a tracked child (tinycompile/procs.py): an interruption or exception stops it. Long
emulator runs show "inputs done/total" on a terminal (from tc_out.bin growing).

Failures are RunError with one clear line: a timeout ('timed out after N s'), a hard fault
(with the faulting PC and fault status/address registers the firmware printed), or the runner's
own status (3: a file could not be opened, 4: tc_in.bin too short). Status 5 (a layer refused
its input, as TFLM's Invoke fails; "tc-refused: ..." on stderr) is a result, not a failure.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import procs
from ..boards import EMULATOR_MACHINES
from ..build import FirmwareBuild
from ..errors import CompileError, RunError, ToolchainError
from .outformat import COUNT, EXIT_NO_FILE, EXIT_REFUSED, EXIT_SHORT_INPUT, sample_count

QEMU = "qemu-system-arm"
ICOUNT_SHIFT = 7
QEMU_HINT = "install QEMU's Arm system emulator (Debian/Ubuntu: apt install qemu-system-arm)"
EXIT_FAULT = 70  # TC_EXIT_FAULT in firmware/boards/include/tc_board_io.h

_FACT = re.compile(r"^tc-(timer|stack|heap): (.*)$")
_FAULT = re.compile(r"tc-fault: (.*)")


def ticks_per_instruction(machine: str, shift: int = ICOUNT_SHIFT) -> float:
    """SysTick ticks per guest instruction on `machine` under ``-icount shift``."""
    if machine not in EMULATOR_MACHINES:
        raise CompileError(f"unknown emulator machine {machine!r}")
    return EMULATOR_MACHINES[machine]["systick_hz"] * (1 << shift) * 1e-9


def ticks_to_instructions(
    ticks: int, machine: str = "mps2-an385", *, overhead_ticks: int = 0, shift: int = ICOUNT_SHIFT
) -> int:
    """Instructions executed in a measured region from its SysTick ticks under QEMU -icount.

    Exact (the tick count of n instructions is within one tick of n * 3.2 on mps2). The count
    includes every instruction the core ran, so also the SysTick wrap handler (5 instructions
    once per 2^24 ticks, about every 5.2 million instructions). `overhead_ticks` (the empty
    region's cost, as the emulator prints it) is converted and subtracted.
    """
    tpi = ticks_per_instruction(machine, shift)
    return round(ticks / tpi) - (round(overhead_ticks / tpi) if overhead_ticks else 0)


@dataclass(frozen=True)
class EmulatorResult:
    """An emulator run: exit status, consoles, tc_out.bin, and facts the firmware printed."""

    returncode: int
    output: bytes
    stdout: str
    stderr: str
    workdir: Path
    machine: str
    elapsed_s: float
    timer_overhead_ticks: int | None = None
    stack_used: int | None = None
    stack_reserve: int | None = None
    heap_used: int | None = None

    @property
    def ticks_per_instruction(self) -> float:
        return ticks_per_instruction(self.machine)

    def instructions(self, ticks: int, *, subtract_overhead: bool = False) -> int:
        """Convert a tick count from tc_out.bin to guest instructions."""
        over = (self.timer_overhead_ticks or 0) if subtract_overhead else 0
        return ticks_to_instructions(ticks, self.machine, overhead_ticks=over)


def _qemu() -> str:
    path = shutil.which(QEMU)
    if path is None:
        raise ToolchainError(f"{QEMU} not found on PATH: {QEMU_HINT}")
    return path


def _fault_error(text: str) -> RunError | None:
    m = _FAULT.search(text)
    if not m:
        return None
    fields = dict(re.findall(r"(\w+)=(0x[0-9a-fA-F]+)", m.group(1)))
    if "pc" in fields:
        detail = ", ".join(f"{k}={v}" for k, v in fields.items() if k != "pc")
        return RunError(f"firmware hard fault at pc={fields['pc']} ({detail})")
    return RunError(f"firmware fault: {m.group(1).strip()}")


def qemu_command(build: FirmwareBuild, *, board_machine: bool = False) -> list[str]:
    """The qemu-system-arm command line that runs `build` (the ELF path is absolute)."""
    emu = build.board.emulator
    assert emu is not None
    cmd = [_qemu()]
    if board_machine:
        if emu.board_machine is None:
            raise CompileError(
                f"board {build.board.name} has no QEMU model of its own chip "
                "(emulator.board_machine); run its emulator build instead"
            )
        cmd += ["-M", emu.board_machine, "-display", "none", "-monitor", "none"]
        for i in range(emu.board_serial + 1):
            cmd += ["-serial", "stdio" if i == emu.board_serial else "null"]
    else:
        cmd += ["-M", emu.machine, "-nographic", "-semihosting-config", "enable=on,target=native"]
        if emu.qemu_cpu:
            cmd += ["-cpu", emu.qemu_cpu]
    cmd += ["-icount", f"shift={ICOUNT_SHIFT}", "-kernel", str(build.elf)]
    return cmd


def run_emulator(
    build: FirmwareBuild,
    workdir: str | Path,
    *,
    timeout_s: float = 60.0,
    sample_bytes: int | None = None,
) -> EmulatorResult:
    """Run an emulator build in QEMU with cwd=`workdir` (holding tc_in.bin); return tc_out.bin.

    `sample_bytes` (tc_out.bin bytes per input) enables the progress line of long runs.
    Raises RunError on timeout (the process is killed), hard fault, or a runner failure.
    """
    if build.variant != "emulator":
        raise CompileError(f"run_emulator needs an emulator build, got a {build.variant} build")
    wd = Path(workdir).resolve()
    if not (wd / "tc_in.bin").is_file():
        raise RunError(f"{wd}: no tc_in.bin to run on")
    out_path = wd / "tc_out.bin"
    out_path.unlink(missing_ok=True)
    cmd = qemu_command(build)
    progress = procs.Progress(_sample_count(wd / "tc_in.bin"))
    poll = procs.file_progress(progress, out_path, sample_bytes) if sample_bytes else None
    start = time.monotonic()
    try:
        r = procs.run(cmd, cwd=wd, timeout_s=timeout_s, poll=poll)
    except subprocess.TimeoutExpired:
        raise RunError(
            f"{build.board.name} emulator run timed out after {timeout_s:g} s (firmware hung?)"
        ) from None
    finally:
        progress.close()
    elapsed = time.monotonic() - start
    out_b, err_b = r.stdout, r.stderr
    stdout = out_b.decode("utf-8", "replace")
    stderr = err_b.decode("utf-8", "replace")
    facts: dict[str, int] = {}
    for line in stderr.splitlines():
        m = _FACT.match(line.strip())
        if m:
            for k, v in re.findall(r"([\w-]+)=(\d+)", m.group(2)):
                facts[f"{m.group(1)}.{k}"] = int(v)
    rc = r.returncode
    fault = _fault_error(stderr)
    if fault is not None:
        raise fault
    if rc == EXIT_FAULT:
        raise RunError(f"firmware fault (status {EXIT_FAULT}) without a report")
    if rc == EXIT_NO_FILE:
        raise RunError(f"firmware could not open tc_in.bin or tc_out.bin in {wd} (status 3)")
    if rc == EXIT_SHORT_INPUT:
        raise RunError(
            "firmware hit the end of tc_in.bin early: its size does not match the "
            "model's inputs (status 4)"
        )
    if rc not in (0, EXIT_REFUSED):
        last = next((ln for ln in reversed((stderr + stdout).splitlines()) if ln.strip()), "")
        raise RunError(
            f"QEMU/firmware exited with status {rc}" + (f": {last.strip()}" if last else "")
        )
    if not out_path.is_file():
        raise RunError(f"firmware exited {rc} but wrote no tc_out.bin in {wd}")
    assert build.board.emulator is not None
    return EmulatorResult(
        returncode=rc,
        output=out_path.read_bytes(),
        stdout=stdout,
        stderr=stderr,
        workdir=wd,
        machine=build.board.emulator.machine,
        elapsed_s=elapsed,
        timer_overhead_ticks=facts.get("timer.overhead-ticks"),
        stack_used=facts.get("stack.used"),
        stack_reserve=facts.get("stack.reserve"),
        heap_used=facts.get("heap.used"),
    )


def _sample_count(tc_in: Path) -> int:
    """The sample count tc_in.bin starts with (``outformat``)."""
    with tc_in.open("rb") as f:
        return sample_count(f.read(COUNT.size))


@dataclass(frozen=True)
class BoardReport:
    """What a real-board firmware printed (see firmware/boards/common/tc_main_board.c)."""

    board: str
    clock_hz: int  # the clock the firmware really runs at (after its fallbacks)
    timer: str
    inputs_given: bool
    outputs: list[bytes]
    total_ticks: int
    layer_ticks: list[int] = field(default_factory=list)
    layer_crc32: list[int] = field(default_factory=list)
    stack_used: int | None = None
    stack_reserve: int | None = None
    text: str = ""
    clock_source: str = ""  # pll, hse, hsi, dfll, osc8m, ... ('' from a firmware not saying)

    def ticks_to_ms(self, ticks: int) -> float:
        """Core-clock ticks to milliseconds at the clock the firmware reported."""
        if self.clock_hz <= 0:
            raise RunError("the board report gives no clock_hz")
        return ticks * 1000.0 / self.clock_hz


def parse_board_report(text: str) -> BoardReport:
    """Parse the console text of a real-board firmware run (raises RunError if incomplete)."""
    fault = _fault_error(text)
    if fault is not None:
        raise fault
    lines = [ln.strip() for ln in text.replace("\r", "").splitlines()]
    begin = next((ln for ln in lines if ln.startswith("tc-begin ")), None)
    if begin is None or "tc-end" not in lines:
        raise RunError("board firmware output incomplete (no tc-begin ... tc-end)")
    kv = dict(re.findall(r"(\w+)=(\S+)", begin))
    outputs: dict[int, bytes] = {}
    layers: dict[int, tuple[int, int | None]] = {}
    total = 0
    stack: tuple[int | None, int | None] = (None, None)
    for ln in lines:
        if ln.startswith("tc-out "):
            _, idx, hexdata = (ln.split() + [""])[:3]
            outputs[int(idx)] = bytes.fromhex(hexdata)
        elif ln.startswith("tc-layer "):
            parts = ln.split()
            f = dict(re.findall(r"(\w+)=(\w+)", ln))
            crc = int(f["crc32"], 16) if "crc32" in f else None
            layers[int(parts[1])] = (int(f["ticks"]), crc)
        elif ln.startswith("tc-total "):
            total = int(dict(re.findall(r"(\w+)=(\d+)", ln))["ticks"])
        elif ln.startswith("tc-stack "):
            f = dict(re.findall(r"(\w+)=(\d+)", ln))
            stack = (int(f["used"]), int(f["reserve"]))
    order = sorted(layers)
    return BoardReport(
        board=kv.get("board", ""),
        clock_hz=int(kv.get("clock_hz", "0")),
        timer=kv.get("timer", ""),
        inputs_given=kv.get("inputs") == "given",
        outputs=[outputs[i] for i in sorted(outputs)],
        total_ticks=total,
        layer_ticks=[layers[i][0] for i in order],
        layer_crc32=[c for i in order if (c := layers[i][1]) is not None],
        stack_used=stack[0],
        stack_reserve=stack[1],
        text=text,
        clock_source=kv.get("clock", ""),
    )


def run_board_firmware(build: FirmwareBuild, *, timeout_s: float = 30.0) -> BoardReport:
    """Run a board build on the QEMU model of its chip and parse its console report.

    Only for boards whose file names an ``emulator.board_machine``. The firmware sleeps after
    printing ``tc-end``; QEMU is stopped then.
    """
    if build.variant != "board":
        raise CompileError(f"run_board_firmware needs a board build, got {build.variant}")
    cmd = qemu_command(build, board_machine=True)
    chunks: list[bytes] = []
    done = threading.Event()
    pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with procs.spawn(cmd, **pipes) as proc:  # QEMU is stopped when the block ends

        def reader() -> None:
            assert proc.stdout is not None
            for line in iter(proc.stdout.readline, b""):
                chunks.append(line)
                if line.strip() == b"tc-end" or b"tc-fault" in line:
                    done.set()
                    return
            done.set()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        finished = done.wait(timeout_s)
    t.join(timeout=5)
    text = b"".join(chunks).decode("utf-8", "replace")
    if not finished:
        raise RunError(
            f"{build.board.name} board firmware timed out after {timeout_s:g} s "
            "(no tc-end on its console)"
        )
    if "tc-end" not in text and "tc-fault" not in text:
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        last = next((ln for ln in reversed(err.splitlines()) if ln.strip()), "")
        raise RunError(f"QEMU stopped before the firmware finished: {last or 'no output'}")
    return parse_board_report(text)
