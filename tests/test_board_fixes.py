"""Board code read against the vendors' own sources (issue 22): one test per fix, each failing
on the code before it, on the host models of tests/test_clocks.py (the clock model's "warm"
entry: the chip as a bootloader leaves it)."""

from __future__ import annotations

import subprocess

import pytest
from test_clocks import decode_samd21, decode_stm32f, decode_stm32h7, run_model

from tinycompile.boards import get_board


def test_nrf52_receiver_starts_in_console_setup(tmp_path_factory) -> None:
    """Issue 22 #6: UARTE0's receiver is started by the console's set-up (RXD.PTR, MAXCNT 1,
    STARTRX), not by the first getc after the start-up report (bytes sent before were lost)."""
    _, regs, _ = run_model("nrf52840", "ok", tmp_path_factory.getbasetemp() / "clock_models")
    assert regs[0x40002538] == 1 and regs[0x40002534] != 0  # RXD.MAXCNT, RXD.PTR
    assert regs[0x40002000] == 1 and regs[0x40002110] == 0  # TASKS_STARTRX, EVENTS_ENDRX


def test_samd21_entered_running_on_the_dfll(tmp_path_factory) -> None:
    """Issue 22 #1: entered as a bootloader leaves the chip (SAM-BA's G: the core at 48 MHz on
    the DFLL in closed loop on XOSC32K), the set-up moves generator 0 onto OSC8M before it
    touches XOSC32K or the DFLL; the model stops (exit 5) when the core's clock source stops."""
    b = get_board("samd21")
    try:
        facts, regs, text = run_model("samd21", "warm", tmp_path_factory.getbasetemp() / "cm")
    except subprocess.CalledProcessError as e:
        pytest.fail(f"the clock set-up stopped the core's clock: {e.stdout.splitlines()[-1:]}")
    hz, source, kernel = decode_samd21(b, regs, text)
    assert (hz, source) == (b.clock_hz, "dfll")
    assert (int(facts["clock_hz"]), facts["source"], int(facts["uart_hz"])) == (hz, source, kernel)


def test_samd21_crystal_started_as_the_vendors_do(tmp_path_factory) -> None:
    """Issue 22 #2: XOSC32K with AAMPEN off and STARTUP 6, as the Arduino core, the Zero
    bootloader and uf2-samdx1 start it (the errata's automatic amplitude control problem)."""
    _, regs, _ = run_model("samd21", "ok", tmp_path_factory.getbasetemp() / "clock_models")
    x32 = regs[0x40000814] & 0xFFFF
    assert x32 & 0b1110 == 0b1110  # ENABLE, XTALEN, EN32K
    assert not x32 & (1 << 5) and (x32 >> 8) & 7 == 6  # AAMPEN 0, STARTUP 6


def test_samd21_flash_takes_manual_writes_only(tmp_path_factory) -> None:
    """Issue 22 #3: NVMCTRL.CTRLB.MANW set (uf2-samdx1, for the errata's stray flash writes)."""
    _, regs, _ = run_model("samd21", "ok", tmp_path_factory.getbasetemp() / "clock_models")
    assert regs[0x41004004] & (1 << 7)
    assert (regs[0x41004004] >> 1) & 0xF == 1  # RWS still one wait state


USART_BASES = {1: 0x40011000, 2: 0x40004400, 3: 0x40004800, 6: 0x40011400}


@pytest.mark.parametrize("board", ["stm32f407", "stm32f746", "stm32h743"])
def test_stm32_console_after_the_rom_bootloaders_go(board: str, tmp_path_factory) -> None:
    """Issue 22 #5 (the console half; VTOR: tests/test_flash_gdb.py): entered after the ROM
    bootloader's GO, its USART still enabled with parity, 9 bits, 2 stop bits and its pins in
    AF7, the set-up resets the console's USART and the bootloader's through RCC and returns
    the bootloader's pins that the console does not use to their reset state."""
    b = get_board(board)
    facts, regs, _ = run_model(board, "warm", tmp_path_factory.getbasetemp() / "clock_models")
    decode = decode_stm32h7 if board == "stm32h743" else decode_stm32f
    assert decode(b, regs)[0] == b.clock_hz == int(facts["clock_hz"])
    v1 = b.uart.driver == "stm32f4"
    cr1_off = 0x0C if v1 else 0x00
    te_re_ue = (1 << 13 | 1 << 3 | 1 << 2) if v1 else (1 << 3 | 1 << 2 | 1)
    base = USART_BASES[b.uart.instance] + cr1_off
    assert (regs[base], regs[base + 4], regs[base + 8]) == (te_re_ue, 0, 0)  # CR1, CR2, CR3
    bl = b.bootloader
    if bl.usart != b.uart.instance:
        assert regs[USART_BASES[bl.usart] + cr1_off] == 0
    gpio0 = 0x58020000 if board == "stm32h743" else 0x40020000
    console = {b.uart.tx, b.uart.rx}
    released = [p for p in (bl.tx, bl.rx) if p not in console]
    assert released  # every STM32 board here has a bootloader pin the console does not use
    for pin in released:
        port, num = ord(pin[1]) - ord("A"), int(pin[2:])
        gpio = gpio0 + 0x400 * port
        assert (regs[gpio] >> (2 * num)) & 3 == 0, pin  # MODER: input
        assert (regs[gpio + 0x20 + 4 * (num // 8)] >> (4 * (num % 8))) & 0xF == 0, pin  # AF0


@pytest.mark.parametrize("rosc_hz", [1_900_000, 4_300_000, 6_500_000, 11_700_000])
def test_rp2040_console_measures_the_ring_oscillator(rosc_hz: int, tmp_path_factory) -> None:
    """Issue 22 #7: with no crystal the RP2040 runs on its ring oscillator (1.8-12 MHz), for
    which a divisor from the nominal 6.5 MHz is wrong. Before it receives, the console times the
    zero bytes `validate` opens with (after a HELLO frame a host sent first, whose shorter pulses
    must not count) and sets the UART for the clock measured. A low pulse is timed to one poll of
    the pin (5 cycles in the model, which repeats in phase from byte to byte): the clock the
    firmware reports is within 5 cycles in 9 bit times of the model's true ROSC frequency (3.4%
    at 1.9 MHz, 0.6% at 11.7 MHz), and the baud rate the PL011 then makes is within 3.5% of
    115200 (its receiver's tolerance is about 4.6%; with the nominal 6.5 MHz it was 3.4x off at
    1.9 MHz)."""
    facts, regs, _ = run_model(
        "rp2040", "xtal", tmp_path_factory.getbasetemp() / "clock_models", str(rosc_hz)
    )
    ibrd, fbrd = regs[0x40034024], regs[0x40034028]
    baud = 4 * rosc_hz / (64 * ibrd + fbrd)
    assert abs(baud - 115200) / 115200 < 0.035, (baud, ibrd, fbrd)
    assert facts["source"] == "rosc_baud"
    bound = 5 / (9 * rosc_hz / 115200) + 1e-6
    assert abs(int(facts["clock_hz"]) - rosc_hz) / rosc_hz <= bound, (facts, bound)
    assert facts["uart_hz"] == facts["clock_hz"] and facts["received"] == "0x00"
    assert regs[0xE000E010] & 1  # SysTick started by the measurement itself here
