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

__all__ = ["BOOT_LINES", "FlashOptions", "Image", "Timeouts", "flash", "load_image", "methods"]


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
