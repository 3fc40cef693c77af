"""Board data: the validated `Board` and its parts (flash, SRAM regions, console UART, the
QEMU machine standing in for it), the known emulator machines and the `host` pseudo-board."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CompileError

CORE_FPUS: dict[str, tuple[str, ...]] = {
    "cortex-m0plus": ("none",),
    "cortex-m3": ("none",),
    "cortex-m4": ("none", "fpv4-sp-d16"),
    "cortex-m7": ("none", "fpv5-sp-d16", "fpv5-d16"),
    "cortex-m33": ("none", "fpv5-sp-d16"),
    "cortex-m55": ("none", "auto"),  # auto: what -mcpu gives, the FPU with MVE (Helium) float
}

# QEMU machines this project knows how to drive: CPU, SysTick clock (cpuclk) and memory map.
EMULATOR_MACHINES: dict[str, dict[str, Any]] = {
    "mps2-an385": {
        "cpu": "cortex-m3",
        "systick_hz": 25_000_000,
        "code": (0x0, 0x400000),
        "ram": (0x20000000, 0x400000),
    },
    "mps2-an386": {
        "cpu": "cortex-m4",
        "systick_hz": 25_000_000,
        "code": (0x0, 0x400000),
        "ram": (0x20000000, 0x400000),
    },
    "mps2-an500": {
        "cpu": "cortex-m7",
        "systick_hz": 25_000_000,
        "code": (0x0, 0x400000),
        "ram": (0x20000000, 0x400000),
    },
    # AN505 (Cortex-M33, TrustZone): the core starts Secure, so code and data use the Secure
    # aliases of ZBT SSRAM1 (0x10000000) and SSRAM2/3 (0x38000000); SysTick on the 20 MHz SYSCLK.
    "mps2-an505": {
        "cpu": "cortex-m33",
        "systick_hz": 20_000_000,
        "code": (0x10000000, 0x400000),
        "ram": (0x38000000, 0x400000),
    },
    # AN547 (Cortex-M55 with Helium, TrustZone; SSE-300): the core starts Secure; the reset
    # vector table is read from the ITCM (512 KB, Secure alias 0x10000000), so the image lives
    # there; data in the 4 MB SRAM behind the DTCM (Secure alias 0x31000000). SysTick: 32 MHz.
    "mps3-an547": {
        "cpu": "cortex-m55",
        "systick_hz": 32_000_000,
        "code": (0x10000000, 0x80000),
        "ram": (0x31000000, 0x400000),
    },
    "netduinoplus2": {
        "cpu": "cortex-m4",
        "systick_hz": 168_000_000,
        "code": (0x08000000, 0x100000),
        "ram": (0x20000000, 0x20000),
    },
}


@dataclass(frozen=True)
class MemRegion:
    """A named memory range."""

    name: str
    origin: int
    size: int

    @property
    def end(self) -> int:
        return self.origin + self.size


@dataclass(frozen=True)
class FlashSpec:
    """On-chip (or XIP) flash; the application starts after `reserved` bytes."""

    origin: int
    size: int
    reserved: int = 0
    boot2: str | None = None
    uf2_family_id: int | None = None
    image_def: str | None = None  # RP2350: the boot ROM's IMAGE_DEF block (build/picobin.py)
    uf2_abs_block: int | None = None  # RP2350-E10: the UF2's leading ABSOLUTE-family block
    atoc_cpu: str | None = None  # Alif Ensemble: the SE's ATOC entry's cpu_id (M55_HP, M55_HE)

    @property
    def app_origin(self) -> int:
        return self.origin + self.reserved

    @property
    def app_size(self) -> int:
        return self.size - self.reserved


@dataclass(frozen=True)
class UartSpec:
    """The console UART of the real-board firmware."""

    driver: str
    instance: int
    tx: str | None
    rx: str | None
    baud: int = 115200
    clock_hz: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EmulatorSpec:
    """How QEMU stands in for the board."""

    machine: str
    qemu_cpu: str | None = None
    unaligned_trap: bool = False
    board_machine: str | None = None
    board_serial: int = 0

    @property
    def systick_hz(self) -> int:
        return EMULATOR_MACHINES[self.machine]["systick_hz"]


@dataclass(frozen=True)
class BootloaderSpec:
    """How `tinycompile flash` programs the board (the board file's ``[bootloader]``).

    ``methods``: stm32-uart (ROM bootloader, AN3155), sam-ba (Arduino SAM-BA monitor), uf2
    (mass-storage drive); the first is the default. ``sectors`` are (address, size) of every
    erasable sector in the bootloader's numbering (sector i is ``sectors[i]``)."""

    methods: tuple[str, ...]
    baud: int = 115200
    usart: int | None = None
    tx: str | None = None
    rx: str | None = None
    product_id: int | None = None
    part: str | None = None
    sectors: tuple[tuple[int, int], ...] = ()
    device_id: int | None = None
    device_id_mask: int = 0xFFFFFFFF
    buffer: int | None = None
    buffer_size: int = 0
    page_size: int = 0
    uf2_family_id: int | None = None
    uf2_board_id: str | None = None


@dataclass(frozen=True)
class ProbeSpec:
    """The board's debug probe (the board file's ``[probe]``, boards/probe.py): OpenOCD's
    scripts and commands for it, its GDB server's default port, its USB drive's label."""

    openocd: tuple[str, ...] = ()
    gdb_port: int = 3333
    drive_label: str | None = None

    def openocd_args(self) -> list[str]:
        """OpenOCD's command line for the probe: ``-f`` per script, ``-c`` per command."""
        out: list[str] = []
        for x in self.openocd:
            out += ["-f", x] if x.endswith(".cfg") else ["-c", x]
        return out


@dataclass(frozen=True)
class Board:
    """A validated board description (see the module docstring for the file format)."""

    name: str
    description: str
    core: str | None
    fpu: str = "none"
    clock_hz: int = 0
    reset_clock_hz: int = 0
    crystal_hz: int = 0
    crystal_bypass: bool = False
    max_clock_hz: int = 0
    timer: str = "systick"
    caches: bool = False
    stack_bytes: int = 4096
    flash: FlashSpec | None = None
    sram: tuple[MemRegion, ...] = ()
    uart: UartSpec | None = None
    flash_methods: tuple[str, ...] = ()
    emulator: EmulatorSpec | None = None
    source: Path | None = None
    bootloader: BootloaderSpec | None = None
    probe: ProbeSpec | None = None

    @property
    def is_host(self) -> bool:
        """True for the special `host` board (host C compiler, no Cortex-M core)."""
        return self.core is None

    @property
    def main_sram(self) -> MemRegion:
        """The region holding data, bss (the arena) and the stack."""
        if not self.sram:
            raise CompileError(f"board {self.name} has no SRAM region")
        return self.sram[0]

    @property
    def sram_bytes(self) -> int:
        return self.main_sram.size

    @property
    def flash_bytes(self) -> int:
        """Flash available to the application (after any bootloader reserve)."""
        return self.flash.app_size if self.flash else 0

    @property
    def has_hardware(self) -> bool:
        """False for emulator-only boards (no flashing method)."""
        return bool(self.flash_methods)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description (for `tinycompile boards --json`)."""
        if self.is_host:
            return {"name": self.name, "description": self.description, "core": None}
        assert self.flash is not None and self.uart is not None and self.emulator is not None
        return {
            "name": self.name,
            "description": self.description,
            "core": self.core,
            "fpu": self.fpu,
            "clock_hz": self.clock_hz,
            "reset_clock_hz": self.reset_clock_hz,
            "crystal_hz": self.crystal_hz,
            "max_clock_hz": self.max_clock_hz,
            "timer": self.timer,
            "flash": {
                "origin": self.flash.origin,
                "size": self.flash.size,
                "reserved": self.flash.reserved,
                "app_origin": self.flash.app_origin,
                "app_size": self.flash.app_size,
                "boot2": self.flash.boot2,
                "image_def": self.flash.image_def,
            },
            "sram": [{"name": r.name, "origin": r.origin, "size": r.size} for r in self.sram],
            "stack_bytes": self.stack_bytes,
            "uart": {
                "driver": self.uart.driver,
                "instance": self.uart.instance,
                "tx": self.uart.tx,
                "rx": self.uart.rx,
                "baud": self.uart.baud,
            },
            "flash_methods": list(self.flash_methods),
            "emulator": {
                "machine": self.emulator.machine,
                "board_machine": self.emulator.board_machine,
            },
            "emulator_only": not self.has_hardware,
            "source": str(self.source) if self.source else None,
        }

    @staticmethod
    def header() -> str:
        """The column titles above `line()`s."""
        return f"{'board':<11} {'core':<6} {'fpu':<12} {'clock':<12} {'memory':<31}description"

    def line(self) -> str:
        """One line for `tinycompile boards` (columns as in ``header``)."""
        if self.is_host:
            return f"{self.name:<11} {'-':<6} {'-':<12} {'-':<12} {'-':<31}{self.description}"
        core = (self.core or "").replace("cortex-", "")
        fpu = "" if self.fpu == "none" else self.fpu
        mhz = f"{self.clock_hz / 1e6:.4g}"
        if self.max_clock_hz > self.clock_hz:
            mhz += f"/{self.max_clock_hz / 1e6:.4g}"
        return (
            f"{self.name:<11} {core:<6} {fpu:<12} {mhz + ' MHz':<12} "
            f"flash {self.flash_bytes // 1024:>5} KB  SRAM {self.sram_bytes // 1024:>5} KB  "
            f"{self.description}"
        )

    def cpu_flags(self) -> list[str]:
        """arm-none-eabi-gcc flags selecting the core, Thumb and the float ABI."""
        if self.core is None:
            return []
        flags = [f"-mcpu={self.core}", "-mthumb"]
        if self.fpu == "none":
            flags.append("-mfloat-abi=soft")
        else:
            flags += [f"-mfpu={self.fpu}", "-mfloat-abi=hard"]
        return flags


HOST = Board(name="host", description="host C compiler (no Cortex-M core)", core=None)
