"""What `tinycompile validate` and `tinycompile emulate` print (tinycompile/cli/ parses and
delegates)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ..boards import get_board
from ..errors import DeviceError
from ..frontend import load_model
from ..run.files import load_inputs
from ..run.inputs import user_inputs
from .emulate import board_elf, emulated_board, validate_on_emulator
from .protocol import Hello
from .session import InputResult, ValidateReport, validate


def validate_command(
    model: str,
    board: str,
    port: str,
    *,
    inputs_file: str | None,
    n: int,
    seed: int,
    layers: bool,
    timeout_s: float,
    as_json: bool,
    connect_s: float | None = None,
    stream: str | int = "auto",
    speed: int | None = 0,
    timeout_factor: float = 1.0,
) -> bool:
    """Validate and print a line per input and a summary (or one JSON object); True: all match.
    ``stream``, ``speed``: the planner's options the firmware was built with."""
    xs = None
    notes: list[str] = []
    if inputs_file:
        xs = user_inputs(load_model(model), load_inputs(inputs_file))
        notes = xs.notes
        for w in xs.warnings:
            print(f"warning: {w}", file=sys.stderr)
    for note in notes if not as_json else []:
        print(f"note: {note}")

    def on_hello(h: Hello) -> None:
        if not as_json:
            print(
                f"{h.board} on {port}: model {h.model_sha256[:16]} ({Path(model).name}),"
                f" {h.clock_hz / 1e6:g} MHz ({h.clock_source or 'source not named'}),"
                f" timer {h.timer}"
            )

    def on_result(rep: ValidateReport, r: InputResult) -> None:
        if not as_json:
            print(rep.line(r), flush=True)

    kw = {
        "inputs": xs,
        "n": n,
        "seed": seed,
        "layers": layers,
        "invoke_timeout_s": timeout_s,
        "on_hello": on_hello,
        "on_result": on_result,
        "stream": stream,
        "speed": speed,
        "timeout_factor": timeout_factor,
    }
    if connect_s is not None:
        kw["connect_s"] = connect_s
    if port == "qemu":
        rep = validate_on_emulator(model, board, **kw)
    else:
        rep = validate(model, board, port, **kw)
    if as_json:
        print(json.dumps(rep.as_dict() | {"notes": notes + rep.notes}, indent=1))
    else:
        print(rep.summary())
    return rep.ok


def emulate_command(build_dir: str | None, board: str | None, gdb: int | None = None) -> None:
    """Run a build's board firmware (or, with ``gdb`` and no build, an empty chip) in QEMU on a
    pty until QEMU stops or Ctrl-C (the CLI's signal handler raises KeyboardInterrupt, which
    stops QEMU). With ``gdb`` QEMU starts halted, its gdbstub on localhost:``gdb``."""
    if build_dir is None:
        assert board is not None
        b, elf = get_board(board), None
    else:
        b, elf = board_elf(build_dir, board)
    with emulated_board(b, elf, gdb_port=gdb) as emu:
        what = "empty" if elf is None else "firmware"
        print(f"{b.name} {what} on QEMU {emu.machine}: console on {emu.pty} (Ctrl-C stops it)")
        if gdb is not None:
            print(
                f"halted; GDB server on localhost:{gdb}: tinycompile flash BUILD --board {b.name}"
                f" --method gdb --port localhost:{gdb}"
            )
        print(
            f"validate it with: tinycompile validate MODEL --board {b.name} --port {emu.pty}",
            flush=True,
        )
        while emu.proc.poll() is None:
            time.sleep(0.25)
        code = emu.proc.returncode
    raise DeviceError(f"QEMU stopped (status {code})")
