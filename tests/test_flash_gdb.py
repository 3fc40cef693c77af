"""`tinycompile flash --method gdb` through a real GDB server: QEMU's gdbstub on the stm32f407's
own chip (netduinoplus2), started halted with empty flash by `tinycompile emulate --board
stm32f407 --gdb PORT` (a board with a debug probe), the board build loaded, read back, compared
and started by the real GDB for ARM (gdb-multiarch, which `.ci/run` installs); then
`tinycompile validate` over the emulated board's console pty reports zero mismatches.
Also: a read-back that differs (the part left halted, exit 3), no server, no GDB, and the
Intel hex the method hands GDB (read back by objcopy)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from flashkit import built, cli  # noqa: F401

from tinycompile.errors import DeviceError
from tinycompile.flash import FlashOptions, flash
from tinycompile.flash import gdb as gdbmod
from tinycompile.flash.image import Image, ihex, load_image, vectors
from tinycompile.validate import emulated_board
from tinycompile.validate.emulate import EMULATED_CONNECT_S

ROOT = Path(__file__).resolve().parent.parent
DIGITS = ROOT / "examples" / "digits.tflite"
BOARD = "stm32f407"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_flash_by_gdb_into_the_emulated_chip_then_validate(built) -> None:  # noqa: F811
    build = built(BOARD)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tinycompile.cli", "emulate", "--board", BOARD, "--gdb", str(port)]
    emu = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        first = emu.stdout.readline()  # type: ignore[union-attr]
        assert f"{BOARD} empty on QEMU netduinoplus2: console on /dev/pts/" in first, first
        pty = first.split("console on ")[1].split()[0]
        assert f"GDB server on localhost:{port}" in emu.stdout.readline()  # type: ignore[union-attr]
        r = cli(
            "flash", str(build), "--board", BOARD, "--method", "gdb", "--port", f"localhost:{port}"
        )
        assert r.returncode == 0, r.stdout + r.stderr
        image = load_image(build / "build" / f"{BOARD}-board" / "firmware.elf", _board())
        assert f"verify {len(image.data):,} B read back: identical" in r.stdout
        assert "running" in r.stdout and r.stdout.rstrip().endswith("verified")
        v = cli("validate", str(DIGITS), "--board", BOARD, "--port", pty, "-n", "3",
                "--connect-timeout", str(EMULATED_CONNECT_S))  # fmt: skip
        assert v.returncode == 0, v.stdout + v.stderr
        assert "3 inputs on stm32f407, 0 with mismatching outputs" in v.stdout, v.stdout
        emu.send_signal(signal.SIGINT)
        assert emu.wait(timeout=15) == 130
    finally:
        if emu.poll() is None:
            emu.kill()
            emu.wait()


def _board():
    from tinycompile.boards import get_board

    return get_board(BOARD)


def test_a_read_back_that_differs_fails_and_leaves_the_part_halted(
    built,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real server and GDB; the read-back file altered after GDB wrote it (one byte), as a
    flash that did not take the write would read: exit 3 with the address, never started."""
    build = built(BOARD)
    real = gdbmod.MiSession.command

    def command(self, cmd: str, timeout_s: float, what: str) -> str:
        out = real(self, cmd, timeout_s, what)
        if "dump binary memory" in cmd:
            path = Path(cmd.split("dump binary memory ")[1].split()[0])
            data = bytearray(path.read_bytes())
            data[0x123] ^= 0x40
            path.write_bytes(bytes(data))
        if "$pc" in cmd or "-target-detach" in cmd:
            raise AssertionError("started after a failed verify")
        return out

    monkeypatch.setattr(gdbmod.MiSession, "command", command)
    port = free_port()
    with emulated_board(BOARD, None, gdb_port=port):
        with pytest.raises(DeviceError, match="verify failed: the read-back differs") as e:
            flash(build, BOARD, FlashOptions(port=f"127.0.0.1:{port}"), "gdb")
    assert "at 0x08000123" in str(e.value) and "left halted" in str(e.value)


