"""Building generated projects: for the host (host.py) or cross-compiled for a board
(firmware.py, with board_files, recipe, boot2, picobin, size, images and the toolchain)."""

from __future__ import annotations

from .board_files import board_defines, render_board_files, write_testvec
from .boot2 import rp2040_boot2_crc32
from .firmware import FirmwareBuild, build_firmware
from .host import HOST_CFLAGS, build_host, host_cc, runtime_sources
from .recipe import VARIANTS, BuildRecipe
from .size import SizeReport, size_report
from .toolchain import find_toolchain

__all__ = [
    "HOST_CFLAGS",
    "VARIANTS",
    "BuildRecipe",
    "FirmwareBuild",
    "SizeReport",
    "board_defines",
    "build_firmware",
    "build_host",
    "find_toolchain",
    "host_cc",
    "render_board_files",
    "rp2040_boot2_crc32",
    "runtime_sources",
    "size_report",
    "write_testvec",
]
