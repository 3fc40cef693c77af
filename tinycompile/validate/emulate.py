"""QEMU as the board: a real-board build on the QEMU model of its chip, its console UART on a
pseudo-terminal that `tinycompile validate --port` (or any serial tool) opens.

Only boards whose file names an ``emulator.board_machine`` (stm32f407 on netduinoplus2, whose
USART2 is QEMU's second serial port; the qemu-m* boards on mps2). QEMU runs under ``-icount``,
so counts are deterministic, but they are ticks of emulated time, not the part's cycles. QEMU
is a tracked child (tinycompile/procs.py): stopped when the block ends, however it ends.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import procs
from ..boards import Board, get_board
from ..errors import CompileError, DeviceError, ToolchainError
from ..frontend import load_model
from ..run.emulator import ICOUNT_SHIFT, QEMU, QEMU_HINT
from .session import ValidateReport, validate

_PTY = re.compile(r"char device redirected to (\S+) \(label serial(\d+)\)")


@dataclass(frozen=True)
class EmulatedBoard:
    """A running QEMU: its console's pty and the machine it emulates."""

    pty: str
    machine: str
    board: Board
    proc: subprocess.Popen[bytes]


def board_elf(build_dir: str | Path, board: str | None = None) -> tuple[Board, Path]:
    """The real-board firmware ELF of a `tinycompile build` folder (and its board).

    Without `board`, the folder's one board build is taken."""
    root = Path(build_dir)
    if board is not None:
        b = get_board(board)
        elf = root / "build" / f"{b.name}-board" / "firmware.elf"
        if not elf.is_file():
            raise CompileError(
                f"{root}: no {b.name} board firmware (build/{b.name}-board/firmware.elf); "
                f"build it with `tinycompile build MODEL --board {b.name} -o {root}`"
            )
        return b, elf
    found = sorted((root / "build").glob("*-board/firmware.elf"))
    if len(found) != 1:
        what = "no board firmware" if not found else f"{len(found)} board firmwares"
        raise CompileError(f"{root}: {what} under build/*-board/: give --board")
    return get_board(found[0].parent.name.removesuffix("-board")), found[0]


# Seconds an emulated board may take to answer its first handshake: QEMU (-icount) runs the
# start-up report's inference first, a DS-CNN's ten million instructions on a loaded machine.
EMULATED_CONNECT_S = 300.0


def pty_command(board: Board, elf: Path | None, gdb_port: int | None = None) -> list[str]:
    """qemu-system-arm running `elf` on the board's own chip, its console on a new pty. With
    ``gdb_port``: halted at reset, its gdbstub on 127.0.0.1:gdb_port (a board with a debug
    probe, for `flash --method gdb`); without `elf` the chip's flash is empty."""
    emu = board.emulator
    if emu is None or emu.board_machine is None:
        raise CompileError(
            f"board {board.name} has no QEMU model of its own chip (emulator.board_machine): "
            "it cannot be emulated for validate"
        )
    qemu = shutil.which(QEMU)
    if qemu is None:
        raise ToolchainError(f"{QEMU} not found on PATH: {QEMU_HINT}")
    cmd = [qemu, "-M", emu.board_machine, "-display", "none", "-monitor", "none"]
    for i in range(emu.board_serial + 1):
        cmd += ["-serial", "pty" if i == emu.board_serial else "null"]
    cmd += ["-icount", f"shift={ICOUNT_SHIFT}"]
    if gdb_port is not None:
        cmd += ["-S", "-gdb", f"tcp:127.0.0.1:{gdb_port}"]
    return cmd + ([] if elf is None else ["-kernel", str(Path(elf).resolve())])


@contextmanager
def emulated_board(
    board: Board | str,
    elf: str | Path | None,
    *,
    timeout_s: float = 10.0,
    gdb_port: int | None = None,
) -> Iterator[EmulatedBoard]:
    """Start QEMU on `elf` with the console on a pty; yield it once QEMU named the pty.
    ``gdb_port``: halted, with a GDB server there (`pty_command`)."""
    b = get_board(board)
    cmd = pty_command(b, None if elf is None else Path(elf), gdb_port)
    serial = b.emulator.board_serial if b.emulator else 0
    with tempfile.TemporaryFile() as log:  # QEMU's messages (the pty's name among them)
        with procs.spawn(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log) as proc:
            pty = _wait_for_pty(proc, log, serial, timeout_s)
            assert b.emulator is not None and b.emulator.board_machine is not None
            yield EmulatedBoard(pty, b.emulator.board_machine, b, proc)


def _wait_for_pty(proc: subprocess.Popen[bytes], log, serial: int, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
        for path, label in _PTY.findall(text):
            if int(label) == serial:
                return path
        if proc.poll() is not None:
            last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "no message")
            raise DeviceError(f"QEMU stopped at start-up (status {proc.returncode}): {last}")
        time.sleep(0.05)
    raise DeviceError(f"QEMU named no pty for its console within {timeout_s:g} s")


def validate_on_emulator(model: str | Path, board: str, **kw: Any) -> ValidateReport:
    """Build `model`'s real-board firmware for `board` in a temporary folder (planned with the
    keywords ``stream`` and ``speed``, as `build` plans it), run it in QEMU with its console on
    a pty and validate it there (`validate`'s keywords)."""
    from ..fit import plan_for
    from ..run.board import build_board

    b = get_board(board)
    pty_command(b, Path(model))  # refuse a board QEMU cannot run before building anything
    with tempfile.TemporaryDirectory(prefix="tc_validate_") as td:
        p = plan_for(
            load_model(model),
            b.name,
            stream=kw.get("stream", "auto"),
            speed=kw.get("speed", 0),
        )
        fw = build_board(p, b.name, Path(td) / "project").firmware
        with emulated_board(b, fw.elf) as emu:
            # the emulated board starts with its start-up inference, slow under -icount
            kw.setdefault("connect_s", EMULATED_CONNECT_S)
            return validate(model, b.name, emu.pty, emulated=True, machine=emu.machine, **kw)
