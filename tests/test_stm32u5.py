"""The stm32u585 board (B-U585I-IOT02A, STM32U585: Cortex-M33) beyond what the boards' shared
tests cover: its clock code on the host model (tests/fixtures/clock_model) entered as a debugger
or bootloader leaves the chip, with an HSE crystal on a board file of the same part (the kit has
none), the decoder refusing wrong settings; the clock plan against ST's own for the kit; a
whole model bit-exact in QEMU on the emulator build (the AN505 machine qemu-m33 runs on)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import MODELS, ROOT
from test_clocks import SOURCES, Regs, decode_stm32u5, run_model

from tinycompile import api
from tinycompile.boards import get_board
from tinycompile.build.clocks import clock_defines
from tinycompile.errors import CompileError

MHZ = 1_000_000
RCC, PWR = 0x46020C00, 0x46020800
USART1 = 0x40013800


def test_clock_plan_is_sts_for_the_kit(tmp_path: Path) -> None:
    """MSIS 4 MHz -> PLL1 M 1, N 80, R 2 (VCO 320 MHz), booster clock MSIS / 1, 4 wait states:
    the values of ST's CubeMX project for the kit and OpenOCD's stm32u5x.cfg reset-init (its
    RCC_PLL1DIVR 0x0101024F, RCC_PLL1CFGR source MSIS, PLL1MBOOST /1, PLL1REN; FLASH_ACR 4)."""
    defs = dict(clock_defines(get_board("stm32u585")))
    plan = {k: defs[f"TC_PLL_MSIS_{k}"] for k in ("M", "N", "R", "RGE", "MBOOST")}
    assert plan == {"M": "1u", "N": "80u", "R": "2u", "RGE": "0u", "MBOOST": "0u"}
    assert defs["TC_FLASH_LATENCY"] == "4u" and defs["TC_CRYSTAL_HZ"] == "0u"
    assert not any(k.startswith("TC_PLL_HSE") for k in defs)
    _, regs, _ = run_model("stm32u585", "ok", tmp_path)
    assert regs[RCC + 0x34] == 0x0101024F
    assert regs[RCC + 0x28] & 0xFFF3 == 0x0001 and regs[RCC + 0x28] & (1 << 18)
    assert regs[0x40022000] & 0x10F == 0x104  # LATENCY 4, PRFTEN


@pytest.mark.parametrize(
    ("board", "clock_hz", "why"),
    [
        ("stm32u585", 170_000_000, "maximum at voltage range 1"),
        ("stm32u585", 159_999_999, "no PLL1 setting"),
    ],
)
def test_unreachable_clock_is_refused(board: str, clock_hz: int, why: str) -> None:
    b = dataclasses.replace(get_board(board), clock_hz=clock_hz)
    with pytest.raises(CompileError, match=f"board {board}: clock_hz {clock_hz}: .*{why}"):
        clock_defines(b)


def test_entered_running_on_pll1(tmp_path_factory) -> None:
    """Entered as OpenOCD's reset-init (or a previous firmware, or the ROM bootloader's GO with
    its USART1 set up) leaves the chip: PLL1 at 160 MHz with the booster on. The set-up moves
    the core onto MSIS before it stops PLL1, rewrites PLL1MBOOST only with the booster off (the
    model keeps it read-only otherwise), ends on PLL1 again, and resets USART1 to 8N1."""
    b = get_board("stm32u585")
    facts, regs, _ = run_model("stm32u585", "warm", tmp_path_factory.getbasetemp() / "cm_u5")
    hz, source, kernel = decode_stm32u5(b, regs)
    assert (hz, source) == (b.clock_hz, "pll_msis")
    assert (int(facts["clock_hz"]), facts["source"], int(facts["uart_hz"])) == (hz, source, kernel)
    te_re_ue = (1 << 3) | (1 << 2) | 1
    assert (regs[USART1], regs[USART1 + 4], regs[USART1 + 8]) == (te_re_ue, 0, 0)


@pytest.fixture
def hse_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The stm32u585 board file with a 16 MHz HSE crystal, as a user board (the clock code's HSE
    path: the kit itself has no HSE)."""
    text = (ROOT / "boards" / "stm32u585.toml").read_text()
    text = text.replace('name = "stm32u585"', 'name = "u585hse"')
    text = text.replace("max_clock_hz", "crystal_hz = 16_000_000\nmax_clock_hz")
    (tmp_path / "u585hse.toml").write_text(text)
    monkeypatch.setenv("TINYCOMPILE_BOARDS_DIR", str(tmp_path))
    monkeypatch.setitem(SOURCES, "u585hse", SOURCES["stm32u585"])
    return "u585hse"


