"""Board files: loading, validation errors, user boards, fit verdicts, RP2040 boot2 checksum."""

from __future__ import annotations

import os
import random
import re
import zlib
from pathlib import Path

import pytest
from conftest import MODELS, ROOT

from tinycompile import api, boards
from tinycompile.boards import get_board, list_boards, load_board_file
from tinycompile.build import rp2040_boot2_crc32
from tinycompile.errors import CompileError, DoesNotFit
from tinycompile.fit import check_fit, raise_if_too_big

HARDWARE_BOARDS = {"stm32f746", "stm32f407", "samd21", "nrf52840", "rp2040", "stm32h743", "rp2350"}
HARDWARE_BOARDS |= {"alif-e7-hp"}
HARDWARE_BOARDS |= {"stm32u585"}
EMULATOR_BOARDS = {"qemu-m3", "qemu-m4", "qemu-m7", "qemu-m33", "qemu-m55"}

GOOD = """\
name = "{name}"
description = "a test board"
core = "cortex-m4"
fpu = "fpv4-sp-d16"
clock_hz = 16_000_000
flash_methods = ["gdb"]

[flash]
origin = 0x08000000
size = 0x40000

[[sram]]
name = "sram"
origin = 0x20000000
size = 0x10000

[uart]
driver = "stm32f4"
instance = 2
tx = "PA2"
rx = "PA3"
af = 7

[emulator]
machine = "mps2-an386"
"""


def test_builtin_boards_load() -> None:
    names = {b.name for b in list_boards()}
    assert HARDWARE_BOARDS | EMULATOR_BOARDS <= names
    for b in list_boards():
        assert b.core in boards.CORE_FPUS and b.fpu in boards.CORE_FPUS[b.core]
        assert b.flash is not None and b.flash_bytes > 0 and b.sram_bytes > b.stack_bytes
        assert b.emulator is not None and b.emulator.machine.startswith(("mps2-", "mps3-"))
        assert b.uart is not None and b.uart.baud == 115200
        assert (b.name in HARDWARE_BOARDS) == b.has_hardware
        assert b.source is not None and b.source.name == f"{b.name}.toml"


def test_board_facts() -> None:
    f7 = get_board("stm32f746")
    assert (f7.core, f7.fpu, f7.caches) == ("cortex-m7", "fpv5-sp-d16", True)
    assert (f7.flash.origin, f7.flash_bytes) == (0x08000000, 1 << 20)
    assert (f7.main_sram.origin, f7.sram_bytes) == (0x20000000, 320 * 1024)
    assert (f7.uart.driver, f7.uart.instance, f7.uart.tx, f7.uart.rx) == (
        "stm32f7",
        1,
        "PA9",
        "PB7",
    )
    assert (f7.clock_hz, f7.reset_clock_hz, f7.max_clock_hz) == (
        216_000_000,
        16_000_000,
        216_000_000,
    )
    assert (f7.crystal_hz, f7.crystal_bypass) == (25_000_000, False)
    h7 = get_board("stm32h743")
    assert (h7.clock_hz, h7.reset_clock_hz, h7.crystal_hz, h7.crystal_bypass) == (
        400_000_000,
        64_000_000,
        8_000_000,
        True,
    )
    assert get_board("qemu-m3").reset_clock_hz == get_board("qemu-m3").clock_hz == 25_000_000
    zero = get_board("samd21")
    assert zero.core == "cortex-m0plus" and zero.timer == "systick"
    assert zero.flash.app_origin == 0x2000 and zero.flash_bytes == 248 * 1024
    assert zero.sram_bytes == 32 * 1024 and zero.emulator.unaligned_trap
    assert (zero.uart.instance, zero.uart.tx, zero.uart.rx) == (5, "PB22", "PB23")
    pico = get_board("rp2040")
    assert pico.flash.boot2 == "rp2040-w25q080" and pico.flash.origin == 0x10000000
    assert pico.sram_bytes == 264 * 1024 and pico.flash.uf2_family_id == 0xE48BFF56
    h7 = get_board("stm32h743")
    assert h7.fpu == "fpv5-d16" and h7.main_sram.origin == 0x24000000
    assert {r.name for r in h7.sram} == {"axi_sram", "dtcm", "sram123", "sram4"}
    assert get_board("stm32f407").emulator.board_machine == "netduinoplus2"
    assert get_board("nrf52840").uart.tx == "P0.06"
    assert get_board("qemu-m7").emulator.machine == "mps2-an500"


