"""Board clock set-up, on the host: each family's clock code (firmware/boards/<family>/
tc_clock_*.c) and console driver compiled with TC_HOST_REGS against a behavioural model of the
part's clock tree (tests/fixtures/clock_model/tc_clock_model.c), in three cases: everything
starts, the crystal is dead, the PLL (SAMD21: DFLL48M) never locks.

The final register values are decoded by tests/clock_decode.py, from the reference manuals,
independently of tinycompile/build/clocks.py: the clock they give must be the board file's
clock_hz (or the expected fallback), within the part's limits (PLL input and VCO ranges, bus
maxima, flash wait states), the clock the firmware reports must equal the decoded one, and the
console UART's divisor must suit the decoded clock.
"""

from __future__ import annotations

import dataclasses
import functools
import subprocess
from pathlib import Path

import pytest
from clock_decode import (
    MHZ,
    Regs,
    decode_alif,
    decode_rp2040,
    decode_rp2350,
    decode_samd21,
    decode_stm32f,
    decode_stm32h7,
    decode_stm32u5,
)
from conftest import ROOT

from tinycompile.boards import get_board
from tinycompile.build.board_files import board_defines
from tinycompile.build.clocks import clock_defines
from tinycompile.build.host import host_cc
from tinycompile.build.templates import template_env
from tinycompile.errors import CompileError

BOARDS = ["stm32f407", "stm32f746", "stm32h743", "samd21", "rp2040", "nrf52840", "rp2350"]
BOARDS += ["alif-e7-hp"]
BOARDS += ["stm32u585"]
MODES = ["ok", "xtal", "pll"]
FW = ROOT / "firmware" / "boards"
SOURCES = {
    "stm32f407": ("stm32/tc_clock_stm32f.c", "stm32/tc_uart_stm32.c", ""),
    "stm32f746": ("stm32/tc_clock_stm32f.c", "stm32/tc_uart_stm32.c", ""),
    "stm32h743": ("stm32/tc_clock_stm32h7.c", "stm32/tc_uart_stm32.c", ""),
    "stm32u585": ("stm32/tc_clock_stm32u5.c", "stm32/tc_uart_stm32.c", ""),
    "samd21": ("samd21/tc_clock_samd21.c", "samd21/tc_uart_samd21.c", "TC_MODEL_SAMD21"),
    "rp2040": ("rp2040/tc_clock_rp2040.c", "rp2040/tc_uart_rp2040.c", "TC_MODEL_RP2040"),
    "nrf52840": ("nrf52/tc_clock_nrf52.c", "nrf52/tc_uart_nrf52.c", "TC_MODEL_NRF52"),
    "rp2350": ("rp2350/tc_clock_rp2350.c", "rp2350/tc_uart_rp2350.c", "TC_MODEL_RP2350"),
    "alif-e7-hp": ("alif/tc_clock_alif.c", "alif/tc_uart_alif.c", "TC_MODEL_ALIF"),
}


@functools.cache
def _model(board: str, tmp: Path) -> Path:
    b = get_board(board)
    out = tmp / board
    out.mkdir(parents=True, exist_ok=True)
    header = template_env().get_template("tc_board.h.j2")
    (out / "tc_board.h").write_text(
        header.render(board=b, defines=board_defines(b), source_name=f"{board}.toml")
    )
    clock, uart, define = SOURCES[board]
    cmd = [host_cc(), "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-DTC_HOST_REGS"]
    cmd += ["-DTC_VARIANT_BOARD", f"-I{out}", f"-I{FW / 'include'}", "-o", str(out / "model")]
    cmd += [f"-D{define}"] if define else []
    cmd += [
        str(FW / clock),
        str(FW / uart),
        str(ROOT / "tests/fixtures/clock_model/tc_clock_model.c"),
    ]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out / "model"


