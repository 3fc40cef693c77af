"""The typed fields of a board file: one reader per table (``[flash]``, ``[[sram]]``,
``[uart]``, ``[emulator]``), each refusing a wrong value with the file, the field and the
reason; and the UART drivers the firmware has, with the pins and cores each accepts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import CompileError
from .spec import CORE_FPUS, EMULATOR_MACHINES, EmulatorSpec, FlashSpec, MemRegion, UartSpec

BOOT2_KINDS = ("rp2040-03h", "rp2040-w25q080")  # firmware/boards/rp2040/tc_boot2*.S
IMAGE_DEF_KINDS = ("rp2350-arm-s",)  # tinycompile/build/picobin.py
ATOC_CPUS = ("M55_HP", "M55_HE")  # Alif Ensemble SE tools' cpu_id of an ATOC entry
_STM32_PIN = r"P[A-K]([0-9]|1[0-5])"
# driver -> (allowed instances, pin regex, required extra keys with their types and ranges)
UART_DRIVERS: dict[str, tuple[tuple[int, ...], str | None, dict[str, tuple[type, Any]]]] = {
    "stm32f4": ((1, 2, 3, 6), _STM32_PIN, {"af": (int, range(16))}),
    "stm32f7": ((1, 2, 3, 6), _STM32_PIN, {"af": (int, range(16))}),
    "stm32h7": ((1, 2, 3, 6), _STM32_PIN, {"af": (int, range(16))}),
    "stm32u5": ((1, 2, 3), _STM32_PIN, {"af": (int, range(16))}),  # USART1-3 (RM0456)
    "samd21": (
        (0, 1, 2, 3, 4, 5),
        r"P[AB]([0-9]|[12][0-9]|3[01])",
        {"pmux": (str, tuple("ABCDEFGH")), "txpo": (int, range(4)), "rxpo": (int, range(4))},
    ),
    "nrf52": ((0,), r"P[01]\.([0-9]|[0-2][0-9]|3[01])", {}),
    "rp2040": ((0,), r"GP([0-9]|[12][0-9])", {}),
    "rp2350": ((0,), r"GP([0-9]|[12][0-9])", {}),  # RP2350A: GPIO 0-29
    "cmsdk": ((0,), None, {}),
    # Alif Ensemble UART0-7 (DesignWare APB UART); pins Pport_pin, af the pin's function (0-7)
    "alif": (tuple(range(8)), r"P([0-9]|1[0-4])_[0-7]", {"af": (int, range(8))}),
}
DRIVER_CORES = {
    "stm32f4": ("cortex-m4",),
    "stm32f7": ("cortex-m7",),
    "stm32h7": ("cortex-m7",),
    "stm32u5": ("cortex-m33",),
    "samd21": ("cortex-m0plus",),
    "nrf52": ("cortex-m4",),
    "rp2040": ("cortex-m0plus",),
    "rp2350": ("cortex-m33",),
    "cmsdk": tuple(CORE_FPUS),
    "alif": ("cortex-m55",),
}


def _fail(source: Path, fld: str, why: str) -> CompileError:
    return CompileError(f"field '{fld}': {why}", source=str(source))


def _get(
    table: dict[str, Any],
    key: str,
    typ: type | tuple[type, ...],
    source: Path,
    prefix: str = "",
    *,
    default: Any = ...,
    choices: Any = None,
) -> Any:
    fld = prefix + key
    if key not in table:
        if default is ...:
            raise _fail(source, fld, "missing")
        return default
    value = table[key]
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        names = " or ".join(t.__name__ for t in types)
        raise _fail(source, fld, f"expected {names}, got {type(value).__name__} {value!r}")
    if choices is not None and value not in choices:
        shown = (
            ", ".join(str(c) for c in choices)
            if not isinstance(choices, range)
            else (f"{choices.start}..{choices.stop - 1}")
        )
        raise _fail(source, fld, f"{value!r} is not one of {shown}")
    return value


def _no_unknown(table: dict[str, Any], known: set[str], source: Path, prefix: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise _fail(source, prefix + unknown[0], "unknown field")


def _positive(value: int, source: Path, fld: str) -> int:
    if value <= 0:
        raise _fail(source, fld, f"must be positive, got {value}")
    return value


def _parse_flash(raw: Any, source: Path) -> FlashSpec:
    if not isinstance(raw, dict):
        raise _fail(source, "flash", "expected a table")
    origin = _get(raw, "origin", int, source, "flash.")
    size = _positive(_get(raw, "size", int, source, "flash."), source, "flash.size")
    reserved = _get(raw, "reserved", int, source, "flash.", default=0)
    if not 0 <= reserved < size:
        raise _fail(source, "flash.reserved", f"must be in 0..size-1, got {reserved}")
    if origin < 0 or origin + size > 1 << 32:
        raise _fail(source, "flash.origin", "flash must lie in the 32-bit address space")
    boot2 = _get(raw, "boot2", str, source, "flash.", default=None, choices=BOOT2_KINDS)
    uf2 = _get(raw, "uf2_family_id", int, source, "flash.", default=None)
    image_def = _get(raw, "image_def", str, source, "flash.", default=None, choices=IMAGE_DEF_KINDS)
    abs_block = _get(raw, "uf2_abs_block", int, source, "flash.", default=None)
    if abs_block is not None and (uf2 is None or abs_block % 256 or not 0 <= abs_block < 1 << 32):
        raise _fail(
            source, "flash.uf2_abs_block", "needs uf2_family_id and a 256-byte aligned address"
        )
    atoc = _get(raw, "atoc_cpu", str, source, "flash.", default=None, choices=ATOC_CPUS)
    known = {"origin", "size", "reserved", "boot2", "uf2_family_id", "image_def", "uf2_abs_block"}
    _no_unknown(raw, known | {"atoc_cpu"}, source, "flash.")
    return FlashSpec(origin, size, reserved, boot2, uf2, image_def, abs_block, atoc)


def _parse_sram(raw: Any, source: Path) -> tuple[MemRegion, ...]:
    if not isinstance(raw, list) or not raw:
        raise _fail(source, "sram", "expected a non-empty array of tables ([[sram]])")
    regions = []
    for i, r in enumerate(raw):
        p = f"sram[{i}]."
        if not isinstance(r, dict):
            raise _fail(source, f"sram[{i}]", "expected a table")
        name = _get(r, "name", str, source, p)
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            raise _fail(source, p + "name", f"{name!r} is not an identifier")
        origin = _get(r, "origin", int, source, p)
        size = _positive(_get(r, "size", int, source, p), source, p + "size")
        _no_unknown(r, {"name", "origin", "size"}, source, p)
        regions.append(MemRegion(name, origin, size))
    names = [r.name.upper() for r in regions]
    if len(set(names)) != len(names) or {"FLASH", "RAM"} & set(names[1:]):
        raise _fail(source, "sram", "region names must be distinct (and not FLASH/RAM)")
    return tuple(regions)


def _parse_uart(raw: Any, source: Path, core: str) -> UartSpec:
    if not isinstance(raw, dict):
        raise _fail(source, "uart", "expected a table")
    driver = _get(raw, "driver", str, source, "uart.", choices=tuple(UART_DRIVERS))
    instances, pin_re, extras = UART_DRIVERS[driver]
    if core not in DRIVER_CORES[driver]:
        raise _fail(source, "uart.driver", f"driver {driver} is for {DRIVER_CORES[driver]}")
    instance = _get(raw, "instance", int, source, "uart.", default=instances[0], choices=instances)
    pins: dict[str, str | None] = {}
    for key in ("tx", "rx"):
        if pin_re is None:
            pins[key] = None
            continue
        pin = _get(raw, key, str, source, "uart.")
        if not re.fullmatch(pin_re, pin):
            raise _fail(source, "uart." + key, f"{pin!r} is not a pin name for {driver}")
        pins[key] = pin
    baud = _positive(_get(raw, "baud", int, source, "uart.", default=115200), source, "uart.baud")
    clock = _get(raw, "clock_hz", int, source, "uart.", default=None)
    extra = {k: _get(raw, k, t, source, "uart.", choices=c) for k, (t, c) in extras.items()}
    _no_unknown(
        raw, {"driver", "instance", "tx", "rx", "baud", "clock_hz", *extras}, source, "uart."
    )
    return UartSpec(driver, instance, pins["tx"], pins["rx"], baud, clock, extra)


def _parse_emulator(raw: Any, source: Path) -> EmulatorSpec:
    if not isinstance(raw, dict):
        raise _fail(source, "emulator", "expected a table")
    p = "emulator."
    machine = _get(raw, "machine", str, source, p, choices=tuple(EMULATOR_MACHINES))
    if not machine.startswith(("mps2-", "mps3-")):
        raise _fail(source, p + "machine", "the emulator build needs an mps2 or mps3 machine")
    cpu = _get(raw, "qemu_cpu", str, source, p, default=None)
    trap = _get(raw, "unaligned_trap", bool, source, p, default=False)
    bm = _get(raw, "board_machine", str, source, p, default=None, choices=tuple(EMULATOR_MACHINES))
    bs = _get(raw, "board_serial", int, source, p, default=0, choices=range(8))
    _no_unknown(
        raw, {"machine", "qemu_cpu", "unaligned_trap", "board_machine", "board_serial"}, source, p
    )
    return EmulatorSpec(machine, cpu, trap, bm, bs)
