"""Real boards' firmware: every board with hardware links within its memory, the RP2040 image
layout, and board images run on the QEMU model of their core (real arm-none-eabi-gcc and
qemu-system-arm, the hand-made model of tests/fixtures/board_model, as in test_firmware.py)."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_firmware import SAMPLES, check_loop_delta, expected, handler_instructions, make_project

from tinycompile.boards import get_board, list_boards
from tinycompile.build import build_firmware, write_testvec
from tinycompile.errors import RunError
from tinycompile.run.emulator import (
    parse_board_report,
    run_board_firmware,
    ticks_to_instructions,
)

pytestmark = pytest.mark.qemu


HARDWARE = sorted(b.name for b in list_boards() if b.has_hardware)


@pytest.mark.parametrize("board", HARDWARE)
def test_real_board_firmware_links(tmp_path: Path, board: str) -> None:
    proj = make_project(tmp_path / "proj")
    build = build_firmware(
        proj, board, variant="board", test_inputs=[SAMPLES[0]], debug_layers=True
    )
    b = get_board(board)
    image = build.bin.read_bytes()
    assert build.warnings == ()  # -Wall -Wextra clean, compiler and linker
    assert build.size.fits and build.size.weights == 4096
    # the reserve is the call graph's worst case and a small margin (tests/test_stack_bound.py
    # checks that bound against the painted stack on the real chip's model)
    bound = build.size.stack_bound
    assert bound is not None and bound <= build.size.stack <= bound + 128, build.size.stack_note
    assert len(image) == build.size.flash_used
    vectors = 256 if b.flash.boot2 else 0
    sp, reset = struct.unpack_from("<2I", image, vectors)
    assert sp == b.main_sram.end  # initial SP: top of the board's main SRAM
    assert reset & 1 and b.flash.app_origin <= reset - 1 < b.flash.app_origin + len(image)
    syms = subprocess.run(
        ["arm-none-eabi-nm", str(build.elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "tc_console_init" in syms and "tc_run_files" not in syms
    assert ("tc_enable_caches" in syms) == b.caches
    timer = "SysTick_Handler" if b.timer == "systick" else "tc_timer_read"
    assert timer in syms
    assert "_sbrk" not in syms and "initialise_monitor_handles" not in syms  # no heap, no semihost
    for path in (proj / f"board/{board}").iterdir():
        assert path.name in {
            "tc_board.h",
            "board.ld",
            "emulator.ld",
            "Makefile",
            "tc_boot2_padded.S",
            "tc_image_def.S",
        }


def _reflect(value: int, bits: int) -> int:
    return int(f"{value:0{bits}b}"[::-1], 2)


def test_rp2040_image_layout(tmp_path: Path) -> None:
    build = build_firmware(
        make_project(tmp_path / "proj"), "rp2040", variant="board", test_inputs=[SAMPLES[0]]
    )
    image = build.bin.read_bytes()
    boot2 = image[:256]
    # Independent CRC-32/MPEG-2: zlib's reflected CRC on bit-reversed bytes, mirrored back.
    mirrored = bytes(_reflect(b, 8) for b in boot2[:252])
    crc = _reflect(zlib.crc32(mirrored) ^ 0xFFFFFFFF, 32)
    assert struct.unpack("<I", boot2[252:])[0] == crc
    # boot2 sets up the SSI (XIP_SSI_BASE in its literal pool) and vectors to 0x10000100.
    assert struct.pack("<I", 0x18000000) in boot2 and struct.pack("<I", 0x10000100) in boot2
    sp, reset = struct.unpack_from("<2I", image, 256)
    assert sp == 0x20042000 and 0x10000100 < reset < 0x10200000
    uf2 = build.uf2.read_bytes()
    assert len(uf2) == 512 * ((len(image) + 255) // 256)
    for i in range(len(uf2) // 512):
        block = uf2[512 * i : 512 * (i + 1)]
        magic0, magic1, flags, addr, size, no, total, family = struct.unpack_from("<8I", block)
        assert (magic0, magic1, flags, size, no) == (0x0A324655, 0x9E5D5157, 0x2000, 256, i)
        assert addr == 0x10000000 + 256 * i and total == len(uf2) // 512 and family == 0xE48BFF56
        assert struct.unpack_from("<I", block, 508)[0] == 0x0AB16F30
        assert block[32:288] == image[256 * i : 256 * (i + 1)].ljust(256, b"\0")


BOARD_EMULATED = ["stm32f407", "qemu-m3", "qemu-m4", "qemu-m7"]


@pytest.mark.parametrize("board", BOARD_EMULATED)
def test_real_board_firmware_runs_on_its_qemu_model(tmp_path: Path, board: str) -> None:
    proj = make_project(tmp_path / "proj")
    build = build_firmware(
        proj,
        board,
        variant="board",
        debug_layers=True,
        test_inputs=[np.frombuffer(SAMPLES[1], dtype=np.int8)],
    )
    rep = run_board_firmware(build, timeout_s=30)
    assert rep.board == board and rep.inputs_given
    # netduinoplus2 models no RCC (reads 0): the STM32F407 build's HSE, HSI->PLL and switch waits
    # all run out, and it reports the reset clock; the mps2 machines' clock is fixed.
    want = (16_000_000, "hsi") if board == "stm32f407" else (25_000_000, "fixed")
    assert (rep.clock_hz, rep.clock_source) == want
    assert rep.outputs == [expected(SAMPLES[1])]
    assert rep.layer_crc32[0] == zlib.crc32(expected(SAMPLES[1]))
    assert len(rep.layer_ticks) == 3 and rep.stack_used and rep.stack_reserve
    if get_board(board).timer == "systick":  # QEMU models SysTick, not the DWT cycle counter
        instr = [ticks_to_instructions(t, "mps2-an385") for t in rep.layer_ticks]
        check_loop_delta(instr, rep.layer_ticks, handler_instructions(build.elf))
    else:
        assert rep.timer == "dwt"


def test_empty_test_vector_and_report_parsing(tmp_path: Path) -> None:
    proj = make_project(tmp_path / "proj")
    write_testvec(proj, None)
    build = build_firmware(proj, "qemu-m4", variant="board", profile=False)
    rep = run_board_firmware(build, timeout_s=30)
    assert not rep.inputs_given and rep.outputs == [bytes([1] * 16)] and rep.layer_ticks == []
    assert (rep.clock_hz, rep.clock_source) == (25_000_000, "fixed")
    rep = parse_board_report(
        "tc-begin board=x clock_hz=16000000 clock=hsi timer=dwt inputs=zero\n"
        "tc-total ticks=48000\ntc-end\n"
    )
    assert (rep.clock_hz, rep.clock_source, rep.total_ticks) == (16_000_000, "hsi", 48000)
    assert rep.ticks_to_ms(rep.total_ticks) == 3.0
    with pytest.raises(RunError, match="incomplete"):
        parse_board_report("tc-begin board=x clock_hz=1 timer=dwt inputs=zero\n")
    with pytest.raises(RunError, match="hard fault at pc=0x00000123"):
        parse_board_report("tc-fault: HardFault pc=0x00000123 lr=0x00000001\n")
