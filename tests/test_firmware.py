"""Cross-compiled firmware and QEMU runs, on a hand-made model (tests/fixtures/board_model).

Every test uses the real arm-none-eabi-gcc and qemu-system-arm. The fixture model adds 1 to each
of 16 int8 inputs (through a `const` weights array), then runs two loops of known length as
profiled "layers" 1 and 2 (2 instructions per iteration).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinycompile.boards import get_board
from tinycompile.build import build_firmware
from tinycompile.errors import CompileError, DoesNotFit, RunError, ToolchainError
from tinycompile.run.emulator import (
    run_emulator,
    ticks_per_instruction,
    ticks_to_instructions,
)

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "board_model"
# Both need movw+movt (or a literal load) to materialise; B spans more than one SysTick wrap
# (2^24 ticks) under QEMU, so wrap counting is checked too.
LOOP_A, LOOP_B = 0x12345, 0x372345  # B: over 2^24 SysTick ticks at 20 MHz too (AN505)
SAMPLES = [bytes(range(16)), bytes((0x80 + 7 * i) & 0xFF for i in range(16))]

pytestmark = pytest.mark.qemu


def make_project(root: Path, *, arena: int = 64, weights: int = 4096, mode: int = 0) -> Path:
    """A project folder like the compiler writes: model/ (the fixture) and runtime/ (firmware/).

    mode: 0 normal, 1 hang in tc_invoke, 2 load from unmapped memory, 3 unaligned word load.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "model").mkdir()
    for f in FIXTURE.glob("*.[ch]"):
        shutil.copy(f, root / "model" / f.name)
    (root / "model" / "tc_fixture_config.h").write_text(
        f"#define TC_FIXTURE_ARENA_BYTES {arena}\n#define TC_FIXTURE_WEIGHT_BYTES {weights}\n"
        f"#define TC_FIXTURE_MODE {mode}\n#define TC_FIXTURE_LOOP_A {LOOP_A}u\n"
        f"#define TC_FIXTURE_LOOP_B {LOOP_B}u\n"
    )
    (root / "model" / "tc_fixture_weights.inc").write_text("X16,\n" * (weights // 16))
    for sub in ("include", "runtime", "boards"):
        shutil.copytree(REPO / "firmware" / sub, root / "runtime" / sub)
    return root


def write_inputs(workdir: Path, samples: list[bytes]) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "tc_in.bin").write_bytes(struct.pack("<I", len(samples)) + b"".join(samples))
    return workdir


def expected(sample: bytes) -> bytes:
    return bytes((b + 1) & 0xFF for b in sample)


def handler_instructions(elf: Path) -> int:
    """Instructions in the firmware's SysTick_Handler (it runs once per 2^24 ticks)."""
    dis = subprocess.run(
        ["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    body = dis.split("<SysTick_Handler>:\n", 1)[1].split("\n\n", 1)[0]
    count = 0
    for ln in body.splitlines():
        count += 1
        if "\tbx\tlr" in ln:  # what follows is alignment padding and the literal pool
            return count
    raise AssertionError(f"no return in SysTick_Handler:\n{body}")


def check_loop_delta(instr: list[int], ticks: list[int], handler: int) -> None:
    """Layers 1 and 2 differ only by the loop count (2 instructions an iteration), plus any
    SysTick wrap interrupts that fell into them (each one runs the handler once)."""
    extra = instr[2] - instr[1] - 2 * (LOOP_B - LOOP_A)
    assert extra % handler == 0, (extra, handler)
    wraps = extra // handler
    assert ticks[2] // (1 << 24) - 1 <= wraps <= ticks[2] // (1 << 24) + 1
    assert ticks[2] >= 1 << 24  # the long loop spans a wrap: wrap counting is exercised


def split_profiled(out: bytes, n: int) -> list[tuple[bytes, list[int], int]]:
    """tc_out.bin of a TC_PROFILE build: per sample 16 output bytes, 3 layer ticks, total."""
    rec = 16 + 4 * 4
    assert len(out) == n * rec
    res = []
    for s in range(n):
        chunk = out[s * rec : (s + 1) * rec]
        ticks = list(struct.unpack("<4I", chunk[16:]))
        res.append((chunk[:16], ticks[:3], ticks[3]))
    return res


@pytest.mark.parametrize(
    "board",
    [
        "stm32f746",
        "stm32f407",
        "samd21",
        "qemu-m33",
        "qemu-m55",
        "rp2350",
        "alif-e7-hp",
        "stm32u585",
    ],
)
def test_emulator_build_runs_and_counts_instructions(tmp_path: Path, board: str) -> None:
    proj = make_project(tmp_path / "proj")
    build = build_firmware(proj, board, variant="emulator", profile=True)
    assert build.bin.is_file() and build.hex.is_file() and build.elf.is_file()
    assert build.warnings == ()
    assert build.size.weights == 4096 and build.size.arena == 64
    b = get_board(board)
    assert build.size.flash_total == b.flash_bytes and build.size.sram_total == b.sram_bytes
    # Same core flags as the board: the ELF's build attributes name the board's core.
    attrs = subprocess.run(
        ["arm-none-eabi-readelf", "-A", str(build.elf)], capture_output=True, text=True, check=True
    ).stdout
    arch = {"cortex-m0plus": "v6S-M", "cortex-m4": "v7E-M", "cortex-m7": "v7E-M"}.get(b.core)
    arch = arch or {"cortex-m33": "v8-M.mainline", "cortex-m55": "v8.1-M.mainline"}[b.core]
    assert f"Tag_CPU_arch: {arch}" in attrs
    assert ("Tag_ABI_VFP_args: VFP registers" in attrs) == (b.fpu != "none")

    res = run_emulator(build, write_inputs(tmp_path / "run", SAMPLES), timeout_s=60)
    records = split_profiled(res.output, len(SAMPLES))
    handler = handler_instructions(build.elf)
    assert 3 <= handler <= 8
    for sample, (out, layers, total) in zip(SAMPLES, records, strict=True):
        assert out == expected(sample)
        instr = [res.instructions(t) for t in layers]
        check_loop_delta(instr, layers, handler)
        assert 2 * LOOP_B < instr[2] < 2 * LOOP_B + 80
        assert sum(layers) <= total < sum(layers) + 400
    # Deterministic: both samples took the same instruction counts (ticks may differ by one),
    # but for the SysTick wrap handler, which a long layer may catch once more in one sample
    # than in the other where 2^24 ticks are not a whole number of its loops' instructions
    counts = [[res.instructions(t) for t in rec[1]] for rec in records]
    assert all(d in (0, handler) for d in map(abs, map(int.__sub__, *counts))), counts
    # SysTick's clock in QEMU's virtual time: 25 MHz on the mps2 machines, 20 MHz on the AN505,
    # 32 MHz on the AN547 (the loops above came out exact with it)
    tpi = {"mps2-an505": 2.56, "mps3-an547": 4.096}.get(b.emulator.machine, 3.2)
    assert res.ticks_per_instruction == pytest.approx(tpi)
    assert res.timer_overhead_ticks is not None and 0 < res.timer_overhead_ticks < 200
    assert 0 < res.stack_used < res.stack_reserve == b.stack_bytes
    assert 0 < res.heap_used <= 4096


def test_emulator_debug_layers_dump(tmp_path: Path) -> None:
    build = build_firmware(
        make_project(tmp_path / "proj"),
        "rp2040",
        variant="emulator",
        debug_layers=True,
        profile=False,
    )
    assert not [w for w in build.warnings if "runtime/boards/" in w or "board/" in w]
    res = run_emulator(build, write_inputs(tmp_path / "run", SAMPLES), timeout_s=60)
    want = b"".join(expected(s) * 4 for s in SAMPLES)  # 3 layer dumps, then the output
    assert res.output == want


def test_tick_conversion_helpers() -> None:
    assert ticks_per_instruction("mps2-an500") == pytest.approx(3.2)
    assert ticks_to_instructions(640_000, "mps2-an385") == 200_000
    assert ticks_to_instructions(640_001, "mps2-an385") == 200_000  # one tick of jitter
    assert ticks_to_instructions(6493, "mps2-an386", overhead_ticks=64) == 2029 - 20
    with pytest.raises(CompileError, match="unknown emulator machine"):
        ticks_per_instruction("pdp11")


def test_builds_are_byte_identical(tmp_path: Path) -> None:
    a = build_firmware(make_project(tmp_path / "a"), "samd21", variant="emulator")
    b = build_firmware(make_project(tmp_path / "elsewhere" / "b"), "samd21", variant="emulator")
    assert a.bin.read_bytes() == b.bin.read_bytes()
    assert a.elf.read_bytes() == b.elf.read_bytes()
    assert a.hex.read_bytes() == b.hex.read_bytes()
    c = build_firmware(tmp_path / "a", "rp2040", variant="board", test_inputs=[SAMPLES[0]])
    d = build_firmware(
        tmp_path / "elsewhere" / "b",
        "rp2040",
        variant="board",
        test_inputs=[np.frombuffer(SAMPLES[0], dtype=np.int8)],
    )
    assert c.bin.read_bytes() == d.bin.read_bytes() and c.uf2.read_bytes() == d.uf2.read_bytes()
    for p in (c.bin, c.elf, c.map):
        assert str(tmp_path) not in p.read_bytes().decode("latin-1")


def test_makefile_reproduces_the_build(tmp_path: Path) -> None:
    proj = make_project(tmp_path / "proj")
    ours = build_firmware(proj, "stm32f746", variant="board", test_inputs=[SAMPLES[1]])
    saved = ours.bin.read_bytes()
    shutil.rmtree(proj / "build")
    subprocess.run(
        ["make", "-s", "-f", "board/stm32f746/Makefile"], cwd=proj, check=True, capture_output=True
    )
    assert (proj / "build/stm32f746-board/firmware.bin").read_bytes() == saved


@pytest.mark.parametrize("variant", ["emulator", "board"])
def test_samd21_sram_overflow_does_not_fit(tmp_path: Path, variant: str) -> None:
    proj = make_project(tmp_path / "proj", arena=40_000)
    with pytest.raises(DoesNotFit, match=r"does not fit board samd21: SRAM (\d+) > 32768") as info:
        build_firmware(proj, "samd21", variant=variant)
    report = info.value.report
    assert report.arena == 40_000 and report.sram_used > 32768 and not report.fits
    assert report.flash_used <= report.flash_total
    out = proj / f"build/samd21-{variant}"
    assert not any(out.glob("firmware.*")), "no firmware may be left behind"


def test_flash_overflow_does_not_fit(tmp_path: Path) -> None:
    proj = make_project(tmp_path / "proj", weights=256 * 1024)
    with pytest.raises(DoesNotFit, match=r"flash (\d+) > 253952 bytes") as info:
        build_firmware(proj, "samd21", variant="emulator")
    assert info.value.report.weights == 256 * 1024
    assert not (proj / "build/samd21-emulator/firmware.bin").exists()
    # The same model fits a board with more flash.
    assert build_firmware(proj, "stm32f407", variant="emulator").size.weights == 256 * 1024


def test_sram_budget_is_the_boards_not_the_machines(tmp_path: Path) -> None:
    # 100 KB of arena: fine on the F407 (128 KB SRAM), too much for the SAMD21 (32 KB), though
    # both emulators have 4 MB of RAM.
    proj = make_project(tmp_path / "proj", arena=100 * 1024)
    build = build_firmware(proj, "stm32f407", variant="emulator")
    res = run_emulator(build, write_inputs(tmp_path / "run", SAMPLES[:1]), timeout_s=60)
    assert res.output[:16] == expected(SAMPLES[0])
    with pytest.raises(DoesNotFit):
        build_firmware(proj, "samd21", variant="emulator")


def test_hanging_firmware_times_out(tmp_path: Path) -> None:
    build = build_firmware(make_project(tmp_path / "proj", mode=1), "stm32f407", variant="emulator")
    with pytest.raises(RunError, match=r"timed out after 3 s"):
        run_emulator(build, write_inputs(tmp_path / "run", SAMPLES[:1]), timeout_s=3)


def test_hard_fault_is_reported(tmp_path: Path) -> None:
    build = build_firmware(make_project(tmp_path / "proj", mode=2), "stm32f746", variant="emulator")
    with pytest.raises(RunError, match=r"hard fault at pc=0x[0-9a-f]{8} .*bfar=0x7ffffff0"):
        run_emulator(build, write_inputs(tmp_path / "run", SAMPLES[:1]), timeout_s=30)


def test_unaligned_access_traps_on_m0plus_only(tmp_path: Path) -> None:
    proj = make_project(tmp_path / "proj", mode=3)
    run = write_inputs(tmp_path / "run", SAMPLES[:1])
    m0 = build_firmware(proj, "samd21", variant="emulator")
    with pytest.raises(RunError, match=r"hard fault at pc=0x[0-9a-f]{8}"):
        run_emulator(m0, run, timeout_s=30)
    m7 = build_firmware(proj, "stm32f746", variant="emulator")  # Armv7-M allows it
    assert len(run_emulator(m7, run, timeout_s=30).output) == 32


def test_runner_errors_are_reported(tmp_path: Path) -> None:
    build = build_firmware(
        make_project(tmp_path / "proj"), "stm32f407", variant="emulator", profile=False
    )
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RunError, match="no tc_in.bin"):
        run_emulator(build, run)
    (run / "tc_in.bin").write_bytes(struct.pack("<I", 2) + bytes(20))
    with pytest.raises(RunError, match="does not match the model's inputs"):
        run_emulator(build, run, timeout_s=30)
    (run / "tc_in.bin").write_bytes(struct.pack("<I", 1) + SAMPLES[1])
    assert run_emulator(build, run, timeout_s=30).output == expected(SAMPLES[1])


def test_missing_cross_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = make_project(tmp_path / "proj")
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ToolchainError) as info:
        build_firmware(proj, "stm32f746", variant="emulator")
    msg = str(info.value)
    assert "arm-none-eabi-gcc not found" in msg and "apt install gcc-arm-none-eabi" in msg
    assert "\n" not in msg


def test_missing_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = build_firmware(make_project(tmp_path / "proj"), "qemu-m3", variant="emulator")
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ToolchainError, match="qemu-system-arm not found.*apt install"):
        run_emulator(build, write_inputs(tmp_path / "run", SAMPLES[:1]))


def test_host_board_is_not_cross_compiled(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="host toolchain"):
        build_firmware(make_project(tmp_path / "proj"), "host")
