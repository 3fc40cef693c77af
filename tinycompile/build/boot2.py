"""The RP2040 second-stage boot (boot2): assembled from the project's runtime, padded to 252
bytes and sealed with the CRC-32 the boot ROM checks."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

from ..boards import Board
from ..errors import CompileError
from .templates import template_env, write_if_changed
from .toolchain import run_tool, tool_failure

# board files' flash.boot2 -> the project's source: the generic serial read (03h, any SPI NOR
# flash) or the quad continuous read of the Pico's W25Q080
BOOT2_SOURCES = {"rp2040-03h": "tc_boot2.S", "rp2040-w25q080": "tc_boot2_w25q080.S"}


def rp2040_boot2_crc32(data: bytes) -> int:
    """CRC-32 as the RP2040 boot ROM checks boot2: poly 0x04C11DB7, init 0xFFFFFFFF, MSB first,
    no reflection, no final XOR."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


def make_boot2(project_dir: Path, board: Board, tools: dict[str, str]) -> str:
    """Assemble the project's boot2, pad it to 252 bytes, append the CRC; returns the .S path."""
    assert board.flash is not None and board.flash.boot2 in BOOT2_SOURCES
    src = f"runtime/boards/rp2040/{BOOT2_SOURCES[board.flash.boot2]}"
    with tempfile.TemporaryDirectory(prefix="tc_boot2_") as tmp:
        obj = Path(tmp) / "boot2.o"
        raw = Path(tmp) / "boot2.bin"
        proc = run_tool(
            [tools["gcc"], *board.cpu_flags(), "-c", src, "-o", str(obj)],
            project_dir,
            "assembling boot2",
        )
        if proc.returncode:
            raise tool_failure(proc, f"assembling {src}")
        proc = run_tool(
            [tools["objcopy"], "-O", "binary", "-j", ".text.tc_boot2", str(obj), str(raw)],
            project_dir,
            "boot2 objcopy",
        )
        if proc.returncode:
            raise tool_failure(proc, "objcopy of boot2")
        code = raw.read_bytes()
    if not 0 < len(code) <= 252:
        raise CompileError(f"{src}: boot2 is {len(code)} bytes; it must fit in 252")
    payload = code.ljust(252, b"\0")
    crc = rp2040_boot2_crc32(payload)
    block = payload + struct.pack("<I", crc)
    lines = [", ".join(f"0x{b:02x}" for b in block[i : i + 16]) for i in range(0, 256, 16)]
    text = (
        template_env()
        .get_template("boot2_padded.S.j2")
        .render(code_size=len(code), crc=crc, lines=lines, source=Path(src).name)
    )
    rel = f"board/{board.name}/tc_boot2_padded.S"
    write_if_changed(project_dir / rel, text)
    return rel
