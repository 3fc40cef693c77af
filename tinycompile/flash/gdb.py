"""Flashing through a GDB server: any probe's (OpenOCD's and pyOCD's on 3333, ST-LINK_gdbserver,
J-Link's GDB server) or QEMU's gdbstub (`tinycompile emulate --gdb`).

GDB for ARM (gdb-multiarch or arm-none-eabi-gdb: flash/tools.py) is driven through its machine
interface (GDB/MI), one command at a time, each with its own deadline:
``target extended-remote HOST:PORT``; ``load`` of the image written as Intel hex (the server
programs flash through the memory map it gave GDB, as for any ``load``); the image read back
(``dump binary memory``) and compared byte for byte here; then, unless ``--no-go``, SP and PC
set from the image's vector table and ``detach``, which lets the part run the new firmware from
its reset handler. No ``monitor reset``: its spelling differs by server (``reset run``,
``reset``, ``system_reset``), and the firmware's start-up sets up what it uses from any state
(clocks already running, VTOR, its console UART reset). A failed verify leaves the part halted
(``disconnect``) and exits 3.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue

from .. import procs
from ..boards import Board
from ..errors import DeviceError
from .common import FlashOptions, kib, say
from .image import Image, ihex, vectors
from .tools import find_tool

DEFAULT_HOST = "localhost"
_RESULT = re.compile(r"^(\d+)\^(done|connected|running|error|exit)(?:,(.*))?$")
_MSG = re.compile(r'msg="((?:[^"\\]|\\.)*)"')


def server_address(board: Board, port: str | None) -> tuple[str, int]:
    """HOST:PORT of the GDB server (``--port``; a bare number is a port on localhost; default
    localhost and the board's probe.gdb_port)."""
    default = board.probe.gdb_port if board.probe else 3333
    if not port:
        return DEFAULT_HOST, default
    host, sep, num = port.rpartition(":")
    if not sep:
        host, num = DEFAULT_HOST, port
    ok_host = re.fullmatch(r"[\w.\-\[\]:]*", host) is not None
    if not num.isdigit() or not 1 <= int(num) <= 65535 or not ok_host:
        raise DeviceError(f"--port {port!r}: expected HOST:PORT of a GDB server (localhost:3333)")
    return host or DEFAULT_HOST, int(num)


class MiSession:
    """GDB running under ``--interpreter=mi2``: `command` sends one MI command and returns its
    result record's payload, raising DeviceError on ``^error`` or when no result comes in time."""

    def __init__(self, gdb: str) -> None:
        self.proc = procs.start(
            [gdb, "-q", "-nx", "--interpreter=mi2"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: Queue[str | None] = Queue()
        self.console: list[str] = []  # GDB's ~"..." stream of the current command
        self.token = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def command(self, cmd: str, timeout_s: float, what: str) -> str:
        self.token += 1
        self.console = []
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{self.token}{cmd}\n")
            self.proc.stdin.flush()
        except OSError:
            raise DeviceError(f"{what}: GDB stopped") from None
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except Empty:
                raise DeviceError(f"{what}: no answer within {timeout_s:g} s") from None
            if line is None:
                raise DeviceError(f"{what}: GDB stopped (status {self.proc.wait()})")
            if line.startswith('~"'):
                self.console.append(_unquote(line[1:]))
                continue
            m = _RESULT.match(line)
            if m is None or int(m.group(1)) != self.token:
                continue
            if m.group(2) == "error":
                msg = _MSG.search(m.group(3) or "")
                raise DeviceError(f"{what}: {_unquote(msg.group(0)[4:]) if msg else line}")
            return m.group(3) or ""

    def close(self) -> None:
        try:
            if self.proc.poll() is None and self.proc.stdin is not None:
                self.proc.stdin.write("-gdb-exit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=2.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            procs.stop(self.proc)
            procs.release(self.proc)


def _unquote(s: str) -> str:
    """An MI C string's text."""
    body = s[1:-1] if len(s) >= 2 and s[0] == '"' and s[-1] == '"' else s
    return body.encode("latin-1", "replace").decode("unicode_escape", "replace").strip()


def flash_gdb(board: Board, image: Image, opts: FlashOptions) -> None:
    """Load, read back and compare, and (``opts.go``) start ``image`` through a GDB server."""
    gdb = find_tool("gdb")
    host, port = server_address(board, opts.port)
    sp, pc = vectors(image)
    t = opts.timeouts
    size_s = t.erase(len(image.data))  # programming and read-back scale with the bytes
    with tempfile.TemporaryDirectory(prefix="tc_gdb_") as td:
        hexf, back = Path(td) / "image.hex", Path(td) / "readback.bin"
        hexf.write_text(ihex(image, pc), encoding="ascii")
        mi = MiSession(gdb)
        try:
            mi.command("-gdb-set confirm off", 10.0, "gdb")
            mi.command("-gdb-set architecture arm", 10.0, "gdb")
            mi.command(f"-file-exec-file {_mi_path(hexf)}", 10.0, "gdb")
            where = f"GDB server {host}:{port}"
            mi.command(f"-target-select extended-remote {host}:{port}", 10.0, where)
            say(f"gdb    connected to {where}")
            mi.command("-target-download", size_s, f"{where}: load")
            say(f"load   {kib(len(image.data))} at {image.address:#010x}")
            dump = f"dump binary memory {_mi_path(back)} {image.address:#x} {image.end:#x}"
            mi.command(f'-interpreter-exec console "{dump}"', size_s, f"{where}: read-back")
            got = back.read_bytes() if back.is_file() else b""
            if got != image.data:
                pairs = zip(got, image.data, strict=False)
                bad = next((i for i, (a, b) in enumerate(pairs) if a != b), len(got))
                at = image.address + bad
                mi.command("-target-disconnect", 10.0, where)
                raise DeviceError(
                    f"{where}: verify failed: the read-back differs from the image at {at:#010x}"
                    f" ({len(got):,} of {len(image.data):,} bytes read); the part is left halted"
                )
            say(f"verify {kib(len(image.data))} read back: identical")
            if not opts.go:
                mi.command("-target-disconnect", 10.0, where)
                return
            mi.command(f'-data-evaluate-expression "$sp = {sp:#x}"', 10.0, f"{where}: set SP")
            mi.command(f'-data-evaluate-expression "$pc = {pc & ~1:#x}"', 10.0, f"{where}: set PC")
            mi.command("-target-detach", 10.0, f"{where}: detach")
            say(f"go     reset handler {pc & ~1:#010x}, stack {sp:#010x}: running")
        finally:
            mi.close()


def _mi_path(p: Path) -> str:
    """A path for an MI command line (temporary paths: no quotes or backslashes)."""
    s = str(p.resolve())
    if any(c in s for c in '"\\ \n'):
        raise DeviceError(f"{s}: a temporary path GDB/MI cannot be given")
    return s