def test_no_server_and_no_gdb_are_clear(built, tmp_path: Path) -> None:  # noqa: F811
    build = str(built(BOARD))
    port = free_port()  # nothing listens there
    r = cli("flash", build, "--board", BOARD, "--method", "gdb", "--port", f"127.0.0.1:{port}")
    assert r.returncode == 3 and f"GDB server 127.0.0.1:{port}" in r.stderr, r.stderr
    r = cli("flash", build, "--board", BOARD, "--method", "gdb", "--port", "nohost:99999")
    assert r.returncode == 3 and "expected HOST:PORT" in r.stderr, r.stderr
    env = {**os.environ, "PATH": str(tmp_path)}  # no GDB on PATH
    args = ["flash", build, "--board", BOARD, "--method", "gdb"]
    p = subprocess.run([sys.executable, "-m", "tinycompile.cli", *args],
                       capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    assert p.returncode == 2 and "apt-get install gdb-multiarch" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_the_intel_hex_reads_back_with_objcopy(tmp_path: Path) -> None:
    """Records across a 64 KB boundary, an odd tail, the start address record."""
    data = bytes((i * 7 + 3) & 0xFF for i in range(70_001))
    img = Image(0x0800FFF0, data, tmp_path / "x.bin")
    hexf = tmp_path / "x.hex"
    hexf.write_text(ihex(img, 0x08000101))
    out = tmp_path / "back.bin"
    r = subprocess.run(["arm-none-eabi-objcopy", "-I", "ihex", "-O", "binary", str(hexf), str(out)],
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == data
    assert ":0400000508000101ED" in hexf.read_text()


def test_start_up_points_vtor_at_its_own_table(built, tmp_path: Path) -> None:  # noqa: F811
    """Issue 22 #5 (the VTOR half): entered as the ROM bootloader's GO enters it, VTOR still at
    the ROM's table (0x1FFF0000), the reset handler points VTOR at the image's own. The board
    build runs on QEMU's model of the chip, halted at reset; the real GDB puts a jump stub in
    SRAM (assembled here: VTOR := 0x1FFF0000, then the image's reset vector, as a bootloader
    does), starts it, lets the firmware run a moment, stops it and reads VTOR."""
    from tinycompile.flash.tools import find_tool

    elf = built(BOARD) / "build" / f"{BOARD}-board" / "firmware.elf"
    sp, reset = vectors(load_image(elf, _board()))
    stub = _assemble(tmp_path, f"""
        ldr r0, =0xE000ED08
        ldr r1, =0x1FFF0000
        str r1, [r0]
        ldr r2, ={reset:#x}
        bx r2
        .ltorg
    """)  # fmt: skip
    port = free_port()
    with emulated_board(BOARD, elf, gdb_port=port):
        mi = gdbmod.MiSession(find_tool("gdb"))
        try:
            mi.command("-gdb-set architecture arm", 10, "gdb")
            mi.command("-gdb-set mi-async on", 10, "gdb")  # commands while the part runs
            mi.command(f"-target-select extended-remote 127.0.0.1:{port}", 10, "gdb")
            mi.command(f"-data-write-memory-bytes 0x20010000 {stub.hex()}", 10, "gdb")
            mi.command(f'-data-evaluate-expression "$sp = {sp:#x}"', 10, "gdb")
            mi.command('-data-evaluate-expression "$pc = 0x20010000"', 10, "gdb")
            mi.command("-exec-continue", 10, "gdb")
            time.sleep(1.5)
            mi.command("-exec-interrupt", 10, "gdb")
            time.sleep(0.5)
            out = mi.command("-data-read-memory-bytes 0xe000ed08 4", 10, "gdb")
            vtor = int.from_bytes(bytes.fromhex(out.split('contents="')[1][:8]), "little")
            assert vtor == 0x08000000, hex(vtor)
        finally:
            mi.close()


def _assemble(tmp: Path, text: str) -> bytes:
    src, obj, out = tmp / "stub.s", tmp / "stub.o", tmp / "stub.bin"
    src.write_text(".syntax unified\n.thumb\n.cpu cortex-m4\n" + text + "\n")
    subprocess.run(["arm-none-eabi-as", "-o", str(obj), str(src)], check=True)
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", str(obj), str(out)], check=True)
    return out.read_bytes()
