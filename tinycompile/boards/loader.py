"""Board files: one TOML file per board, loaded and validated into a `Board`; lookup by name.

Built-in boards live in the repository's ``boards/`` folder. Users add boards by dropping a
``NAME.toml`` file into a folder named by the ``TINYCOMPILE_BOARDS_DIR`` environment variable
(several folders separated by ``os.pathsep``; they take precedence over the built-in ones), or by
passing the file's path wherever a board name is accepted. The special board ``host`` has no core:
it stands for the host C compiler.

File format (sizes and addresses are integers; TOML accepts ``0x08000000`` and ``1_048_576``)::

    name = "stm32f746"                  # must equal the file name without .toml
    description = "STM32F746G-DISCO"
    core = "cortex-m7"                  # cortex-m0plus | cortex-m3 | cortex-m4 | cortex-m7 |
                                        # cortex-m33 | cortex-m55
    fpu = "fpv5-sp-d16"                 # none | fpv4-sp-d16 | fpv5-sp-d16 | fpv5-d16 | auto (M55)
    clock_hz = 216_000_000              # core clock the board firmware sets up
    reset_clock_hz = 16_000_000         # optional: the clock it falls back to (default clock_hz)
    crystal_hz = 25_000_000             # optional: the board's crystal (STM32 HSE, SAMD21 XOSC32K)
    crystal_bypass = false              # optional: HSE is an external clock (ST-LINK MCO)
    max_clock_hz = 216_000_000          # optional: the part's maximum
    timer = "dwt"                       # optional: dwt (M3/M4/M7 default) | systick (M0+)
    caches = true                       # optional, Cortex-M7/M55: enable I/D caches at reset
    stack_bytes = 8192                  # optional: the stack reserve where the firmware's call
                                        # graph gives no bound (default 4096; else the reserve
                                        # is that bound + 64, tinycompile/build/stack.py)
    flash_methods = ["openocd", "probe-drive", "gdb", "stm32-uart"]   # `tinycompile flash`'s
                                        # methods, the first its default: openocd | gdb |
                                        # probe-drive ([probe]) | stm32-uart | sam-ba | uf2
                                        # ([bootloader]); none: an emulator-only board

    [flash]
    origin = 0x08000000
    size = 0x100000
    reserved = 0                        # optional: bytes at the start kept for a bootloader
    boot2 = "rp2040-w25q080"            # optional (RP2040 only): project's second-stage boot
                                        # (rp2040-w25q080: quad reads; rp2040-03h: any flash)
    uf2_family_id = 0xe48bff56          # optional: also write a .uf2 image
    image_def = "rp2350-arm-s"          # optional (RP2350 only): the boot ROM's IMAGE_DEF block
                                        # after the vector table (build/picobin.py)
    uf2_abs_block = 0x10ffff00          # optional: the UF2 opens with an ignored ABSOLUTE-family
                                        # block there (RP2350-E10, as picotool --abs-block)
    atoc_cpu = "M55_HP"                 # optional (Alif Ensemble): also write firmware.atoc.json,
                                        # the SE tools' ATOC entry booting the image on that core

    [[sram]]                            # the first region holds .data, .bss (arena), stack
    name = "sram"
    origin = 0x20000000
    size = 0x50000

    [uart]                              # console used by the real-board firmware
    driver = "stm32f7"                  # stm32f4|stm32f7|stm32h7|stm32u5|samd21|nrf52|rp2040|
                                        # rp2350|alif|cmsdk
    instance = 1
    tx = "PA9"
    rx = "PB7"
    af = 7                              # driver-specific keys: see UART_DRIVERS
    baud = 115200

    [emulator]
    machine = "mps2-an500"              # QEMU machine running the emulator (semihosting) build
    qemu_cpu = "cortex-m7"              # optional -cpu override
    unaligned_trap = false              # optional: set UNALIGN_TRP (M0+ code on an M3 machine)
    board_machine = "netduinoplus2"     # optional: QEMU model that runs the real-board build
    board_serial = 1                    # optional: index of its console among QEMU's -serial ports

    [probe]                             # optional: the debug probe (boards/probe.py)
    [bootloader]                        # with a bootloader method (boards/bootloader.py)
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import CompileError
from ..paths import BOARDS_DIR
from .fields import (
    _fail,
    _get,
    _no_unknown,
    _parse_emulator,
    _parse_flash,
    _parse_sram,
    _parse_uart,
    _positive,
)
from .spec import (
    CORE_FPUS,
    HOST,
    Board,
    BootloaderSpec,
    FlashSpec,
    ProbeSpec,
)

BUILTIN_BOARDS_DIR = BOARDS_DIR
ENV_VAR = "TINYCOMPILE_BOARDS_DIR"
TIMERS = ("dwt", "systick")
# `tinycompile flash` methods (tinycompile/flash/): through the board's debug probe (openocd,
# gdb, probe-drive) or its bootloader (stm32-uart, sam-ba, uf2: [bootloader])
FLASH_METHODS = ("openocd", "gdb", "probe-drive", "stm32-uart", "sam-ba", "uf2")

# Board text reaches generated C comments, linker scripts, Makefiles and paths: keep it to safe
# sets. Without '*' no comment can be opened or closed; without '?' and backslash no trigraph or
# line splice can occur.
_BOARD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_DESCRIPTION = re.compile(r"[A-Za-z0-9 _.,:;=+()\[\]#@&%'<>|~^!$/-]{0,200}")


def load_board_file(path: str | Path) -> Board:
    """Load and validate one board file; errors name the file and the field."""
    source = Path(path)
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompileError("board file not found", source=str(source)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise CompileError(f"cannot read board file: {e}", source=str(source)) from None
    except tomllib.TOMLDecodeError as e:
        raise CompileError(f"not valid TOML: {e}", source=str(source)) from None

    name = _get(raw, "name", str, source)
    if name != source.stem:
        raise _fail(source, "name", f"{name!r} must match the file name {source.stem!r}")
    if name == HOST.name:
        raise _fail(source, "name", "'host' is reserved for the host C compiler")
    if not _BOARD_NAME.fullmatch(name):
        raise _fail(source, "name", f"{name!r}: use letters, digits, '_', '.' and '-' only")
    description = _get(raw, "description", str, source, default=name)
    if not _DESCRIPTION.fullmatch(description):
        raise _fail(
            source,
            "description",
            "printable ASCII only, without '*', '\\', '?' or '\"' (it is copied"
            " into generated C comments)",
        )
    core = _get(raw, "core", str, source, choices=tuple(CORE_FPUS))
    fpu = _get(raw, "fpu", str, source, default="none", choices=CORE_FPUS[core])
    clock_hz = _positive(_get(raw, "clock_hz", int, source), source, "clock_hz")
    max_clock = _get(raw, "max_clock_hz", int, source, default=clock_hz)
    if max_clock < clock_hz:
        raise _fail(source, "max_clock_hz", "must be at least clock_hz")
    reset_clock = _positive(
        _get(raw, "reset_clock_hz", int, source, default=clock_hz), source, "reset_clock_hz"
    )
    if reset_clock > clock_hz:
        raise _fail(source, "reset_clock_hz", "must be at most clock_hz")
    crystal = _get(raw, "crystal_hz", int, source, default=0)
    if crystal < 0:
        raise _fail(source, "crystal_hz", f"must not be negative, got {crystal}")
    bypass = _get(raw, "crystal_bypass", bool, source, default=False)
    default_timer = "systick" if core == "cortex-m0plus" else "dwt"
    timer = _get(raw, "timer", str, source, default=default_timer, choices=TIMERS)
    if timer == "dwt" and core == "cortex-m0plus":
        raise _fail(source, "timer", "Cortex-M0+ has no DWT cycle counter; use systick")
    caches = _get(raw, "caches", bool, source, default=False)
    if caches and core not in ("cortex-m7", "cortex-m55"):
        raise _fail(source, "caches", "only Cortex-M7 and Cortex-M55 boards have L1 caches")
    stack = _get(raw, "stack_bytes", int, source, default=4096)
    if stack < 512 or stack % 8:
        raise _fail(source, "stack_bytes", f"must be a multiple of 8, at least 512, got {stack}")
    methods = _get(raw, "flash_methods", list, source, default=[])
    if not all(isinstance(m, str) and m in FLASH_METHODS for m in methods) or len(
        set(methods)
    ) != len(methods):
        raise _fail(
            source, "flash_methods", f"expected distinct names from {', '.join(FLASH_METHODS)}"
        )
    flash = _parse_flash(raw.get("flash"), source) if "flash" in raw else None
    if flash is None:
        raise _fail(source, "flash", "missing")
    if flash.boot2 and core != "cortex-m0plus":
        raise _fail(source, "flash.boot2", "the RP2040 second-stage boot needs a cortex-m0plus")
    if flash.image_def and (core != "cortex-m33" or flash.boot2 or flash.reserved):
        raise _fail(
            source,
            "flash.image_def",
            "the RP2350 IMAGE_DEF needs a cortex-m33 image at the flash origin",
        )
    if flash.atoc_cpu and core != "cortex-m55":
        raise _fail(source, "flash.atoc_cpu", "an Alif Ensemble ATOC entry needs a cortex-m55")
    sram = _parse_sram(raw.get("sram"), source)
    if "uart" not in raw:
        raise _fail(source, "uart", "missing")
    uart = _parse_uart(raw["uart"], source, core)
    if "emulator" not in raw:
        raise _fail(source, "emulator", "missing")
    emulator = _parse_emulator(raw["emulator"], source)
    known = {
        "name",
        "description",
        "core",
        "fpu",
        "clock_hz",
        "reset_clock_hz",
        "crystal_hz",
        "crystal_bypass",
        "max_clock_hz",
        "timer",
        "caches",
        "stack_bytes",
        "flash_methods",
        "flash",
        "sram",
        "uart",
        "emulator",
        "bootloader",
        "probe",
    }
    _no_unknown(raw, known, source, "")
    if stack >= sram[0].size:
        raise _fail(source, "stack_bytes", "the stack reserve does not fit in the first SRAM")
    return Board(
        name=name,
        description=description,
        core=core,
        fpu=fpu,
        clock_hz=clock_hz,
        reset_clock_hz=reset_clock,
        crystal_hz=crystal,
        crystal_bypass=bypass,
        max_clock_hz=max_clock,
        timer=timer,
        caches=caches,
        stack_bytes=stack,
        flash=flash,
        sram=sram,
        uart=uart,
        flash_methods=tuple(methods),
        emulator=emulator,
        source=source,
        bootloader=_bootloader(raw, source, flash, tuple(methods)),
        probe=_probe(raw, source, tuple(methods)),
    )


def _bootloader(
    raw: dict[str, Any], source: Path, flash: FlashSpec, methods: tuple[str, ...]
) -> BootloaderSpec | None:
    """The ``[bootloader]`` table (boards/bootloader.py validates it): there when flash_methods
    names a bootloader's method, and only then."""
    from .bootloader import METHODS, parse_bootloader

    wanted = tuple(m for m in methods if m in METHODS)
    if "bootloader" not in raw:
        if wanted:
            raise _fail(source, "bootloader", f"missing (needed by {wanted[0]})")
        return None
    return parse_bootloader(raw["bootloader"], source, flash, wanted)


