"""On-device validation: the framed protocol the board firmware answers on its console
(protocol.py, device.py), `tinycompile validate` (session.py: outputs compared with TFLM,
cycles), and QEMU as the board on a pseudo-terminal (emulate.py)."""

from __future__ import annotations

from .device import Device
from .emulate import EmulatedBoard, board_elf, emulated_board, validate_on_emulator
from .protocol import Frame, FrameReader, Hello, encode, parse_hello
from .session import InputResult, ValidateReport, validate

__all__ = [
    "Device",
    "EmulatedBoard",
    "Frame",
    "FrameReader",
    "Hello",
    "InputResult",
    "ValidateReport",
    "board_elf",
    "emulated_board",
    "encode",
    "parse_hello",
    "validate",
    "validate_on_emulator",
]
