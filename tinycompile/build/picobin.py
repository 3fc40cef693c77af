"""The RP2350's IMAGE_DEF block: the "picobin" metadata block its boot ROM looks for in the first
4 KB of an image before it boots it (RP2350 datasheet section 5.9, "Metadata block details";
the values below are those of pico-sdk's src/common/boot_picobin_headers/include/boot/picobin.h,
the layout that of its src/rp2_common/pico_crt0/embedded_start_block.inc.S).

A block is a list of 32-bit words: the start marker, the items (each opens with a byte naming
its type, then its size in words: one byte for the "1BS" types, two for the "2BS" ones), a LAST
item whose size is the number of words of the items before it, the offset in bytes from this
block to the next one of its loop (0: the block is a loop of its own) and the end marker. An
IMAGE_DEF block opens with an IMAGE_TYPE item; the boot ROM rejects an executable IMAGE_TYPE
that names another chip. Without a VECTOR_TABLE item the ROM takes the vector table at the
start of the image (pico-bootrom-rp2350 varm_launch_image.c), which is where ours is."""

from __future__ import annotations

from pathlib import Path

from ..boards import Board
from ..errors import CompileError
from .templates import template_env, write_if_changed

MARKER_START = 0xFFFFDED3  # PICOBIN_BLOCK_MARKER_START
MARKER_END = 0xAB123579  # PICOBIN_BLOCK_MARKER_END
ITEM_1BS_IMAGE_TYPE = 0x42  # PICOBIN_BLOCK_ITEM_1BS_IMAGE_TYPE
ITEM_2BS_LAST = 0xFF  # PICOBIN_BLOCK_ITEM_2BS_LAST (0x80 | 0x7f)
# IMAGE_TYPE flags (picobin.h PICOBIN_IMAGE_TYPE_*): image type in bits 0-3 (EXE 1), security
# in 4-5 (NS 1, S 2), CPU in 8-10 (ARM 0, RISC-V 1), chip in 12-14 (RP2040 0, RP2350 1)
IMAGE_TYPE_EXE = 0x1
EXE_SECURITY_S = 0x2 << 4
EXE_CPU_ARM = 0x0 << 8
EXE_CHIP_RP2350 = 0x1 << 12
IMAGE_TYPES = {"rp2350-arm-s": IMAGE_TYPE_EXE | EXE_SECURITY_S | EXE_CPU_ARM | EXE_CHIP_RP2350}
SEARCH_WINDOW = 4096  # the boot ROM finds the first block of an image in its first 4 KB


def image_def_words(kind: str) -> list[tuple[int, str]]:
    """The block of board files' ``flash.image_def`` kind, as (word, comment) pairs."""
    if kind not in IMAGE_TYPES:
        raise CompileError(f"unknown IMAGE_DEF kind {kind!r} (known: {', '.join(IMAGE_TYPES)})")
    flags = IMAGE_TYPES[kind]
    items = [
        (ITEM_1BS_IMAGE_TYPE | 1 << 8 | flags << 16, f"IMAGE_TYPE, 1 word: flags {flags:#06x}")
    ]
    last = ITEM_2BS_LAST | len(items) << 8  # its 2-byte size: the items' words before it
    return [
        (MARKER_START, "start marker"),
        *items,
        (last, f"LAST, the {len(items)} word(s) of items before it"),
        (0, "offset to the next block of the loop: 0, a loop of its own"),
        (MARKER_END, "end marker"),
    ]


def make_image_def(project_dir: Path, board: Board) -> str:
    """Write DIR/board/NAME/tc_image_def.S (section .tc_image_def, placed by the linker script
    right after the vector table); return its path relative to the project."""
    assert board.flash is not None and board.flash.image_def is not None
    words = image_def_words(board.flash.image_def)
    text = (
        template_env()
        .get_template("image_def.S.j2")
        .render(kind=board.flash.image_def, words=words, board=board)
    )
    rel = f"board/{board.name}/tc_image_def.S"
    write_if_changed(project_dir / rel, text)
    return rel
