"""The Raspberry Pi Pico 2 (rp2350) board build: the IMAGE_DEF block its boot ROM needs in the
image's first 4 KB, parsed from the linked ELF and binary by this file's own reader of the
block format; its UF2 (the RP2350 Arm Secure family, opened by the RP2350-E10 absolute block);
the console's measurement of the ring oscillator; the board file's new fields refused where they
do not belong.

The block format, as this file reads it (RP2350 datasheet section 5.9, "Metadata block details";
the numbers as pico-sdk's boot_picobin_headers/picobin.h has them, and as the boot ROM's
varm_blocks.c parses them): 32-bit little-endian words; 0xFFFFDED3 starts a block; each item
opens with its type byte, then its size in words (one byte, or two where the type's top bit is
set); the first item of an IMAGE_DEF is IMAGE_TYPE (0x42, 1 word; flags in its upper half: image
type bits 0-3 with EXE = 1, security bits 4-5 with S = 2, CPU bits 8-10 with Arm = 0, chip bits
12-14 with RP2350 = 1); the LAST item (0xFF) holds the number of item words before it; then the
byte offset of the next block of the loop (0: this one) and 0xAB123579."""

from __future__ import annotations

import dataclasses
import struct
import subprocess
from pathlib import Path

import pytest
from flashkit import built, cli  # noqa: F401
from test_clocks import run_model
from test_firmware import SAMPLES, make_project

from tinycompile.boards import get_board, load_board_file
from tinycompile.build import build_firmware
from tinycompile.build.clocks import clock_defines
from tinycompile.errors import CompileError

START, END = 0xFFFFDED3, 0xAB123579
ARM_S_FAMILY, ABSOLUTE_FAMILY = 0xE48BFF59, 0xE48BFF57  # uf2.h: RP2350_ARM_S, ABSOLUTE
ROOT = Path(__file__).resolve().parent.parent


def find_blocks(image: bytes, window: int = 4096) -> list[tuple[int, list[tuple[int, bytes]], int]]:
    """Every block whose start marker lies in the first ``window`` bytes, word aligned: (offset,
    items as (type, body), link). A start marker without a well-formed block fails."""
    out = []
    for off in range(0, min(window, len(image)) - 3, 4):
        if struct.unpack_from("<I", image, off)[0] != START:
            continue
        pos, items = off + 4, []
        while True:
            kind = image[pos]
            if kind & 0x80:  # a two-byte size
                size = struct.unpack_from("<H", image, pos + 1)[0]
            else:
                size = image[pos + 1]
            if kind == 0xFF:  # LAST: the words of the items before it
                assert size == (pos - off - 4) // 4, (size, pos - off)
                link, end = struct.unpack_from("<iI", image, pos + 4)
                assert end == END
                out.append((off, items, link))
                break
            assert size > 0
            items.append((kind, image[pos : pos + 4 * size]))
            pos += 4 * size
    return out


@pytest.fixture(scope="module")
def pico2_build(tmp_path_factory: pytest.TempPathFactory):
    proj = make_project(tmp_path_factory.mktemp("rp2350") / "proj")
    return build_firmware(proj, "rp2350", variant="board", test_inputs=[SAMPLES[0]])


