"""Flashing through the board's debug probe with OpenOCD (Debian's `openocd` package, its own
board and target scripts named by the board file's ``[probe] openocd``): OpenOCD's ``program``
command erases, writes, verifies (``verify``: its read-back or CRC) and, unless ``--no-go``,
resets the part into the new firmware (``reset``), then exits.

Exit 3 (DeviceError) when no probe answers or OpenOCD reports an error; its own last error
lines are quoted. A script OpenOCD cannot find is the board file's fault (exit 2).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from .. import procs
from ..boards import Board
from ..errors import CompileError, DeviceError
from .common import FlashOptions, kib, say
from .image import Image, ihex, vectors
from .tools import find_tool

_NO_PROBE = (
    "open failed",
    "no device found",
    "unable to open",
    "could not find",
    "no cmsis-dap device",
    "no j-link device",
    "error connecting dp",
)


def openocd_command(openocd: str, board: Board, hexfile: Path, go: bool) -> list[str]:
    """OpenOCD's command line: the probe's scripts and commands, then one ``program``."""
    if board.probe is None or not board.probe.openocd:
        raise CompileError(f"board {board.name} names no OpenOCD scripts ([probe] openocd)")
    path = str(hexfile.resolve())
    if any(c in path for c in '"{}[]$;\\ '):
        raise CompileError(f"{path}: OpenOCD cannot be given this path")
    program = f"program {path} verify{' reset' if go else ''} exit"
    return [openocd, *board.probe.openocd_args(), "-c", program]


def flash_openocd(board: Board, image: Image, opts: FlashOptions) -> None:
    """Program ``image`` with OpenOCD through the board's probe; DeviceError on failure."""
    openocd = find_tool("openocd")
    _, pc = vectors(image)
    with tempfile.TemporaryDirectory(prefix="tc_openocd_") as td:
        hexf = Path(td) / "image.hex"
        hexf.write_text(ihex(image, pc), encoding="ascii")
        cmd = openocd_command(openocd, board, hexf, opts.go)
        say(f"openocd {' '.join(cmd[1:-2])}")
        timeout = opts.timeouts.erase(len(image.data)) + 10.0
        try:
            r = procs.run(cmd, timeout_s=timeout, text=True)
        except subprocess.TimeoutExpired:
            raise DeviceError(f"OpenOCD did not finish within {timeout:g} s") from None
    out = (r.stdout or "") + (r.stderr or "")
    errors = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("Error")]
    if r.returncode == 0 and "Verified OK" in out:
        say(f"done   {kib(len(image.data))} at {image.address:#010x}, verified by OpenOCD")
        return
    lowered = out.lower()
    if "can't find" in lowered and ".cfg" in lowered:
        raise CompileError(
            f"board {board.name}: OpenOCD has no script {_missing(out)} ([probe] openocd)"
        )
    last = "; ".join(errors[-2:]) or f"exit status {r.returncode}"
    if any(k in lowered for k in _NO_PROBE):
        raise DeviceError(f"OpenOCD found no probe for board {board.name} (plugged in?): {last}")
    raise DeviceError(f"OpenOCD failed on board {board.name}: {last}")


def _missing(out: str) -> str:
    for ln in out.splitlines():
        if "Can't find" in ln:
            return ln.split("Can't find", 1)[1].strip()
    return "(unnamed)"
