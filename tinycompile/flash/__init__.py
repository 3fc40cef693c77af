"""`tinycompile flash`: program a board over its bootloader, by the method its board file names
(``[bootloader] methods``): stm32-uart (ST AN3155 ROM bootloader, stm32.py), sam-ba (Arduino
SAM-BA monitor, samba.py) or uf2 (a .uf2 file for the bootloader's drive, uf2.py).

The image (image.py) is checked against the board before any port is opened: a build folder
for another board, an image outside the application flash (the bootloader region included) or
too large are CompileErrors (exit 2); what the port or device does wrong is a DeviceError
(exit 3). Every wait is bounded (common.Timeouts) and retries are counted.
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


# `tinycompile flash --help`: the wiring per method, with the commands.
HELP = """Program a board by the method its board file names ([bootloader]):
  stm32f746, stm32f407, stm32h743: the ROM UART bootloader (ST AN3155). Wire a 3.3 V
    USB-serial adapter to the bootloader USART (AN2606; not the board's virtual COM port):
    stm32f746 USART1 PA9 (TX) / PA10 (RX), stm32f407 and stm32h743 USART3 PB10 / PB11;
    adapter TX to the part's RX, GND to GND; BOOT0 high, then reset.
      tinycompile flash build/digits-stm32f746 --board stm32f746 --port /dev/ttyUSB0
  samd21 (Arduino Zero): the Arduino bootloader's SAM-BA monitor on the NATIVE USB port; a
    1200-baud touch starts it while an Arduino sketch runs (else double-tap RESET and pass
    --no-touch). Its 8 KB bootloader region is never written.
      tinycompile flash build/digits-samd21 --board samd21 --port /dev/ttyACM0
  rp2040 (and samd21 with a UF2 bootloader, --method uf2): writes firmware.uf2 beside the
    firmware; hold BOOTSEL while plugging in the Pico, then:
      tinycompile flash build/digits-rp2040 --board rp2040 --drive /media/$USER/RPI-RP2
Erase, write and verify (read-back or CRC) always run; a failed verify exits 3."""


def methods(board: Board) -> tuple[str, ...]:
    """The flashing methods of a board (the first is its default)."""
    return board.bootloader.methods if board.bootloader else ()


def flash(
    target: str | Path, board: str | Board, opts: FlashOptions, method: str | None = None
) -> str:
    """Flash ``target`` (a build folder or a .hex/.elf/.bin) onto ``board``; return the
    closing line."""
    b = get_board(board)
    offered = methods(b)
    if not offered:
        raise CompileError(f"board {b.name} has no [bootloader] method tinycompile can flash with")
    method = method or offered[0]
    if method not in offered:
        raise CompileError(f"board {b.name} is flashed by {', '.join(offered)}, not {method}")
    fw = firmware_path(target, b)
    image = load_image(fw, b)
    if method != "uf2" and not opts.port:
        raise CompileError(f"flashing board {b.name} by {method} needs --port")
    if opts.boot_lines not in BOOT_LINES:
        raise CompileError(f"unknown --boot-lines wiring {opts.boot_lines!r}")
    if method == "stm32-uart":
        from .stm32 import flash_stm32

        flash_stm32(b, image, opts)
    elif method == "sam-ba":
        from .samba import flash_samba

        flash_samba(b, image, opts)
    else:
        from .uf2 import flash_uf2

        if not flash_uf2(b, image, fw, opts):
            return f"done: wrote the .uf2 for board {b.name} (not copied: no --drive)"
    done = f"done: {len(image.data):,} bytes at {image.address:#010x} on board {b.name}"
    return done + (", copied to the UF2 drive" if method == "uf2" else ", verified")
