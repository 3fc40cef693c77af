"""The Alif Ensemble E7 DevKit's M55-HP core (boards/alif-e7-hp.toml, issue 25): its console and
start-up on the host model of tests/test_clocks.py (the register values read against Alif's SVD
and the kit's ConductorTool files, github:alifsemi/alif_ensemble-cmsis-dfp), its image (MRAM at
0x80200000, the SE tools' ATOC entry, caches), kws_dscnn built for it, and its emulator build in
QEMU's mps3-an547: the fixture's image that exceeds the machine's 512 KB ITCM refused with the
reason, and kws_dscnn bit-exact with TFLM in every layer."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from test_clocks import MHZ, Regs, decode_alif, run_model
from test_firmware import SAMPLES, make_project

from tinycompile import api
from tinycompile.boards import get_board
from tinycompile.build import build_firmware
from tinycompile.errors import DoesNotFit

BOARD = "alif-e7-hp"
UART4 = 0x4901C000
MPU_RBAR, MPU_RLAR = 0xE000ED9C, 0xE000EDA0  # the model keeps region n at + n * 0x100000


def _model(mode: str, tmp_path_factory, *extra: str) -> tuple[dict[str, str], Regs]:
    facts, regs, _ = run_model(BOARD, mode, tmp_path_factory.getbasetemp() / "clock_models", *extra)
    return facts, regs


def test_console_pins_and_memory_attributes(tmp_path_factory) -> None:
    facts, regs = _model("ok", tmp_path_factory, "0xA5")
    assert facts["received"] == "0xa5"  # tc_console_getc: LSR.DR, then RBR
    # UART4: clock on, from SYST_PCLK (CLKCTL_PER_SLV UART_CTRL CKEN bit 4, CLK_SEL bit 12)
    assert regs[0x4902F008] == (1 << 4) | (1 << 12)
    # 100 MHz / (16 x 54.25): DLL 54, DLH 0, DLF 4; 8N1, FIFOs on, no interrupts, no modem lines
    assert (regs[UART4 + 0x100], regs[UART4 + 0x104], regs[UART4 + 0xC0]) == (54, 0, 4)
    assert (regs[UART4 + 0x0C], regs[UART4 + 0x08], regs[UART4 + 0x04], regs[UART4 + 0x10]) == (
        0x03,
        0x07,
        0,
        0,
    )
    # P12_1 RX, P12_2 TX: function 2 (UART4_RX_B / _TX_B), pads 0x29 / 0x28 as DevKit-E7.json
    assert regs[0x1A603000 + 12 * 0x20 + 1 * 4] == 0x00290002
    assert regs[0x1A603000 + 12 * 0x20 + 2 * 4] == 0x00280002
    # MPU: attribute 0 Device-nGnRE, 1 Normal WT RA; region 0 the host peripherals (XN), region 1
    # MRAM read-only; enabled with the default map beneath (PRIVDEFENA) and HFNMIENA
    assert regs[0xE000EDC0] & 0xFFFF == 0xAA04
    assert (regs[MPU_RBAR], regs[MPU_RLAR]) == (0x1A000003, 0x1AFFFFE1)
    assert (regs[MPU_RBAR + 0x100000], regs[MPU_RLAR + 0x100000]) == (0x80000006, 0x8057FFE3)
    assert regs[0xE000ED94] == 7
    assert regs[0x4902F000] & 0xC0000000 == 0xC0000000  # EXPMST0 IPCLK_FORCE, PCLK_FORCE
    assert regs[0xE001E004] == 0x2E5  # MEMSYSCTL PFCR: MAX_OS 5, MAX_LA 6, MIN_LA 2, ENABLE


def test_core_moved_to_the_board_clock(tmp_path_factory) -> None:
    """warm: the SE left the core on the PLL's 100 MHz tap and an earlier image left UART4 at
    another rate (8E1, interrupts on) and an MPU region of its own: the core reaches 400 MHz by
    way of the RC oscillator (the model stops at a tap changed under the running core), UART4 is
    reset and set up again, the earlier MPU region is gone."""
    b = get_board(BOARD)
    try:
        facts, regs = _model("warm", tmp_path_factory)
    except subprocess.CalledProcessError as e:
        pytest.fail(f"the clock set-up stopped the core's clock: {e.stdout.splitlines()[-1:]}")
    hz, source, kernel = decode_alif(b, regs, crystal=True)
    assert (hz, source, kernel) == (400 * MHZ, "pll", 100 * MHZ)
    assert (int(facts["clock_hz"]), facts["source"]) == (hz, source)
    assert regs[0x1A602010] & 0x3 == 3 and (regs[0x1A602010] >> 8) & 3 == 0  # ES0_PLL, ES0_OSC
    assert regs[UART4 + 0x04] == 0 and regs[UART4 + 0x0C] == 0x03
    assert regs[MPU_RLAR + 0x200000] & 1 == 0


def test_decoder_sees_a_wrong_setting(tmp_path_factory) -> None:
    b = get_board(BOARD)
    _, regs = _model("ok", tmp_path_factory)
    assert decode_alif(b, regs, crystal=True)[0] == b.clock_hz
    for addr, change in (
        (UART4 + 0xC0, lambda v: v + 1),  # DLF off by one
        (UART4 + 0x100, lambda v: 10),  # the divisor for the RC's 19.2 MHz PCLK
        (0x1A604020, lambda v: v & ~3),  # PCLK /1: 400 MHz, above its 100 MHz
        (0x4902F008, lambda v: v & ~(1 << 4)),  # UART4's clock gated
        (0x1A602004, lambda v: 0),  # the core on the PLL, unlocked
    ):
        bad = Regs(regs)
        bad[addr] = change(regs[addr])
        with pytest.raises(AssertionError):
            decode_alif(b, bad, crystal=True)
    with pytest.raises(AssertionError):  # the PLL without its crystal
        decode_alif(b, regs, crystal=False)


@pytest.mark.qemu
def test_board_image(tmp_path: Path) -> None:
    b = get_board(BOARD)
    assert (b.core, b.fpu, b.caches, b.timer) == ("cortex-m55", "auto", True, "dwt")
    assert (b.flash.origin, b.flash_bytes, b.flash.atoc_cpu) == (0x80200000, 2 << 20, "M55_HP")
    assert (b.main_sram.origin, b.sram_bytes) == (0x20000000, 1 << 20)
    assert (b.uart.driver, b.uart.instance, b.uart.tx, b.uart.rx) == ("alif", 4, "P12_2", "P12_1")
    assert b.flash_methods == ("gdb",) and b.probe.gdb_port == 2331
    build = build_firmware(make_project(tmp_path / "proj"), BOARD, test_inputs=[SAMPLES[0]])
    assert build.warnings == ()
    sp, reset = struct.unpack_from("<2I", build.bin.read_bytes())
    assert sp == 0x20100000 and 0x80200000 < reset < 0x80400000
    assert b.flash.origin % 2048 == 0  # VTOR (the SE's boot address): 2 KB aligned
    atoc = json.loads((build.build_dir / "firmware.atoc.json").read_text())
    assert atoc["DEVICE"]["binary"] == "app-device-config.json"
    app = atoc["TC_APP"]
    assert (app["binary"], app["mramAddress"], app["cpu_id"], app["flags"]) == (
        "firmware.bin",
        "0x80200000",
        "M55_HP",
        ["boot"],
    )
    syms = subprocess.run(
        ["arm-none-eabi-nm", str(build.elf)], capture_output=True, text=True, check=True
    ).stdout
    assert " tc_enable_caches" in syms and " tc_timer_read" in syms  # caches on, DWT timer
    emu = build_firmware(tmp_path / "proj", BOARD, variant="emulator")
    assert not (emu.build_dir / "firmware.atoc.json").exists()


@pytest.mark.qemu
def test_emulator_refuses_what_exceeds_the_machine(tmp_path: Path) -> None:
    """600 KB of weights fit the board's 2 MB of MRAM, not the AN547's 512 KB ITCM."""
    proj = make_project(tmp_path / "proj", weights=600 * 1024)
    assert build_firmware(proj, BOARD, variant="board").size.fits
    with pytest.raises(DoesNotFit, match="code memory of its emulator machine mps3-an547"):
        build_firmware(proj, BOARD, variant="emulator")


@pytest.mark.qemu
def test_kws_board_build_and_bit_exact_in_qemu(tmp_path: Path) -> None:
    """`tinycompile build --board alif-e7-hp` of kws_dscnn links within the board (its self-test
    vector built in), and its emulator build is bit-exact with TFLM in every layer."""
    model = ROOT / "tests" / "models" / "kws_dscnn.tflite"
    p = api.plan(model, board=BOARD)
    built = api.build_board(p, BOARD, tmp_path / "kws", test_inputs=api.self_test_vector(p))
    fw = built.firmware
    assert fw.variant == "board" and fw.size.fits and fw.warnings == ()
    assert (fw.build_dir / "firmware.atoc.json").is_file()
    r = api.compare(model, board=BOARD, n=3, layers=True)
    assert r.ok, str(r)
    assert r.result.firmware.board.name == BOARD and r.result.firmware.variant == "emulator"
    assert r.profile is not None and r.profile["instructions"] > 0