def test_image_def_block_in_the_first_4k(pico2_build) -> None:
    image = pico2_build.bin.read_bytes()
    blocks = find_blocks(image)
    assert len(blocks) == 1
    off, items, link = blocks[0]
    assert link == 0  # a loop of its own
    assert off + 4 * (2 + sum(len(body) // 4 for _, body in items) + 2) <= 4096
    kind, body = items[0]
    assert kind == 0x42 and len(body) == 4  # IMAGE_TYPE first, one word
    flags = struct.unpack_from("<H", body, 2)[0]
    fields = (flags & 0xF, (flags >> 4) & 3, (flags >> 8) & 7, (flags >> 12) & 7, flags >> 15)
    assert fields == (1, 2, 0, 1, 0)  # EXE, Secure, Arm, RP2350, no try-before-you-buy
    assert len(items) == 1
    # the boot ROM takes the vector table at the image's start: SP at the top of the 520 KB,
    # the reset handler in this image (Thumb)
    sp, reset = struct.unpack_from("<2I", image, 0)
    assert sp == 0x20082000 and reset & 1 and 0x10000000 < reset < 0x10000000 + len(image)
    # the ELF says the same: a section of its own, right after the vectors
    heads = subprocess.run(
        ["arm-none-eabi-objdump", "-h", str(pico2_build.elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    i = heads.index(".tc_image_def")
    size, vma = int(heads[i + 1], 16), int(heads[i + 2], 16)
    assert (vma, size) == (0x10000000 + off, 20) and off == 0x40
    assert (pico2_build.project_dir / "board/rp2350/tc_image_def.S").is_file()


def test_uf2_opens_with_the_e10_block(pico2_build) -> None:
    image = pico2_build.bin.read_bytes()
    raw = pico2_build.uf2.read_bytes()
    assert len(raw) % 512 == 0
    blocks = [raw[i : i + 512] for i in range(0, len(raw), 512)]
    n = (len(image) + 255) // 256
    assert len(blocks) == n + 1
    for i, blk in enumerate(blocks):
        m0, m1, flags, addr, size, no, count, family = struct.unpack_from("<8I", blk)
        assert (m0, m1, struct.unpack_from("<I", blk, 508)[0]) == (
            0x0A324655,
            0x9E5D5157,
            0x0AB16F30,
        )
        assert flags & 0x2000 and size == 256  # family ID present
        if i == 0:  # picotool's --abs-block: ABSOLUTE family, 0xEF, block 0 of 2, "ignore" tag
            assert (family, addr, no, count) == (ABSOLUTE_FAMILY, 0x10FFFF00, 0, 2)
            assert flags & 0x8000 and blk[32:288] == b"\xef" * 256
            assert struct.unpack_from("<I", blk, 288)[0] == 0x9957E304
            continue
        assert (family, no, count, flags) == (ARM_S_FAMILY, i - 1, n, 0x2000)
        assert addr == 0x10000000 + 256 * (i - 1)
        assert blk[32:288] == image[256 * (i - 1) : 256 * i].ljust(256, b"\0")


def test_flash_writes_the_same_uf2_and_checks_the_drive(built, tmp_path: Path) -> None:  # noqa: F811
    build = built("rp2350")
    d = tmp_path / "RP2350"
    d.mkdir()
    (d / "INFO_UF2.TXT").write_text(
        "UF2 Bootloader v1.0\nModel: Raspberry Pi RP2350\nBoard-ID: RP2350\n"
    )  # the boot ROM's defaults (pico-bootrom-rp2350 usb_virtual_disk.c)
    r = cli("flash", str(build), "--board", "rp2350", "--drive", str(d))
    assert r.returncode == 0, r.stderr
    copied = (d / "firmware.uf2").read_bytes()
    assert copied == (build / "build" / "rp2350-board" / "firmware.uf2").read_bytes()
    assert struct.unpack_from("<I", copied, 28)[0] == ABSOLUTE_FAMILY
    assert struct.unpack_from("<I", copied, 512 + 28)[0] == ARM_S_FAMILY
    rp2040 = tmp_path / "RPI-RP2"
    rp2040.mkdir()
    (rp2040 / "INFO_UF2.TXT").write_text("UF2 Bootloader v3.0\nModel: Pico\nBoard-ID: RPI-RP2\n")
    r = cli("flash", str(build), "--board", "rp2350", "--drive", str(rp2040))
    assert r.returncode == 3 and "expects 'RP2350'" in r.stderr, r.stderr


@pytest.mark.parametrize("rosc_hz", [4_600_000, 12_000_000, 23_000_000])
def test_console_measures_the_ring_oscillator(rosc_hz: int, tmp_path_factory) -> None:
    """As on the RP2040 (tests/test_board_fixes.py): without the crystal the console times the
    host's zero bytes, through the RX pad it set up (the model's GPIO_IN reads 0 while the pad is
    isolated or its input is off), and sets the UART for the clock measured (the boot ROM gives
    the ROSC about 12 MHz, at most 23 MHz)."""
    facts, regs, _ = run_model(
        "rp2350", "xtal", tmp_path_factory.getbasetemp() / "clock_models", str(rosc_hz)
    )
    ibrd, fbrd = regs[0x40070024], regs[0x40070028]
    baud = 4 * rosc_hz / (64 * ibrd + fbrd)
    assert abs(baud - 115200) / 115200 < 0.035, (baud, ibrd, fbrd)
    assert facts["source"] == "rosc_baud" and facts["received"] == "0x00"
    bound = 5 / (9 * rosc_hz / 115200) + 1e-6
    assert abs(int(facts["clock_hz"]) - rosc_hz) / rosc_hz <= bound, (facts, bound)
    assert (facts["glitches"], facts["pad_order"]) == ("0", "0")


def test_board_facts_and_refusals(tmp_path: Path) -> None:
    b = get_board("rp2350")
    assert (b.core, b.fpu, b.timer, b.clock_hz) == ("cortex-m33", "fpv5-sp-d16", "dwt", 150 * 10**6)
    assert (b.flash.origin, b.flash.size, b.flash.reserved) == (0x10000000, 4 << 20, 0)
    assert (b.main_sram.origin, b.sram_bytes) == (0x20000000, 520 * 1024)
    assert b.flash.image_def == "rp2350-arm-s" and b.flash.boot2 is None
    assert b.bootloader.uf2_family_id == ARM_S_FAMILY and b.bootloader.uf2_board_id == "RP2350"
    assert b.emulator.machine == "mps2-an505" and b.flash_methods[0] == "uf2"
    assert "target/rp2350.cfg" in b.probe.openocd
    defs = dict(clock_defines(b))  # pico-sdk's default for the RP2350: 12 MHz * 125 / 5 / 2
    assert [defs[f"TC_PLL_{k}"] for k in ("REFDIV", "FBDIV", "POSTDIV1", "POSTDIV2")] == [
        "1u",
        "125u",
        "5u",
        "2u",
    ]
    with pytest.raises(CompileError, match="above the part's 150000000"):
        clock_defines(dataclasses.replace(b, clock_hz=156_000_000))
    text = (ROOT / "boards" / "rp2350.toml").read_text()
    bad = tmp_path / "rp2350.toml"
    for change, why in [
        (('core = "cortex-m33"', 'core = "cortex-m7"'), "IMAGE_DEF needs a cortex-m33"),
        (('driver = "rp2350"', 'driver = "rp2040"'), "uart.driver"),
        (('image_def = "rp2350-arm-s"', 'image_def = "rp2350-riscv"'), "flash.image_def"),
        (("uf2_abs_block = 0x10ffff00", "uf2_abs_block = 0x10ffff80"), "flash.uf2_abs_block"),
        (("origin = 0x10000000\n", "origin = 0x10000000\nreserved = 0x100\n"), "flash.image_def"),
    ]:
        bad.write_text(text.replace(*change))
        with pytest.raises(CompileError, match=why):
            load_board_file(bad)
