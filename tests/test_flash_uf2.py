"""UF2 files checked against Microsoft's UF2 specification with the test's own parser, the copy
onto a (simulated) UF2 drive, and the checks made before any device is touched."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from flashkit import built, cli, elf_segments  # noqa: F401

from tinycompile.boards import load_board_file
from tinycompile.errors import CompileError

MAGIC0, MAGIC1, MAGIC_END, FLAG_FAMILY = 0x0A324655, 0x9E5D5157, 0x0AB16F30, 0x00002000


def parse_uf2(raw: bytes) -> tuple[dict[int, bytes], set[int]]:
    """{address: payload} and the family IDs of a UF2 file, every block checked."""
    assert len(raw) % 512 == 0 and raw
    blocks, families = {}, set()
    total = len(raw) // 512
    for i in range(total):
        blk = raw[i * 512 : (i + 1) * 512]
        m0, m1, flags, addr, size, no, count, family = struct.unpack_from("<8I", blk)
        assert (m0, m1, struct.unpack_from("<I", blk, 508)[0]) == (MAGIC0, MAGIC1, MAGIC_END)
        assert flags & FLAG_FAMILY and (no, count) == (i, total)
        assert size == 256 and addr % 256 == 0 and addr not in blocks
        blocks[addr] = blk[32 : 32 + size]
        families.add(family)
    return blocks, families


def expected(build: Path, board: str) -> tuple[int, bytes]:
    segs = elf_segments(build, board)
    lo = min(a for a, _ in segs)
    buf = bytearray(b"\xff" * (max(a + len(d) for a, d in segs) - lo))
    for a, d in segs:
        buf[a - lo : a - lo + len(d)] = d
    return lo, bytes(buf)


@pytest.mark.parametrize(
    "board,method,family,base",
    [("rp2040", [], 0xE48BFF56, 0x10000000), ("samd21", ["--method", "uf2"], 0x68ED2B88, 0x2000)],
)
def test_uf2_file_beside_the_firmware(built, board, method, family, base) -> None:  # noqa: F811
    build = built(board)
    uf2 = build / "build" / f"{board}-board" / "firmware.uf2"
    uf2.unlink(missing_ok=True)
    r = cli("flash", str(build), "--board", board, *method)
    assert r.returncode == 0, r.stderr
    assert "not copied" in r.stdout
    blocks, families = parse_uf2(uf2.read_bytes())
    assert families == {family}
    lo, data = expected(build, board)
    assert lo == base == min(blocks)
    assert sorted(blocks) == list(range(base, base + 256 * len(blocks), 256))
    payload = b"".join(blocks[a] for a in sorted(blocks))
    assert payload[: len(data)] == data and len(payload) - len(data) < 256


def drive(tmp_path: Path, board_id: str | None) -> Path:
    d = tmp_path / "RPI-RP2"
    d.mkdir()
    if board_id is not None:
        (d / "INFO_UF2.TXT").write_text(f"UF2 Bootloader v3.0\nModel: Pico\nBoard-ID: {board_id}\n")
    return d


def test_copy_onto_the_drive(built, tmp_path: Path) -> None:  # noqa: F811
    build = built("rp2040")
    d = drive(tmp_path, "RPI-RP2")
    r = cli("flash", str(build), "--board", "rp2040", "--drive", str(d))
    assert r.returncode == 0, r.stderr
    copied = (d / "firmware.uf2").read_bytes()
    assert copied == (build / "build" / "rp2040-board" / "firmware.uf2").read_bytes()
    assert parse_uf2(copied)[1] == {0xE48BFF56}


@pytest.mark.parametrize("board_id,words", [(None, "not a UF2 drive"), ("SAMD21G18A", "RPI-RP2")])
def test_wrong_drives_are_refused(built, tmp_path: Path, board_id, words) -> None:  # noqa: F811
    d = drive(tmp_path, board_id)
    r = cli("flash", str(built("rp2040")), "--board", "rp2040", "--drive", str(d))
    assert r.returncode == 3 and words in r.stderr, r.stderr
    assert not (d / "firmware.uf2").exists()
    assert "success" not in (r.stdout + r.stderr).lower()


def test_refused_before_any_device(built, tmp_path: Path) -> None:  # noqa: F811
    """Exit 2, and a port that does not exist is never opened (else it would be exit 3)."""
    nope = ["--port", "/dev/ttyNOPE7"]
    r = cli("flash", str(built("samd21")), "--board", "stm32f746", *nope)
    assert r.returncode == 2 and "built for board samd21, not stm32f746" in r.stderr
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (0x100000 + 4))
    r = cli("flash", str(big), "--board", "stm32f746", *nope)
    assert r.returncode == 2 and "too large for board stm32f746" in r.stderr, r.stderr
    r = cli("flash", str(built("samd21")), "--board", "samd21")
    assert r.returncode == 2 and "needs --port" in r.stderr
    r = cli("flash", str(built("samd21")), "--board", "qemu-m4", *nope)
    assert r.returncode == 2 and "has no flashing method" in r.stderr
    r = cli("flash", str(built("samd21")), "--board", "samd21", "--method", "stm32-uart", *nope)
    assert r.returncode == 2 and "sam-ba, uf2, openocd, gdb (its board" in r.stderr
    assert "not stm32-uart" in r.stderr


def test_help_says_how_to_wire_and_flash() -> None:
    r = cli("flash", "--help")
    assert r.returncode == 0
    for words in ("PA9", "BOOT0", "1200-baud touch", "BOOTSEL", "--drive", "--boot-lines"):
        assert words in r.stdout


def test_board_file_bootloader_checks(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parent.parent / "boards" / "stm32f746.toml"
    text = src.read_text()
    bad = tmp_path / "stm32f746.toml"
    bad.write_text(text.replace("[3, 0x40000]", "[2, 0x40000]"))
    with pytest.raises(CompileError, match="bootloader.sectors"):
        load_board_file(bad)
    # a huge count is refused at once, not expanded (the board fuzzer found it hanging)
    for huge, why in [("[10**12, 0x8000]", "more than 65536 sectors"), ("[70000, 1]", "65536")]:
        bad.write_text(text.replace("[4, 0x8000]", huge.replace("10**12", str(10**12))))
        with pytest.raises(CompileError, match=why):
            load_board_file(bad)
    bad.write_text(text.replace("[4, 0x8000]", "[40, 0x8000]"))
    with pytest.raises(CompileError, match="flash.size is 0x100000"):
        load_board_file(bad)
    # flash_methods: known names only; a bootloader method needs [bootloader], openocd [probe];
    # [bootloader] methods, when given, are exactly flash_methods' bootloader ones
    no_bl = text[: text.index("# Flashing over the ROM bootloader")]
    probe_only = no_bl.replace(', "stm32-uart"]', "]")
    methods = '"gdb", "stm32-uart"]'
    for bad_text, why in [
        (text.replace(methods, '"gdb", "jtag"]'), "'flash_methods': expected distinct names from"),
        (text.replace(methods, '"gdb", "gdb"]'), "'flash_methods'"),
        (text.replace(methods, '"gdb", "sam-ba"]'), "'bootloader.device_id': missing .needed by"),
        (
            text.replace("[bootloader]\n", '[bootloader]\nmethods = ["uf2"]\n'),
            "not the bootloader methods of flash_methods",
        ),
        (no_bl, "'bootloader': missing .needed by stm32-uart"),
        (probe_only.replace("[probe]", "[elsewhere]"), "'elsewhere': unknown field"),
        (probe_only.replace('openocd = ["board', 'x = ["b'), "'probe.x': unknown field"),
        (probe_only.replace("7discovery.cfg", "7; rm -rf ~"), "'probe.openocd': expected an"),
        (
            probe_only.replace("openocd = [", "gdb_port = 3\n#"),
            "missing probe.openocd .needed by the openocd method",
        ),
    ]:
        bad.write_text(bad_text)
        with pytest.raises(CompileError, match=why):
            load_board_file(bad)
    bad.write_text(text.replace("[bootloader]\n", '[bootloader]\nmethods = ["stm32-uart"]\n'))
    assert load_board_file(bad).bootloader.methods == ("stm32-uart",)
    b = load_board_file(src)
    assert b.bootloader is not None and len(b.bootloader.sectors) == 8
    assert b.bootloader.sectors[4] == (0x08020000, 0x20000)
