"""UF2 (Microsoft's USB Flashing Format): 512-byte blocks, each carrying 256 bytes for one flash
address and the board's family ID, copied onto the bootloader's mass-storage drive (RP2040's
BOOTSEL drive, SAMD21 UF2 bootloaders), which says what it is in INFO_UF2.TXT."""

from __future__ import annotations

import os
from pathlib import Path

from ..boards import Board
from ..build.images import uf2_image
from ..errors import DeviceError
from .common import FlashOptions, say
from .image import Image


def write_uf2(board: Board, image: Image, fw_path: Path) -> Path:
    """Write the .uf2 beside the firmware file and return its path."""
    bl = board.bootloader
    assert bl is not None and bl.uf2_family_id is not None
    out = fw_path.with_suffix(".uf2")
    try:
        abs_block = board.flash.uf2_abs_block if board.flash else None  # RP2350-E10
        out.write_bytes(uf2_image(image.data, image.address, bl.uf2_family_id, abs_block))
    except OSError as e:
        raise DeviceError(f"{out}: cannot write: {e.strerror}") from None
    return out


def board_id(drive: Path) -> str:
    """The drive's Board-ID (INFO_UF2.TXT); DeviceError when it is not a UF2 drive."""
    info = drive / "INFO_UF2.TXT"
    if not drive.is_dir():
        raise DeviceError(f"{drive}: no such folder (is the UF2 drive mounted?)")
    try:
        text = info.read_text(encoding="ascii", errors="replace")
    except OSError:
        raise DeviceError(f"{drive}: not a UF2 drive (no INFO_UF2.TXT)") from None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "board-id":
            return value.strip()
    raise DeviceError(f"{info}: no Board-ID line")


def flash_uf2(board: Board, image: Image, fw_path: Path, opts: FlashOptions) -> bool:
    """Write the .uf2; with ``opts.drive``, check the drive and copy it there (True)."""
    bl = board.bootloader
    assert bl is not None
    uf2 = write_uf2(board, image, fw_path)
    n = (len(image.data) + 255) // 256
    say(f"uf2    {uf2} ({n} blocks, family {bl.uf2_family_id:#010x}, at {image.address:#010x})")
    if opts.drive is None:
        say("copy it onto the board's UF2 drive, or pass --drive DIR")
        return False
    drive = Path(opts.drive)
    found = board_id(drive)
    if bl.uf2_board_id and bl.uf2_board_id.lower() not in found.lower():
        raise DeviceError(
            f"{drive}: the drive's Board-ID is {found!r}; board {board.name} expects"
            f" {bl.uf2_board_id!r}"
        )
    dst = drive / uf2.name
    try:
        with open(dst, "wb") as f:
            f.write(uf2.read_bytes())
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise DeviceError(f"{dst}: copy failed: {e.strerror}") from None
    say(f"copy   {dst} (Board-ID {found}): the board restarts into the new firmware")
    return True