def run_model(board: str, mode: str, tmp: Path, *extra: str) -> tuple[dict[str, str], Regs, str]:
    r = subprocess.run(
        [str(_model(board, tmp)), mode, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    facts, regs = {}, Regs()
    for ln in r.stdout.splitlines():
        parts = ln.split()
        if parts[0] == "reg":
            regs[int(parts[1], 16)] = int(parts[2], 16)
        elif parts[0] in (
            "accesses", "clock_hz", "source", "uart_hz", "received", "glitches", "pad_order"
        ):  # fmt: skip
            facts[parts[0]] = parts[1]
    return facts, regs, r.stdout


EXPECTED = {  # board -> mode -> (clock_hz, source): None means the board file's clock_hz
    "stm32f407": {"ok": (None, "pll_hse"), "xtal": (None, "pll_hsi"), "pll": (16 * MHZ, "hsi")},
    "stm32f746": {"ok": (None, "pll_hse"), "xtal": (None, "pll_hsi"), "pll": (16 * MHZ, "hsi")},
    "stm32h743": {"ok": (None, "pll_hse"), "xtal": (None, "pll_hsi"), "pll": (64 * MHZ, "hsi")},
    # no HSE on the kit: PLL1 runs from MSIS whatever the crystals do
    "stm32u585": {"ok": (None, "pll_msis"), "xtal": (None, "pll_msis"), "pll": (4 * MHZ, "msis")},
    "samd21": {"ok": (None, "dfll"), "xtal": (48 * MHZ, "dfll_open"), "pll": (8 * MHZ, "osc8m")},
    "rp2040": {"ok": (None, "pll"), "xtal": (6_500_000, "rosc"), "pll": (12 * MHZ, "xosc")},
    "nrf52840": {"ok": (None, "hfxo"), "xtal": (None, "hfint"), "pll": (None, "hfxo")},
    "rp2350": {"ok": (None, "pll"), "xtal": (12 * MHZ, "rosc"), "pll": (12 * MHZ, "xosc")},
    # no lock (no crystal: no PLL), the core stays on the 76.8 MHz RC oscillator the SE left
    "alif-e7-hp": {"ok": (None, "pll"), "xtal": (76_800_000, "hfrc"), "pll": (76_800_000, "hfrc")},
}
PLL_SOURCE = {"ok": True, "xtal": False}  # PLL fed by the crystal (HSE) or by HSI


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("board", BOARDS)
def test_clock_tree_decodes_to_the_target(board: str, mode: str, tmp_path_factory) -> None:
    b = get_board(board)
    facts, regs, text = run_model(board, mode, tmp_path_factory.getbasetemp() / "clock_models")
    if board.startswith("stm32f"):
        hz, source, kernel = decode_stm32f(b, regs)
        if source.startswith("pll"):
            assert bool(regs[0x40023804] & (1 << 22)) == PLL_SOURCE[mode]
    elif board == "stm32h743":
        hz, source, kernel = decode_stm32h7(b, regs)
        if source.startswith("pll"):
            assert (regs[0x58024428] & 3 == 2) == PLL_SOURCE[mode]
    elif board == "stm32u585":
        hz, source, kernel = decode_stm32u5(b, regs)
    elif board == "samd21":
        hz, source, kernel = decode_samd21(b, regs, text)
    elif board == "rp2040":
        hz, source, kernel = decode_rp2040(b, regs)
    elif board == "rp2350":
        hz, source, kernel = decode_rp2350(b, regs)
        assert (facts["glitches"], facts["pad_order"]) == ("0", "0")
    elif board == "alif-e7-hp":
        hz, source, kernel = decode_alif(b, regs, crystal=mode != "xtal")
    else:  # nRF52840: 64 MHz whatever the source; HFCLKSTAT says which one runs
        stat = regs[0x4000040C]
        hz, source, kernel = 64 * MHZ, "hfxo" if stat & 0x10001 == 0x10001 else "hfint", 16 * MHZ
        assert regs[0x40002524] == 0x01D60000  # UARTE BAUDRATE code for 115200
    want_hz, want_source = EXPECTED[board][mode]
    assert (hz, source) == (want_hz or b.clock_hz, want_source)
    # What the firmware reports is what the registers say.
    assert (int(facts["clock_hz"]), facts["source"], int(facts["uart_hz"])) == (hz, source, kernel)
    assert int(facts["accesses"]) < 20_000_000  # every wait bounded, none near the guard


def test_model_sees_a_wrong_setting(tmp_path: Path) -> None:
    """The decoders reject what a broken clock set-up would leave: a wrong PLL N, one wait state
    too few, a baud divisor for the reset clock."""
    b = get_board("stm32f746")
    _, regs, _ = run_model("stm32f746", "ok", tmp_path)

    def check(r: Regs) -> None:
        assert decode_stm32f(b, r)[0] == b.clock_hz

    check(regs)
    for addr, change in (
        (0x40023804, lambda v: (v & ~(0x1FF << 6)) | (431 << 6)),  # PLLN 431: 215.5 MHz
        (0x40023804, lambda v: (v & ~0x3F) | 24),  # PLLM 24: 225 MHz, VCO input above 1 MHz
        (0x40023C00, lambda v: (v & ~0xF) | 6),  # 6 wait states at 216 MHz
        (0x4001100C, lambda v: 139),  # BRR for 16 MHz
        (0x4001100C, lambda v: v + 1),  # BRR off by one
        (0x40007000, lambda v: v & ~(1 << 17)),  # over-drive not switched
        (0x40023808, lambda v: v & ~(7 << 13)),  # APB2 /1: 216 MHz
    ):
        bad = Regs(regs)
        bad[addr] = change(regs[addr])
        with pytest.raises(AssertionError):
            check(bad)


@pytest.mark.parametrize(
    ("board", "clock_hz", "why"),
    [
        ("stm32f407", 167_000_001, "no main-PLL setting"),
        ("stm32f407", 180_000_000, "above the part's"),
        ("stm32h743", 480_000_000, "maximum at voltage scale 1"),
        ("samd21", 48_000_000, "32768 \\* MUL"),
        ("rp2040", 133_333_333, "no PLL_SYS setting"),
        ("rp2350", 151_000_000, "above the part's"),
        ("rp2350", 133_333_333, "no PLL_SYS setting"),
        ("alif-e7-hp", 250_000_000, "100, 200, 300 or 400 MHz"),
    ],
)
def test_unreachable_clock_is_refused(board: str, clock_hz: int, why: str) -> None:
    b = dataclasses.replace(get_board(board), clock_hz=clock_hz)
    with pytest.raises(CompileError, match=f"board {board}: clock_hz {clock_hz}: .*{why}"):
        clock_defines(b)