def test_cpu_flags() -> None:
    assert get_board("samd21").cpu_flags() == ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"]
    assert get_board("stm32h743").cpu_flags() == [
        "-mcpu=cortex-m7",
        "-mthumb",
        "-mfpu=fpv5-d16",
        "-mfloat-abi=hard",
    ]


def test_host_board() -> None:
    host = get_board("host")
    assert host.is_host and host.core is None and host.cpu_flags() == []
    assert "host" in {b.name for b in list_boards(include_host=True)}
    assert "host" not in {b.name for b in list_boards()}


def test_unknown_board() -> None:
    with pytest.raises(CompileError, match="unknown board 'nope'.*stm32f746"):
        get_board("nope")


def test_board_by_path_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "myboard.toml"
    path.write_text(GOOD.format(name="myboard"))
    b = get_board(str(path))
    assert b.name == "myboard" and b.source == path
    assert get_board(path).sram_bytes == 0x10000
    with pytest.raises(CompileError, match="unknown board"):
        get_board("myboard")
    other = tmp_path / "more"
    other.mkdir()
    (other / "stm32f407.toml").write_text(GOOD.format(name="stm32f407"))  # shadows built-in
    monkeypatch.setenv(boards.ENV_VAR, os.pathsep.join([str(tmp_path), str(other)]))
    assert get_board("myboard").description == "a test board"
    assert get_board("stm32f407").sram_bytes == 0x10000
    names = [b.name for b in list_boards()]
    assert names.count("stm32f407") == 1 and "myboard" in names