def _probe(raw: dict[str, Any], source: Path, methods: tuple[str, ...]) -> ProbeSpec | None:
    """The optional ``[probe]`` table (boards/probe.py); the openocd method needs its scripts."""
    from .probe import parse_probe

    spec = parse_probe(raw["probe"], source) if "probe" in raw else None
    if "openocd" in methods and (spec is None or not spec.openocd):
        raise _fail(source, "probe", "missing probe.openocd (needed by the openocd method)")
    return spec


def board_dirs() -> list[Path]:
    """Folders searched for NAME.toml: $TINYCOMPILE_BOARDS_DIR entries first, then built-ins."""
    dirs = [Path(p) for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p]
    return dirs + [BUILTIN_BOARDS_DIR]


def _board_files() -> Iterator[Path]:
    for d in board_dirs():
        if d.is_dir():
            yield from sorted(d.glob("*.toml"))


def get_board(name: str | Path | Board) -> Board:
    """Return the board named `name` (or loaded from a .toml path); `host` is the host compiler."""
    if isinstance(name, Board):
        return name
    text = str(name)
    if text == HOST.name:
        return HOST
    if isinstance(name, Path) or text.endswith(".toml") or os.sep in text or "/" in text:
        return load_board_file(text)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", text):
        raise CompileError(f"invalid board name {text!r}")
    for d in board_dirs():
        path = d / f"{text}.toml"
        if path.is_file():
            return load_board_file(path)
    known = ", ".join(b.name for b in list_boards(include_host=True))
    raise CompileError(f"unknown board {text!r} (known: {known})")


def list_boards(*, include_host: bool = False) -> list[Board]:
    """All boards, sorted by name; a user board shadows a built-in one of the same name."""
    seen: dict[str, Board] = {}
    for path in _board_files():
        if path.stem not in seen:
            seen[path.stem] = load_board_file(path)
    boards = sorted(seen.values(), key=lambda b: b.name)
    return ([HOST] if include_host else []) + boards