@pytest.mark.parametrize(
    ("mode", "want"),
    [("ok", (160 * MHZ, "pll_hse")), ("xtal", (160 * MHZ, "pll_msis")), ("pll", (4 * MHZ, "msis"))],
)
def test_hse_crystal_and_its_fallbacks(hse_board: str, mode: str, want, tmp_path: Path) -> None:
    """With a crystal: PLL1 from the HSE (M 1, N 20, R 2, input range 8-16 MHz, booster clock
    16 MHz); a dead crystal (tried in both modes, each wait bounded): PLL1 from MSIS; no PLL1
    lock: MSIS 4 MHz with the booster off."""
    b = get_board(hse_board)
    facts, regs, _ = run_model(hse_board, mode, tmp_path)
    hz, source, kernel = decode_stm32u5(b, regs)
    assert (hz, source) == want
    assert (int(facts["clock_hz"]), facts["source"], int(facts["uart_hz"])) == (hz, source, kernel)
    assert bool(regs[PWR + 0x0C] & (1 << 18)) == (mode != "pll")  # booster off in the fallback
    if mode == "ok":
        assert regs[RCC + 0x28] & 0xF00F == 0x000F  # HSE, range 8-16 MHz, PLL1MBOOST /1
    assert int(facts["accesses"]) < 2_000_000


def test_decoder_sees_a_wrong_setting(tmp_path: Path) -> None:
    """The decoder of test_clocks rejects what a broken set-up would leave."""
    b = get_board("stm32u585")
    _, regs, _ = run_model("stm32u585", "ok", tmp_path)

    def check(r: Regs) -> None:
        assert decode_stm32u5(b, r)[0] == b.clock_hz

    check(regs)
    for addr, change in (
        (RCC + 0x34, lambda v: v - 1),  # PLL1N 79: 158 MHz
        (RCC + 0x34, lambda v: (v & ~(0x7F << 24)) | (2 << 24)),  # PLL1R 3: odd, reserved
        (RCC + 0x28, lambda v: v | (3 << 2)),  # PLL1RGE 8-16 MHz for a 4 MHz input
        (RCC + 0x28, lambda v: v | (1 << 12)),  # PLL1MBOOST /2: booster clock 2 MHz
        (RCC + 0x28, lambda v: v & ~(1 << 18)),  # pll1_r_ck disabled
        (PWR + 0x0C, lambda v: v & ~(1 << 18)),  # booster off at 160 MHz
        (PWR + 0x0C, lambda v: v & ~(1 << 16)),  # voltage range 2: 110 MHz at most
        (0x40022000, lambda v: (v & ~0xF) | 3),  # 3 wait states at 160 MHz
        (0x40030400, lambda v: v & ~1),  # ICACHE off
        (USART1 + 0x0C, lambda v: 35),  # BRR for 4 MHz
        (RCC + 0xE0, lambda v: v | 2),  # USART1 on HSI16
    ):
        bad = Regs(regs)
        bad[addr] = change(regs[addr])
        with pytest.raises(AssertionError):
            check(bad)


@pytest.mark.qemu
def test_whole_model_bit_exact_in_qemu() -> None:
    """A whole model (DS-CNN keyword spotting) on the stm32u585's emulator build: outputs and
    every layer bit-exact with TFLM, the board's budgets enforced at link time."""
    r = api.compare(MODELS / "kws_dscnn.tflite", board="stm32u585", n=3, layers=True)
    assert r.ok, str(r)
    size = r.result.firmware.size
    assert size.flash_total == 2 * 1024 * 1024 and size.sram_total == 768 * 1024
    assert size.kernel_code and not any(k.endswith("_m0") for k in size.kernel_code)