@pytest.mark.parametrize(
    ("edit", "field_msg"),
    [
        (lambda t: t.replace('core = "cortex-m4"\n', ""), "field 'core': missing"),
        (lambda t: t.replace('"cortex-m4"', '"cortex-m85"'), "field 'core': 'cortex-m85' is not"),
        (lambda t: t.replace('"fpv4-sp-d16"', '"fpv5-d16"'), "field 'fpu': 'fpv5-d16' is not"),
        (
            lambda t: t.replace("clock_hz = 16_000_000", 'clock_hz = "fast"'),
            "field 'clock_hz': expected int, got str",
        ),
        (
            lambda t: t.replace("clock_hz = 16_000_000", "clock_hz = 16\nreset_clock_hz = 17"),
            "field 'reset_clock_hz': must be at most clock_hz",
        ),
        (
            lambda t: t.replace("clock_hz = 16_000_000", "clock_hz = 16\ncrystal_hz = -1"),
            "field 'crystal_hz': must not be negative",
        ),
        (lambda t: t.replace("size = 0x40000", "size = 0"), "field 'flash.size': must be positive"),
        (
            lambda t: t.replace("size = 0x10000", "size = -4"),
            r"field 'sram\[0\].size': must be positive",
        ),
        (lambda t: t.replace('tx = "PA2"', 'tx = "PZ2"'), "field 'uart.tx': 'PZ2' is not a pin"),
        (lambda t: t.replace("af = 7", "af = 99"), "field 'uart.af': 99 is not one of 0..15"),
        (
            lambda t: t.replace('driver = "stm32f4"', 'driver = "samd21"'),
            "field 'uart.driver': driver samd21 is for",
        ),
        (
            lambda t: t.replace('machine = "mps2-an386"', 'machine = "virt"'),
            "field 'emulator.machine'",
        ),
        (lambda t: t.replace('name = "bad"', 'name = "other"'), "field 'name': 'other' must match"),
        (lambda t: "turbo = true\n" + t, "field 'turbo': unknown field"),
        (lambda t: t + "turbo = true\n", "field 'emulator.turbo': unknown field"),
        (
            lambda t: t.replace('fpu = "fpv4-sp-d16"', 'fpu = "fpv4-sp-d16"\ntimer = "rtc"'),
            "field 'timer'",
        ),
        (lambda t: t.replace("[[sram]]", "[sram]"), "field 'sram': expected a non-empty array"),
        (lambda t: t.replace("[emulator]", "[emulator"), "not valid TOML"),
    ],
)
def test_malformed_board_file(tmp_path: Path, edit, field_msg: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(edit(GOOD.format(name="bad")))
    with pytest.raises(CompileError, match=field_msg) as info:
        load_board_file(path)
    assert str(path) in str(info.value)  # the message names the file
    assert "\n" not in str(info.value)


def test_malformed_board_in_env_dir_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken.toml").write_text('name = "broken"\ncore = 7\n')
    monkeypatch.setenv(boards.ENV_VAR, str(tmp_path))
    with pytest.raises(CompileError, match=r"broken\.toml: field 'core': expected str"):
        list_boards()
    with pytest.raises(CompileError, match="broken.toml"):
        get_board("broken")


def test_check_fit(tmp_path: Path) -> None:
    """Arena + stack + runtime against SRAM, weights + code against flash (estimates); only what
    is certain refuses before compiling; host fits anything."""
    small = api.plan(ROOT / "examples" / "digits.tflite")
    big = api.plan(MODELS / "ic_resnet8.tflite")  # about 33 KB of arena, 81 KB of weights
    zero = get_board("samd21")  # 32 KB SRAM, 256 KB flash
    v = check_fit(small, zero)
    assert v.fits and v.sram_need == small.arena_bytes + zero.stack_bytes + 512
    raise_if_too_big(v)
    v = check_fit(big, zero)
    assert not v.fits and not v.fits_sram and v.fits_flash
    with pytest.raises(
        DoesNotFit,
        match=rf"^m\.tflite: does not fit board samd21: SRAM needs at least "
        rf"[\d,]+ B \(arena {big.arena_bytes:,} \+ stack 512\)",
    ) as info:
        raise_if_too_big(v, source="m.tflite")
    assert "peak set by op #" in str(info.value) and "flash" not in str(info.value)
    (tmp_path / "tiny.toml").write_text(GOOD.format(name="tiny").replace("0x40000", "0x8000"))
    v = check_fit(big, tmp_path / "tiny.toml")  # 64 KB SRAM, 32 KB flash
    assert v.fits_sram and not v.fits_flash
    with pytest.raises(
        DoesNotFit,
        match=rf"does not fit board tiny: flash needs "
        rf"{big.flash_bytes:,} B for weights and tables alone, of 32,768$",
    ):
        raise_if_too_big(v)
    # over only on the estimate (weights fit, weights + the code allowance do not): the linker
    # decides, so nothing is refused before compiling
    v = check_fit(small, tmp_path / "tiny.toml")
    v.flash_total = small.flash_bytes + 1000
    assert not v.fits and not v.certainly_too_big
    raise_if_too_big(v)
    assert check_fit(big, "host").fits


def _reflect(value: int, bits: int) -> int:
    return int(f"{value:0{bits}b}"[::-1], 2)


def _mpeg2_crc_via_zlib(data: bytes) -> int:
    """CRC-32/MPEG-2 from zlib's reflected CRC-32: reflect every input byte, undo the final XOR
    and reflect the result (the reflected algorithm is the mirror image of the plain one)."""
    mirrored = bytes(_reflect(b, 8) for b in data)
    return _reflect(zlib.crc32(mirrored) ^ 0xFFFFFFFF, 32)


def test_rp2040_crc_matches_independent_computation() -> None:
    assert rp2040_boot2_crc32(b"123456789") == 0x0376E6E7  # CRC-32/MPEG-2 check value
    assert _mpeg2_crc_via_zlib(b"123456789") == 0x0376E6E7
    rng = random.Random(7)
    for n in (0, 1, 252, 1000):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert rp2040_boot2_crc32(data) == _mpeg2_crc_via_zlib(data)


def test_plan_board_advises_when_sram_is_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """plan --board on a model whose arena is over: the strategies in order of cost with the
    arena each reaches (never growing down the list), the last row the live-bytes bound of the
    smallest plan. ResNet-8 on the samd21 without streaming: only running its first layers by
    rows fits, and it says how. On a 16 KB board nothing fits, and it says so. Exit 1."""
    from tinycompile.cli import main

    model = MODELS / "ic_resnet8.tflite"
    assert main(["plan", str(model), "--board", "samd21", "--stream", "off"]) == 1
    text = capsys.readouterr().out
    rows = re.findall(r"^    (.+?)\s+([\d,]+) B  (fits|over)$", text, re.M)
    assert [r[0].split(" (")[0].split(",")[0].split(" #")[0] for r in rows] == [
        "model order",
        "+ shared and in-place layers",
        "+ the best schedule",
        "+ ops",
        "lower bound of that schedule",
    ]
    arenas = [int(r[1].replace(",", "")) for r in rows]
    assert arenas == sorted(arenas, reverse=True)
    p = api.plan(model, stream="off")
    smallest = api.plan(model, stream="min")
    assert arenas[2] == p.arena_bytes and arenas[3:] == [smallest.arena_bytes] * 2
    assert arenas[0] == 3 * 32 * 32 * 16  # three 32x32x16 tensors live at once, nothing shared
    assert [r[2] for r in rows] == ["over", "over", "over", "fits", "fits"]
    assert "+ ops #0 #1 #2 #3 #4 #6 #5 #7 by rows" in text and "--stream min" in text
    small = tmp_path / "small16.toml"
    small.write_text(GOOD.format(name="small16").replace("0x10000", "0x4000"))
    assert main(["plan", str(model), "--board", str(small)]) == 1
    text = capsys.readouterr().out
    assert "no placement fits, even with the first layers run by rows" in text
    assert main(["plan", str(ROOT / "examples" / "digits.tflite"), "--board", "samd21"]) == 0
    assert "SRAM left for the arena" not in capsys.readouterr().out


def test_plan_board_advises_when_flash_is_short(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23: VWW's 249 KB of weights on the 256 KB SAMD21: flash is over; the advice says by
    how much, the largest weight layers (from the plan's own table), that streaming does not
    help flash, and which listed boards the plan fits (those with the SRAM and flash for it)."""
    from tinycompile.cli import main
    from tinycompile.fit import check_fit

    model = MODELS / "vww_mobilenet.tflite"
    assert main(["plan", str(model), "--board", "samd21"]) == 1
    text = capsys.readouterr().out
    assert re.search(r"OVER flash\s+~[\d,]+ of\s+253,952 B", text)  # 256 KB less its bootloader
    p = api.plan(model, board="samd21")
    top = max(p.layers, key=lambda la: la.flash_bytes)
    assert f"the largest weights: op #{top.op_index} {top.kind} {top.flash_bytes:,} B" in text
    assert "saves SRAM, not flash" in text
    listed = re.search(
        r"listed boards this plan fits \(SRAM and flash, estimate\): ([^\n]+(?:\n  [^\n]+)*)", text
    )
    names = listed.group(1).replace("\n  ", " ").split(", ")
    assert "stm32f746" in names and "samd21" not in names
    for name in names:
        v = check_fit(p, name)
        assert v.sram_need <= v.sram_total and v.flash_need <= v.flash_total
