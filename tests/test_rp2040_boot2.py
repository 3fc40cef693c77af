"""The RP2040 second-stage boot that ships in the Pico's board build (issue 22 #4): the first
256 bytes of firmware.bin, CRC-32 sealed as the boot ROM checks, executed instruction by
instruction in Unicorn (an ARMv6-M emulator; a test dependency) where the boot ROM puts it,
against a behavioural model of the RP2040's SSI and a W25Q080 / W25Q16 flash written here from
the RP2040 and Winbond datasheets: status registers 1 and 2 (QE, BUSY, WEL), write enable,
write status, Fast Read Quad I/O with its mode bits. It must leave the flash in continuous read
mode with QE set (written only when it was clear), the SSI in quad XIP at clk_sys / 2 with the
mode bits after each address, the QSPI pads set, VTOR at the application's vector table, SP
from it, and jump to its reset handler."""

from __future__ import annotations

import struct

import pytest
import unicorn  # a test dependency (pyproject [test])
from flashkit import built  # noqa: F401
from unicorn import arm_const

from tinycompile.build import rp2040_boot2_crc32

SSI, PADS, SRAM, FLASH, PPB = 0x18000000, 0x40020000, 0x20000000, 0x10000000, 0xE000E000
LOAD = 0x20041F00  # where the boot ROM copies boot2


class FlashAndSsi:
    """The SSI's registers and FIFOs, and the flash chip behind it."""

    def __init__(self, qe: bool) -> None:
        self.regs: dict[int, int] = {}
        self.tx: list[int] = []
        self.rx: list[int] = []
        self.sr1, self.sr2 = 0, (0x02 if qe else 0)
        self.busy_polls = 0
        self.commands: list[tuple] = []  # (instruction, ...) as the flash saw them
        self.continuous = False
        self.errors: list[str] = []

    # -- register access from the code under test ---------------------------------------------
    def read(self, off: int) -> int:
        if off == 0x28:  # SR: the pending transfer completes, then TFE, TFNF, not BUSY
            self._transfer()
            return 0x06
        if off == 0x60:
            if not self.rx:
                self.errors.append("DR0 read with the receive FIFO empty")
                return 0
            return self.rx.pop(0)
        return self.regs.get(off, 0)

    def write(self, off: int, value: int) -> None:
        if off == 0x60:
            if not self.regs.get(0x08):
                self.errors.append("DR0 written with the SSI disabled")
            self.tx.append(value)
            return
        if off == 0x08 and not value:
            self.tx, self.rx = [], []
        elif off != 0x08 and self.regs.get(0x08):
            self.errors.append(f"register {off:#x} written while the SSI is enabled (ignored)")
            return
        self.regs[off] = value

    # -- one chip-select period --------------------------------------------------------------
    def _transfer(self) -> None:
        if not self.tx:
            return
        tx, self.tx = self.tx, []
        ctrlr0, spi = self.regs.get(0x00, 0), self.regs.get(0xF4, 0)
        tmod, frf, dfs = (ctrlr0 >> 8) & 3, (ctrlr0 >> 21) & 3, (ctrlr0 >> 16) & 31
        if (tmod, frf, dfs) == (0, 0, 7):  # standard SPI, bytes out and in
            self.rx += self._command([b & 0xFF for b in tx])
        elif (tmod, frf, dfs) == (3, 2, 31):  # quad EEPROM read: instruction, address word
            inst_l, addr_l, wait = (spi >> 8) & 3, (spi >> 2) & 15, (spi >> 11) & 31
            trans = spi & 3
            self.commands.append(("quad", tx, inst_l, addr_l, wait, trans))
            ok = inst_l == 2 and addr_l == 8 and wait == 4 and trans == 1 and len(tx) == 2
            if ok and tx[0] == 0xEB and self.sr2 & 0x02:
                self.continuous = (tx[1] & 0x30) == 0x20  # M5-4 = 10b
            else:
                self.errors.append(f"quad read not understood: {self.commands[-1]}")
            self.rx.append(0xFFFFFFFF)
        else:
            self.errors.append(f"transfer in an unexpected mode: CTRLR0 {ctrlr0:#x}")

    def _command(self, b: list[int]) -> list[int]:
        self.commands.append(tuple(b))
        out = [0xFF] * len(b)
        if b[0] == 0x35:
            out[1:] = [self.sr2] * (len(b) - 1)
        elif b[0] == 0x05:
            busy = 1 if self.busy_polls > 0 else 0
            self.busy_polls = max(0, self.busy_polls - 1)
            out[1:] = [self.sr1 | busy] * (len(b) - 1)
        elif b[0] == 0x06 and len(b) == 1:
            self.sr1 |= 0x02  # WEL
        elif b[0] == 0x01 and len(b) == 3:
            if not self.sr1 & 0x02:
                self.errors.append("write status without write enable")
            self.sr1, self.sr2 = b[1] & ~0x03, b[2]
            self.busy_polls = 3
        else:
            self.errors.append(f"flash command not understood: {b}")
        return out


