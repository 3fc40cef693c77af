"""The optional ``[bootloader]`` table of a board file: how `tinycompile flash` programs it.

[bootloader]
methods = ["stm32-uart"]            # optional: stm32-uart | sam-ba | uf2, those of the board's
                                    # flash_methods (where the default is named)
baud = 115200                       # serial methods
# stm32-uart (ST AN3155 / AN2606): the bootloader's USART, its pins, the product ID (GET ID)
usart = 1
tx = "PA9"
rx = "PA10"
product_id = 0x449
part = "STM32F74xxx/75xxx"
sectors = [[4, 0x8000], [1, 0x20000], [3, 0x40000]]   # [count, size] from the flash origin
# sam-ba (Arduino bootloader): DSU device ID (masked), the RAM buffer for S/Y, NVM page size
device_id = 0x10010005
device_id_mask = 0xFFFF00FF
buffer = 0x20004000
buffer_size = 0x1000
page_size = 64
# uf2: the family ID (default: [flash] uf2_family_id) and the drive's INFO_UF2.TXT Board-ID
uf2_family_id = 0x68ED2B88
uf2_board_id = "SAMD21"
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import CompileError
from .spec import BootloaderSpec, FlashSpec

METHODS = ("stm32-uart", "sam-ba", "uf2")
_KEYS = {
    "methods",
    "baud",
    "usart",
    "tx",
    "rx",
    "product_id",
    "part",
    "sectors",
    "device_id",
    "device_id_mask",
    "buffer",
    "buffer_size",
    "page_size",
    "uf2_family_id",
    "uf2_board_id",
}
_PIN = re.compile(r"P[A-K]([0-9]|1[0-5])")
_TEXT = re.compile(r"[A-Za-z0-9 _./+-]{1,40}")


def _fail(source: Path, key: str, why: str) -> CompileError:
    return CompileError(f"field 'bootloader.{key}': {why}", source=str(source))


def _int(raw: dict[str, Any], key: str, source: Path, lo: int, hi: int) -> int | None:
    if key not in raw:
        return None
    v = raw[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _fail(source, key, f"expected a whole number in {lo:#x}..{hi:#x}, got {v!r}")
    return v


def _text(raw: dict[str, Any], key: str, source: Path, pattern: re.Pattern[str]) -> str | None:
    v = raw.get(key)
    if v is not None and (not isinstance(v, str) or not pattern.fullmatch(v)):
        raise _fail(source, key, f"{v!r} is not valid here")
    return v


MAX_SECTORS = 1 << 16


def _sectors(raw: Any, source: Path, flash: FlashSpec) -> tuple[tuple[int, int], ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(source, "sectors", "expected an array of [count, size] pairs")
    out: list[tuple[int, int]] = []
    addr = flash.origin
    for pair in raw:
        ok = isinstance(pair, list) and len(pair) == 2
        ok = ok and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in pair)
        if not ok:
            raise _fail(source, "sectors", f"{pair!r} is not a [count, size] pair")
        # checked before expanding: a huge count must not build a huge list
        if len(out) + pair[0] > MAX_SECTORS or addr + pair[0] * pair[1] > flash.origin + flash.size:
            total = addr + pair[0] * pair[1] - flash.origin
            why = f"sectors cover {total:#x} bytes or more, flash.size is {flash.size:#x}"
            if len(out) + pair[0] > MAX_SECTORS:
                why = f"more than {MAX_SECTORS} sectors (AN3155 numbers them in 16 bits)"
            raise _fail(source, "sectors", why)
        for _ in range(pair[0]):
            out.append((addr, pair[1]))
            addr += pair[1]
    if addr != flash.origin + flash.size:
        total = addr - flash.origin
        why = f"sectors cover {total:#x} bytes, flash.size is {flash.size:#x}"
        raise _fail(source, "sectors", why)
    return tuple(out)


def parse_bootloader(
    raw: Any, source: Path, flash: FlashSpec, wanted: tuple[str, ...]
) -> BootloaderSpec:
    """Validate ``[bootloader]`` for the bootloader methods of the board's flash_methods
    (``wanted``); errors name the file and the field."""
    if not isinstance(raw, dict):
        raise _fail(source, "", "expected a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise _fail(source, unknown[0], "unknown field")
    methods = raw.get("methods", list(wanted))
    if (
        not isinstance(methods, list)
        or not methods
        or any(m not in METHODS for m in methods)
        or len(set(methods)) != len(methods)
    ):
        raise _fail(source, "methods", f"expected a list of distinct names from {METHODS}")
    if sorted(methods) != sorted(wanted):
        raise _fail(
            source,
            "methods",
            f"{', '.join(methods)} are not the bootloader methods of flash_methods"
            f" ({', '.join(wanted) or 'none'})",
        )
    methods = list(wanted)  # in flash_methods' order
    baud = _int(raw, "baud", source, 1200, 4_000_000) or 115200
    spec: dict[str, Any] = {"methods": tuple(methods), "baud": baud}
    if "stm32-uart" in methods:
        for key in ("usart", "tx", "rx", "product_id", "sectors"):
            if key not in raw:
                raise _fail(source, key, "missing (needed by stm32-uart)")
        spec["usart"] = _int(raw, "usart", source, 1, 8)
        spec["tx"] = _text(raw, "tx", source, _PIN)
        spec["rx"] = _text(raw, "rx", source, _PIN)
        spec["product_id"] = _int(raw, "product_id", source, 0, 0xFFFF)
        spec["part"] = _text(raw, "part", source, _TEXT)
        spec["sectors"] = _sectors(raw["sectors"], source, flash)
    if "sam-ba" in methods:
        for key in ("device_id", "buffer", "buffer_size", "page_size"):
            if key not in raw:
                raise _fail(source, key, "missing (needed by sam-ba)")
        spec["device_id"] = _int(raw, "device_id", source, 0, 0xFFFFFFFF)
        spec["device_id_mask"] = _int(raw, "device_id_mask", source, 0, 0xFFFFFFFF) or 0xFFFFFFFF
        spec["buffer"] = _int(raw, "buffer", source, 0, 0xFFFFFFFF)
        page = _int(raw, "page_size", source, 8, 1024) or 0
        size = _int(raw, "buffer_size", source, 1, 0x10000) or 0
        if page & (page - 1) or size % page:
            raise _fail(source, "buffer_size", "must be a multiple of page_size (a power of 2)")
        if flash.reserved % page:
            raise _fail(source, "page_size", "flash.reserved must be a multiple of it")
        spec["page_size"], spec["buffer_size"] = page, size
    if "uf2" in methods:
        family = _int(raw, "uf2_family_id", source, 0, 0xFFFFFFFF) or flash.uf2_family_id
        if family is None:
            raise _fail(source, "uf2_family_id", "missing (here or in [flash]; needed by uf2)")
        spec["uf2_family_id"] = family
        spec["uf2_board_id"] = _text(raw, "uf2_board_id", source, _TEXT)
    return BootloaderSpec(**spec)
