"""`tinycompile flash`: program a board by one of the methods its board file names
(``flash_methods``, the first its default: the way its users flash it):
- through its debug probe: openocd (OpenOCD's ``program``, openocd.py), gdb (any probe's GDB
  server or QEMU's gdbstub, gdb.py), probe-drive (the probe's USB drive, drive.py);
- through its bootloader ([bootloader]): stm32-uart (ST AN3155 ROM bootloader, stm32.py), sam-ba
  (Arduino SAM-BA monitor, samba.py), uf2 (a .uf2 file for the bootloader's drive, uf2.py).

The image (image.py) is checked against the board before any port is opened: a build folder
for another board, an image outside the application flash (the bootloader region included) or
too large are CompileErrors (exit 2); a missing program is a ToolchainError naming its package;
what the port, probe or device does wrong is a DeviceError (exit 3). Every wait is bounded
(common.Timeouts) and retries are counted.
"""

from __future__ import annotations

from pathlib import Path

from ..boards import Board, get_board
from ..errors import CompileError
from .common import FlashOptions, Timeouts
from .image import Image, firmware_path, load_image
from .stm32 import BOOT_LINES

__all__ = [
    "BOOT_LINES",
    "HELP",
    "FlashOptions",
    "Image",
    "Timeouts",
    "flash",
    "load_image",
    "methods",
]


# `tinycompile flash --help`: the default way per board, then the others, with the commands.
HELP = """Program a board by the methods its board file names (the first is the default):
  stm32f746 (DISCO), stm32h743 (NUCLEO), stm32f407 (Discovery), stm32u585 (B-U585I-IOT02A):
  the on-board ST-LINK.
      tinycompile flash build/digits-stm32f746 --board stm32f746             (OpenOCD)
      tinycompile flash build/digits-stm32f746 --board stm32f746 --method probe-drive
        (copies firmware.bin onto the ST-LINK's drive, found by its label, or --drive DIR)
    --method gdb: any GDB server (OpenOCD, pyOCD, ST-LINK_gdbserver, J-Link; QEMU's
      `tinycompile emulate --board B --gdb 3333`), --port HOST:PORT (default localhost:3333).
    --method stm32-uart: the ROM UART bootloader (ST AN3155): a 3.3 V USB-serial adapter on the
      bootloader USART (stm32f746 USART1 PA9/PA10, stm32f407 and stm32h743 USART3
      PB10/PB11; stm32u585: its ST-LINK's virtual COM port, USART1), BOOT0 high, reset;
      --port /dev/ttyUSB0.
  samd21 (Arduino Zero): the Arduino bootloader's SAM-BA monitor on the NATIVE USB port. With
    tinycompile's firmware running (it has no USB port) double-tap RESET first; while an
    Arduino sketch runs, a 1200-baud touch starts it (sent only when no bootloader answers;
    --touch / --no-touch force it). Its 8 KB bootloader region is never written.
      tinycompile flash build/digits-samd21 --board samd21 --port /dev/ttyACM0
    --method uf2 (a UF2 bootloader's drive), openocd / gdb (the EDBG programming port).
  rp2040 (Pico): writes firmware.uf2 beside the firmware; hold BOOTSEL while plugging in:
      tinycompile flash build/digits-rp2040 --board rp2040 --drive /media/$USER/RPI-RP2
    --method openocd / gdb: a Raspberry Pi Debug Probe on the SWD pins.
  nrf52840 (DK): the on-board J-Link (OpenOCD), its drive (probe-drive) or its GDB server (gdb).
  alif-e7-hp (Alif E7 DevKit, MRAM): a J-Link's GDB server (gdb, port 2331); starting at power-on
    also needs the SE's ATOC entry: the build's firmware.atoc.json, for Alif's SE tools
    (app-gen-toc -f, then app-write-mram), which tinycompile does not run.
Every method writes and verifies (read-back, CRC or the probe's own check); a failed verify
exits 3, a missing program names the package to install."""


def methods(board: Board) -> tuple[str, ...]:
    """The flashing methods of a board (the first is its default)."""
    return board.flash_methods


SERIAL_METHODS = ("stm32-uart", "sam-ba")


def flash(
    target: str | Path, board: str | Board, opts: FlashOptions, method: str | None = None
) -> str:
    """Flash ``target`` (a build folder or a .hex/.elf/.bin) onto ``board``; return the
    closing line."""
    b = get_board(board)
    offered = methods(b)
    if not offered:
        raise CompileError(f"board {b.name} has no flashing method (flash_methods is empty)")
    method = method or offered[0]
    if method not in offered:
        raise CompileError(
            f"board {b.name} is flashed by {', '.join(offered)} (its board file's"
            f" flash_methods), not {method}"
        )
    fw = firmware_path(target, b)
    image = load_image(fw, b)
    if method in SERIAL_METHODS and not opts.port:
        raise CompileError(f"flashing board {b.name} by {method} needs --port")
    if opts.boot_lines not in BOOT_LINES:
        raise CompileError(f"unknown --boot-lines wiring {opts.boot_lines!r}")
    if method == "stm32-uart":
        from .stm32 import flash_stm32

        flash_stm32(b, image, opts)
    elif method == "sam-ba":
        from .samba import flash_samba

        flash_samba(b, image, opts)
    elif method == "openocd":
        from .openocd import flash_openocd

        flash_openocd(b, image, opts)
        return f"done: {len(image.data):,} bytes at {image.address:#010x} on board {b.name}"
    elif method == "gdb":
        from .gdb import flash_gdb

        flash_gdb(b, image, opts)
    elif method == "probe-drive":
        from .drive import flash_drive

        flash_drive(b, image, opts)
        return f"done: {len(image.data):,} bytes at {image.address:#010x} on board {b.name}"
    else:
        from .uf2 import flash_uf2

        if not flash_uf2(b, image, fw, opts):
            return f"done: wrote the .uf2 for board {b.name} (not copied: no --drive)"
    done = f"done: {len(image.data):,} bytes at {image.address:#010x} on board {b.name}"
    return done + (", copied to the UF2 drive" if method == "uf2" else ", verified")
