"""Flashing by drag and drop onto the debug probe's USB drive (ST-LINK/V2-1 and V3, DAPLink,
J-Link OB with MSD): the drive shows DETAILS.TXT and MBED.HTM; a file copied onto it is
programmed, then the probe drops the drive and mounts it again, with FAIL.TXT when programming
failed (ST-LINK: "The interface firmware FAILED to reprogram the MCU ...").

The drive is ``--drive DIR``, or found among the usual mount points by the board file's
``[probe] drive_label``. After the copy the drive counts as mounted again when DETAILS.TXT is
back and the copied file is gone (a probe's drive never lists what it took), whether or not
the moment it was away was seen; then FAIL.TXT decides.
"""

from __future__ import annotations

import getpass
import os
import time
from pathlib import Path

from ..boards import Board
from ..errors import CompileError, DeviceError
from .common import FlashOptions, kib, say
from .image import Image

MARKERS = ("DETAILS.TXT", "MBED.HTM")
FILE_NAME = "firmware.bin"


def mount_points(label: str) -> list[Path]:
    """Where a drive labelled ``label`` is mounted on Linux (udisks) and macOS."""
    user = os.environ.get("USER") or getpass.getuser()
    return [Path("/media") / user / label, Path("/run/media") / user / label,
            Path("/media") / label, Path("/Volumes") / label]  # fmt: skip


def is_probe_drive(path: Path) -> bool:
    return path.is_dir() and any((path / m).is_file() for m in MARKERS)


def find_drive(board: Board, given: str | None) -> Path:
    """The probe's drive: ``given``, or the board's drive_label at a usual mount point."""
    if given:
        drive = Path(given)
        if not drive.is_dir():
            raise DeviceError(f"{drive}: no such folder (is the probe's drive mounted?)")
        if not is_probe_drive(drive):
            raise DeviceError(f"{drive}: not a probe's drive (no {' or '.join(MARKERS)})")
        return drive
    label = board.probe.drive_label if board.probe else None
    if not label:
        raise CompileError(f"board {board.name} names no probe drive label: pass --drive DIR")
    for p in mount_points(label):
        if is_probe_drive(p):
            return p
    where = ", ".join(str(p) for p in mount_points(label)[:2])
    raise DeviceError(f"no {label} drive mounted ({where}): plug the board in, or pass --drive")


def flash_drive(board: Board, image: Image, opts: FlashOptions) -> None:
    """Copy the image (as a .bin at the application start) onto the probe's drive and wait for
    its verdict; DeviceError on a copy error, FAIL.TXT, or no re-mount in time."""
    assert board.flash is not None
    if image.address != board.flash.app_origin:
        raise CompileError(
            f"{image.source}: a probe drive takes a .bin for {board.flash.app_origin:#010x};"
            f" this image starts at {image.address:#010x}"
        )
    drive = find_drive(board, opts.drive)
    dst = drive / FILE_NAME
    try:
        with open(dst, "wb") as f:
            f.write(image.data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise DeviceError(f"{dst}: copy failed: {e.strerror or e}") from None
    say(f"copy   {kib(len(image.data))} to {dst}: the probe programs it and re-mounts its drive")
    timeout = opts.timeouts.reappear + opts.timeouts.erase(len(image.data))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            back = is_probe_drive(drive) and not dst.exists()
        except OSError:  # the drive going away under us
            back = False
        if back:
            time.sleep(0.5)  # let the desktop's automounter finish before FAIL.TXT is read
            break
    else:
        raise DeviceError(
            f"{drive}: the drive did not re-mount within {timeout:g} s after the copy (was the"
            " file taken? unplug and re-plug the board, then look for FAIL.TXT)"
        )
    fail = drive / "FAIL.TXT"
    if fail.is_file():
        try:
            why = " ".join(fail.read_text(encoding="ascii", errors="replace").split())
        except OSError as e:
            why = f"(unreadable: {e.strerror})"
        raise DeviceError(f"{drive}: the probe could not program the part: {why or 'FAIL.TXT'}")
    say(f"done   {kib(len(image.data))} at {image.address:#010x}, programmed by the probe")
