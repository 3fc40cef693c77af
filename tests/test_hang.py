"""Emulator runs end: a hung firmware is killed with a clear 'timed out' RunError within the
timeout, and a hard fault is reported with the faulting address.

The firmware is a real generated project (a one-op model) whose tc_invoke is patched by hand:
an endless loop, or a read/write of an unmapped address, inserted before the layers.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import MODELS

from tinycompile import api
from tinycompile.build import FirmwareBuild, build_firmware, find_toolchain
from tinycompile.errors import RunError
from tinycompile.run.emulator import run_board_firmware, run_emulator

pytestmark = pytest.mark.qemu

MODEL = MODELS / "ops" / "add_same.tflite"
BAD_ADDRESS = 0xDEAD0000  # unmapped on the mps2 machines: a precise bus fault


def firmware(
    tmp: Path, board: str, body: str, variant: str = "emulator"
) -> tuple[FirmwareBuild, Path]:
    """An emulator build whose tc_invoke starts with ``body``; returns it and a run folder."""
    p = api.plan(MODEL)
    proj = api.generate(p, tmp / "proj")
    src = proj / "model" / "tc_model.c"
    text = src.read_text()
    # the hand-made statement runs first; the real layers stay (unreached) after it
    new = text.replace("int tc_invoke(void)\n{\n", "int tc_invoke(void)\n{\n" + body + "\n", 1)
    assert new != text, "tc_invoke not found in the generated model"
    src.write_text(new)
    build = build_firmware(proj, board, variant=variant)
    wd = tmp / "run"
    wd.mkdir()
    (wd / "tc_in.bin").write_bytes(api.pack_inputs(p.graph, api.make_inputs(p.graph, 2)))
    return build, wd


def symbol_range(build: FirmwareBuild, name: str) -> tuple[int, int]:
    nm = find_toolchain()["nm"]
    out = subprocess.run(
        [nm, "-S", str(build.elf)], capture_output=True, text=True, check=True
    ).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name:
            start = int(parts[0], 16) & ~1
            return start, start + int(parts[1], 16)
    raise AssertionError(f"{name} not in {build.elf}")


def qemu_alive(build: FirmwareBuild) -> bool:
    r = subprocess.run(["pgrep", "-f", str(build.elf)], capture_output=True, text=True)
    return bool(r.stdout.strip())


@pytest.mark.parametrize("board", ["qemu-m3", "samd21"])
def test_hung_firmware_times_out(board: str, tmp_path: Path) -> None:
    build, wd = firmware(tmp_path, board, '    for (;;) {\n        __asm volatile("");\n    }')
    t0 = time.monotonic()
    with pytest.raises(RunError, match=r"timed out after 3 s") as e:
        run_emulator(build, wd, timeout_s=3)
    took = time.monotonic() - t0
    assert 3 <= took < 13, took
    assert "\n" not in str(e.value)
    assert not qemu_alive(build), "QEMU still running after the timeout"
    assert not (wd / "tc_out.bin").exists() or (wd / "tc_out.bin").stat().st_size == 0


def test_hung_board_firmware_times_out(tmp_path: Path) -> None:
    """The real-board build on QEMU's model of the chip: no tc-end on the console in time."""
    build, _ = firmware(
        tmp_path, "qemu-m3", '    for (;;) {\n        __asm volatile("");\n    }', variant="board"
    )
    t0 = time.monotonic()
    with pytest.raises(RunError, match=r"timed out after 3 s"):
        run_board_firmware(build, timeout_s=3)
    assert 3 <= time.monotonic() - t0 < 13
    assert not qemu_alive(build)


@pytest.mark.parametrize("access", ["read", "write"])
def test_hard_fault_is_reported_with_its_address(access: str, tmp_path: Path) -> None:
    ptr = f"(volatile uint32_t *)0x{BAD_ADDRESS:08X}u"
    body = f"    (void)*{ptr};" if access == "read" else f"    *{ptr} = 1u;"
    build, wd = firmware(tmp_path, "qemu-m3", body)
    t0 = time.monotonic()
    with pytest.raises(RunError, match=r"hard fault at pc=0x[0-9a-f]{8}") as e:
        run_emulator(build, wd, timeout_s=30)
    assert time.monotonic() - t0 < 30
    msg = str(e.value)
    assert "\n" not in msg
    assert f"bfar=0x{BAD_ADDRESS:08x}" in msg.lower(), msg
    pc = int(re.search(r"pc=0x([0-9a-f]{8})", msg).group(1), 16)
    lo, hi = symbol_range(build, "tc_invoke")
    assert lo <= pc < hi, (hex(pc), hex(lo), hex(hi))
    assert not qemu_alive(build)


def test_hard_fault_on_cortex_m0plus_reports_pc(tmp_path: Path) -> None:
    """ARMv6-M has no fault address registers: the faulting pc is the address reported."""
    body = f"    *(volatile uint32_t *)0x{BAD_ADDRESS:08X}u = 1u;"
    build, wd = firmware(tmp_path, "samd21", body)
    with pytest.raises(RunError, match=r"hard fault at pc=0x[0-9a-f]{8}") as e:
        run_emulator(build, wd, timeout_s=30)
    pc = int(re.search(r"pc=0x([0-9a-f]{8})", str(e.value)).group(1), 16)
    lo, hi = symbol_range(build, "tc_invoke")
    assert lo <= pc < hi, (hex(pc), hex(lo), hex(hi))
