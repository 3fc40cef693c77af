"""Boards: the `Board` data (spec.py) and the TOML board files it is loaded from (loader.py,
field by field: fields.py)."""

from __future__ import annotations

from .fields import DRIVER_CORES, UART_DRIVERS
from .loader import (
    BUILTIN_BOARDS_DIR,
    ENV_VAR,
    TIMERS,
    board_dirs,
    get_board,
    list_boards,
    load_board_file,
)
from .spec import (
    CORE_FPUS,
    EMULATOR_MACHINES,
    HOST,
    Board,
    BootloaderSpec,
    EmulatorSpec,
    FlashSpec,
    MemRegion,
    UartSpec,
)

__all__ = [
    "BUILTIN_BOARDS_DIR",
    "CORE_FPUS",
    "DRIVER_CORES",
    "EMULATOR_MACHINES",
    "ENV_VAR",
    "HOST",
    "TIMERS",
    "UART_DRIVERS",
    "Board",
    "BootloaderSpec",
    "EmulatorSpec",
    "FlashSpec",
    "MemRegion",
    "UartSpec",
    "board_dirs",
    "get_board",
    "list_boards",
    "load_board_file",
]
