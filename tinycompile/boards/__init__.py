"""Boards: the `Board` data (spec.py) and the TOML board files it is loaded from (loader.py)."""

from __future__ import annotations

from .loader import (
    BUILTIN_BOARDS_DIR,
    DRIVER_CORES,
    ENV_VAR,
    TIMERS,
    UART_DRIVERS,
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