def run_boot2(block: bytes, firmware: bytes, qe: bool) -> tuple[FlashAndSsi, dict, bytes]:
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
    uc.mem_map(SRAM, 0x42000)
    uc.mem_map(FLASH, 0x200000)
    uc.mem_map(PPB, 0x2000)
    uc.mem_map(PADS, 0x1000)
    uc.mem_write(FLASH, firmware)
    uc.mem_write(LOAD, block[:252])
    uc.mem_write(PADS + 0x08, struct.pack("<4I", *[0x52] * 4))  # SD0-3 reset: IE, PUE, SCHMITT
    model = FlashAndSsi(qe)
    uc.mmio_map(
        SSI, 0x1000,
        lambda _uc, off, _size, _d: model.read(off), None,
        lambda _uc, off, _size, value, _d: model.write(off, value), None,
    )  # fmt: skip
    sp, reset = struct.unpack_from("<II", firmware, 0x100)
    uc.reg_write(arm_const.UC_ARM_REG_SP, 0x20042000)
    uc.reg_write(arm_const.UC_ARM_REG_LR, 0)  # entered from the boot ROM
    uc.emu_start(LOAD | 1, reset & ~1, count=200_000)
    state = {
        "pc": uc.reg_read(arm_const.UC_ARM_REG_PC),
        "sp": uc.reg_read(arm_const.UC_ARM_REG_SP),
        "vtor": struct.unpack("<I", uc.mem_read(0xE000ED08, 4))[0],
        "want": (sp, reset & ~1),
    }
    return model, state, bytes(uc.mem_read(PADS, 0x18))


@pytest.mark.parametrize("qe", [False, True], ids=["qe-clear", "qe-set"])
def test_pico_boot2_enters_quad_continuous_xip(built, qe: bool) -> None:  # noqa: F811
    fw = (built("rp2040") / "build" / "rp2040-board" / "firmware.bin").read_bytes()
    block = fw[:256]
    assert struct.unpack("<I", block[252:])[0] == rp2040_boot2_crc32(block[:252])  # ROM's check
    model, state, pads = run_boot2(block, fw, qe)
    assert model.errors == []
    assert (state["sp"], state["pc"]) == state["want"] and state["vtor"] == 0x10000100
    assert model.sr2 & 0x02 and model.continuous
    wrote_status = [c for c in model.commands if c and c[0] == 0x01]
    assert wrote_status == ([] if qe else [(0x01, 0x00, 0x02)])  # QE written only when clear
    r = model.regs
    assert r[0x08] == 1 and r[0x14] == 2  # enabled; SCK = clk_sys / 2
    assert r[0x00] == (2 << 21) | (31 << 16) | (3 << 8)  # quad, 32-bit frames, EEPROM read
    spi = r[0xF4]
    assert (spi >> 24, (spi >> 11) & 31, (spi >> 8) & 3, (spi >> 2) & 15, spi & 3) == (
        0xA0,
        4,
        0,
        8,
        2,
    )  # fmt: skip  mode bits A0h after each address, 4 dummy clocks, no instruction, all quad
    sclk, sd = struct.unpack_from("<I", pads, 4)[0], struct.unpack_from("<4I", pads, 8)
    assert sclk == 0x21 and all(v == 0x50 for v in sd)  # 8 mA fast SCLK; no Schmitt on SDx
