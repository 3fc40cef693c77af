"""What to flash: a build folder (report.json names its board; its firmware.elf gives the
load addresses) or a firmware file (.hex or .elf with addresses, .bin placed at the application
start), checked against the board's flash before any port is opened."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from ..boards import Board
from ..errors import CompileError


@dataclass(frozen=True)
class Image:
    """Contiguous bytes to write at ``address`` (gaps between segments filled with 0xFF)."""

    address: int
    data: bytes
    source: Path

    @property
    def end(self) -> int:
        return self.address + len(self.data)


def firmware_path(target: str | Path, board: Board) -> Path:
    """The firmware file of ``target``: the file itself, or a build folder's firmware.elf
    (refused when its report.json names another board or an emulator build)."""
    path = Path(target)
    if not path.exists():
        raise CompileError(f"{path}: no such build folder or firmware file")
    if path.is_file():
        return path
    report = path / "report.json"
    try:
        meta = json.loads(report.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompileError(f"{path}: not a build folder (no report.json)") from None
    except (OSError, ValueError) as e:
        raise CompileError(f"{report}: cannot read: {e}") from None
    built_for = meta.get("board") if isinstance(meta, dict) else None
    if built_for != board.name:
        raise CompileError(
            f"{path} was built for board {built_for}, not {board.name}"
            f" (rebuild: tinycompile build MODEL --board {board.name})"
        )
    variant = (meta.get("options") or {}).get("variant")
    if variant != "board":
        raise CompileError(f"{path} is an {variant} build; flash needs a board build")
    fw = path / "build" / f"{board.name}-board" / "firmware.elf"
    if not fw.is_file():
        raise CompileError(f"{path}: {fw.relative_to(path)} is missing (rebuild the folder)")
    return fw


def _hex_segments(text: str, source: Path) -> list[tuple[int, bytes]]:
    segs: list[tuple[int, bytes]] = []
    upper = 0
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            if not line.startswith(":"):
                raise ValueError
            rec = bytes.fromhex(line[1:])
        except ValueError:
            raise CompileError(f"{source}:{n}: not an Intel hex record") from None
        if len(rec) < 5 or len(rec) != rec[0] + 5 or sum(rec) & 0xFF:
            raise CompileError(f"{source}:{n}: bad Intel hex record (length or checksum)")
        kind, data = rec[3], rec[4:-1]
        offset = rec[1] << 8 | rec[2]
        if kind == 0:
            segs.append((upper + offset, data))
        elif kind == 1:
            return segs
        elif kind == 2:
            upper = (data[0] << 8 | data[1]) << 4
        elif kind == 4:
            upper = (data[0] << 8 | data[1]) << 16
    raise CompileError(f"{source}: Intel hex file without an end record (truncated?)")


def _elf_segments(raw: bytes, source: Path) -> list[tuple[int, bytes]]:
    if raw[:4] != b"\x7fELF" or raw[4] != 1 or raw[5] != 1:
        raise CompileError(f"{source}: not a 32-bit little-endian ELF file")
    (phoff,) = struct.unpack_from("<I", raw, 28)
    phentsize, phnum = struct.unpack_from("<HH", raw, 42)
    segs = []
    for i in range(phnum):
        p_type, off, _vaddr, paddr, filesz = struct.unpack_from("<5I", raw, phoff + i * phentsize)
        if p_type == 1 and filesz:  # PT_LOAD with bytes in the file: they go to flash at paddr
            segs.append((paddr, raw[off : off + filesz]))
    return segs


def load_image(path: Path, board: Board) -> Image:
    """Read a .hex, .elf or .bin and check it lies in the board's application flash."""
    assert board.flash is not None
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CompileError(f"{path}: cannot read: {e.strerror}") from None
    suffix = path.suffix.lower()
    if suffix == ".hex":
        segs = _hex_segments(raw.decode("ascii", "replace"), path)
    elif suffix == ".elf":
        segs = _elf_segments(raw, path)
    elif suffix == ".bin":
        segs = [(board.flash.app_origin, raw)]
    else:
        raise CompileError(f"{path}: give a build folder or a .hex, .elf or .bin file")
    segs = [(a, d) for a, d in segs if d]
    if not segs:
        raise CompileError(f"{path}: no bytes to flash")
    start = min(a for a, _ in segs)
    end = max(a + len(d) for a, d in segs)
    fl = board.flash
    if start < fl.app_origin or start >= fl.origin + fl.size:
        where = (
            f"the bootloader region {fl.origin:#x}..{fl.app_origin:#x}"
            if (fl.origin <= start < fl.app_origin)
            else "outside the board's flash"
        )
        raise CompileError(
            f"{path}: image starts at {start:#010x}, {where}; board {board.name}'s application"
            f" flash is {fl.app_origin:#010x}..{fl.origin + fl.size:#010x}"
        )
    if end > fl.origin + fl.size:
        raise CompileError(
            f"{path}: image of {end - start:,} bytes at {start:#010x} is too large for board"
            f" {board.name}'s flash ({fl.origin + fl.size - start:,} bytes from there)"
        )
    buf = bytearray(b"\xff" * (end - start))
    for a, d in segs:
        buf[a - start : a - start + len(d)] = d
    return Image(start, bytes(buf), path)


def ihex(image: Image, entry: int | None = None) -> str:
    """The image as Intel hex: 16-byte data records, an extended linear address record at
    every 64 KB boundary, a start linear address record for ``entry``, the end record."""

    def rec(kind: int, addr: int, data: bytes) -> str:
        body = bytes([len(data), addr >> 8 & 0xFF, addr & 0xFF, kind]) + data
        return f":{body.hex().upper()}{-sum(body) & 0xFF:02X}"

    lines, upper = [], None
    for off in range(0, len(image.data), 16):
        addr = image.address + off
        if addr >> 16 != upper:
            upper = addr >> 16
            lines.append(rec(4, 0, upper.to_bytes(2, "big")))
        chunk = image.data[off : off + 16]
        if addr >> 16 != (addr + len(chunk) - 1) >> 16:  # a record never crosses 64 KB
            cut = 0x10000 - (addr & 0xFFFF)
            lines.append(rec(0, addr & 0xFFFF, chunk[:cut]))
            upper = (addr + cut) >> 16
            lines.append(rec(4, 0, upper.to_bytes(2, "big")))
            lines.append(rec(0, 0, chunk[cut:]))
            continue
        lines.append(rec(0, addr & 0xFFFF, chunk))
    if entry is not None:
        lines.append(rec(5, 0, entry.to_bytes(4, "big")))
    lines.append(rec(1, 0, b""))
    return "\n".join(lines) + "\n"


def vectors(image: Image) -> tuple[int, int]:
    """The initial stack pointer and reset handler of an image that starts with its vector
    table (every Cortex-M application image)."""
    if len(image.data) < 8:
        raise CompileError(f"{image.source}: too short to start with a vector table")
    return struct.unpack_from("<II", image.data, 0)
