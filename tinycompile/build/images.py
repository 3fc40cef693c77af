"""Flashable images from a linked ELF: raw binary and Intel hex (objcopy), UF2 for boards with a
UF2 family, and the Alif SE tools' ATOC entry for Alif Ensemble boards."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from .toolchain import run_tool, tool_failure

UF2_MAGIC = (0x0A324655, 0x9E5D5157, 0x0AB16F30)
# pico-sdk src/common/boot_uf2_headers/include/boot/uf2.h: flags, the ABSOLUTE family and the RP2
# extension tag "ignore this block" (size 4, type 0x9957e3)
UF2_FLAG_FAMILY_ID_PRESENT = 0x00002000
UF2_FLAG_EXTENSION_FLAGS_PRESENT = 0x00008000
ABSOLUTE_FAMILY_ID = 0xE48BFF57
UF2_EXTENSION_RP2_IGNORE_BLOCK = 0x9957E304


def uf2_abs_block(address: int) -> bytes:
    """The block an RP2350 UF2 opens with against erratum RP2350-E10, as picotool writes it
    (elf2uf2.cpp gen_abs_block): ABSOLUTE family, 256 bytes of 0xEF at ``address``, block 0 of
    2, and the RP2 "ignore block" extension tag after the payload."""
    flags = UF2_FLAG_FAMILY_ID_PRESENT | UF2_FLAG_EXTENSION_FLAGS_PRESENT
    head = struct.pack(
        "<8I", UF2_MAGIC[0], UF2_MAGIC[1], flags, address, 256, 0, 2, ABSOLUTE_FAMILY_ID
    )
    data = (b"\xef" * 256 + struct.pack("<I", UF2_EXTENSION_RP2_IGNORE_BLOCK)).ljust(476, b"\0")
    return head + data + struct.pack("<I", UF2_MAGIC[2])


def uf2_image(image: bytes, base: int, family: int, abs_block: int | None = None) -> bytes:
    """UF2 container (256-byte payloads) for drag-and-drop flashing; with ``abs_block``, opened
    by the RP2350-E10 block at that address (``uf2_abs_block``)."""
    n = (len(image) + 255) // 256
    out = bytearray(uf2_abs_block(abs_block) if abs_block is not None else b"")
    for i in range(n):
        chunk = image[i * 256 : (i + 1) * 256].ljust(256, b"\0")
        out += struct.pack(
            "<8I", UF2_MAGIC[0], UF2_MAGIC[1], 0x00002000, base + 256 * i, 256, i, n, family
        )
        out += chunk.ljust(476, b"\0") + struct.pack("<I", UF2_MAGIC[2])
    return bytes(out)


def write_images(
    tools: dict[str, str],
    project: Path,
    elf_rel: str,
    uf2: tuple[int, int] | tuple[int, int, int | None] | None,
) -> tuple[Path, Path, Path | None]:
    """Write firmware.bin and firmware.hex beside the ELF (`elf_rel`, relative to `project`), and
    firmware.uf2 when `uf2` gives (base address, family id[, RP2350-E10 block address]); return
    their paths."""
    stem = elf_rel.removesuffix(".elf")
    for fmt, ext in (("binary", "bin"), ("ihex", "hex")):
        proc = run_tool([tools["objcopy"], "-O", fmt, elf_rel, f"{stem}.{ext}"], project, "objcopy")
        if proc.returncode:
            raise tool_failure(proc, f"objcopy -O {fmt}")
    bin_path, hex_path = project / f"{stem}.bin", project / f"{stem}.hex"
    if uf2 is None:
        return bin_path, hex_path, None
    uf2_path = project / f"{stem}.uf2"
    uf2_path.write_bytes(uf2_image(bin_path.read_bytes(), *uf2))
    return bin_path, hex_path, uf2_path


def alif_atoc_config(binary: str, address: int, cpu: str) -> str:
    """The Alif SE tools' ATOC configuration booting ``binary`` in place from MRAM at ``address``
    on core ``cpu`` (M55_HP, M55_HE), for ``app-gen-toc -f`` then ``app-write-mram``: the SE's
    device configuration (the tools' own app-device-config.json: clocks, pins) and the image, as
    Alif's examples write it (github:alifsemi/alif_vscode-template .alif/M55_HP_cfg.json; the
    DFP's Boards/*/Examples/*/.alif/*_mram_cfg.json), unsigned as there."""
    entries = {
        "DEVICE": {
            "disabled": False,
            "binary": "app-device-config.json",
            "version": "0.5.00",
            "signed": True,
        },
        "TC_APP": {
            "disabled": False,
            "binary": binary,
            "version": "1.0.0",
            "signed": False,
            "mramAddress": f"0x{address:08X}",
            "cpu_id": cpu,
            "flags": ["boot"],
        },
    }
    return json.dumps(entries, indent=4) + "\n"
