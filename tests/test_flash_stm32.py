"""`tinycompile flash` over the STM32 ROM bootloader (AN3155), against a simulated bootloader
behind a pseudo-terminal: what lands in the flash, byte for byte, and how faults end."""

from __future__ import annotations

import random

import pytest
from devicesim import Stm32RomSim
from flashkit import assert_failed_clearly, built, elf_segments, timed_cli  # noqa: F401

from tinycompile.boards import get_board

STM32 = ["stm32f746", "stm32f407", "stm32h743", "stm32u585"]


def make_sim(board: str, **kw) -> Stm32RomSim:
    b = get_board(board)
    bl = b.bootloader
    assert bl is not None and bl.product_id is not None and b.flash is not None
    old = random.Random(board).randbytes(b.flash.size)  # an older firmware everywhere
    kw.setdefault("product_id", bl.product_id)
    if b.uart.driver == "stm32u5":  # flash programmed by ECC'd quad-words (RM0456)
        kw.setdefault("write_unit", 16)
    return Stm32RomSim(sectors=list(bl.sectors), initial=old, **kw)


def flash_cli(build, board: str, sim: Stm32RomSim, *extra: str):
    return timed_cli(
        "flash", str(build), "--board", board, "--method", "stm32-uart", "--port", sim.slave_path,
        *extra,
    )  # fmt: skip


@pytest.mark.parametrize("board", STM32)
def test_flash_writes_exactly_the_firmware(built, board: str) -> None:  # noqa: F811
    build = built(board)
    segs = elf_segments(build, board)
    b = get_board(board)
    assert b.bootloader is not None and b.flash is not None
    with make_sim(board) as sim:
        before = bytes(sim.flash)
        r, _ = flash_cli(build, board, sim)
    assert sim.error is None, sim.error
    assert r.returncode == 0, r.stderr
    assert "verified" in r.stdout and sim.line_errors == 0
    assert ("refuses parity E" in r.stderr) == (not sim.parity_capable)
    origin = b.flash.origin
    lo = min(a for a, _ in segs)
    hi = max(a + len(d) for a, d in segs)
    covered = [i for i, (a, s) in enumerate(b.bootloader.sectors) if a < hi and lo < a + s]
    assert sorted(sim.erased) == covered  # erased once each, nothing else
    expect = bytearray(before)
    for i in covered:
        a, s = b.bootloader.sectors[i]
        expect[a - origin : a - origin + s] = b"\xff" * s
    for a, d in segs:
        expect[a - origin : a - origin + len(d)] = d
    assert sim.flash == expect  # the firmware, erased bytes, and untouched sectors
    fw_bin = (build / "build" / f"{board}-board" / "firmware.bin").read_bytes()
    assert sim.flash[: len(fw_bin)] == fw_bin  # objcopy's image of the same firmware
    assert sim.go_address == origin
    assert sim.log[:2] == ["get", "get_id"]


def test_legacy_erase_and_no_go(built) -> None:  # noqa: F811
    board = "stm32f407"
    build = built(board)
    with make_sim(board, legacy_erase=True) as sim:
        r, _ = flash_cli(build, board, sim, "--no-go")
    assert r.returncode == 0, r.stderr
    assert "erase_legacy" in sim.log and "erase_extended" not in sim.log
    assert sim.go_address is None and "skipped" in r.stdout
    for a, d in elf_segments(build, board):
        off = a - 0x08000000
        assert sim.flash[off : off + len(d)] == d


def test_boot_lines_on_a_pty_continue_with_a_notice(built) -> None:  # noqa: F811
    build = built("stm32f746")
    with make_sim("stm32f746") as sim:
        r, _ = flash_cli(build, "stm32f746", sim, "--boot-lines", "dtr-nrst-rts-boot0")
    assert r.returncode == 0, r.stderr
    assert "notice:" in r.stderr and "DTR/RTS" in r.stderr
    assert sim.go_address == 0x08000000


def test_a_lost_sync_byte_and_a_lost_read_byte_are_retried(built) -> None:  # noqa: F811
    build = built("stm32f746")
    with make_sim("stm32f746", drop_rx={0}) as sim:
        r, _ = flash_cli(build, "stm32f746", sim)
    assert r.returncode == 0, r.stderr
    # a byte of the first READ MEMORY answer lost on the way back: the read is asked again
    sim = make_sim("stm32f746")
    first_read = sim._read

    def lossy_read() -> None:
        sim._read = first_read
        sim.drop_tx.add(sim.ntx + 3 + 17)  # ACK(address) ACK(count) ACK, then data byte 17
        first_read()

    sim._read = lossy_read
    with sim:
        r, _ = flash_cli(build, "stm32f746", sim)
    assert r.returncode == 0, r.stderr
    segs = elf_segments(build, "stm32f746")
    size = max(a + len(d) for a, d in segs) - min(a for a, _ in segs)
    assert sim.log[-1] == "go" and "lossy_read" in sim.log  # the first READ lost a byte
    reads = sim.log.count("read") + sim.log.count("lossy_read")
    assert reads == -(-size // 256) + 1  # every block, one of them twice
    assert sim.go_address == 0x08000000


FAULTS = {
    "silence": ({"silent": True}, ["no answer from an STM32 bootloader"]),
    "wrong chip": (
        {"product_id": 0x413},
        ["found 0x413 (STM32F40x/41x), board stm32f746 expects 0x449"],
    ),
    "nack on write": ({"nack": 0x31}, ["NACK", "WRITE MEMORY"]),
    "nack on erase": ({"nack": 0x44}, ["NACK", "EXTENDED ERASE"]),
    "dropped byte in a write": ({"drop_rx": {900}}, ["no answer to WRITE MEMORY"]),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_faults_end_clearly_and_quickly(built, fault: str) -> None:  # noqa: F811
    kw, words = FAULTS[fault]
    build = built("stm32f746")
    with make_sim("stm32f746", **kw) as sim:
        r, elapsed = flash_cli(build, "stm32f746", sim)
    assert sim.error is None, sim.error
    assert_failed_clearly(r, elapsed, *words)
    assert sim.go_address is None


def test_verify_mismatch_is_reported_with_the_address(built) -> None:  # noqa: F811
    build = built("stm32f746")
    segs = dict(elf_segments(build, "stm32f746"))
    text = segs[0x08000000]
    addr = 0x08001200
    wrote = text[addr - 0x08000000]
    kept = wrote ^ 0x5A
    with make_sim("stm32f746", stuck=(addr, kept)) as sim:
        r, elapsed = flash_cli(build, "stm32f746", sim)
    want = f"verify failed at {addr:#010x}: wrote {wrote:#04x}, read {kept:#04x}"
    assert_failed_clearly(r, elapsed, want)
    assert sim.go_address is None


def test_a_missing_port(built) -> None:  # noqa: F811
    r, elapsed = timed_cli(
        "flash", str(built("stm32f746")), "--board", "stm32f746", "--method", "stm32-uart",
        "--port", "/dev/ttyNOPE9",
    )  # fmt: skip
    assert_failed_clearly(r, elapsed, "/dev/ttyNOPE9")


def test_the_simulator_refuses_a_wrong_checksum_and_an_unframed_line() -> None:
    """The simulator catches client bugs: a bad XOR checksum is NACKed, 0x7F on a wrongly
    framed line (two stop bits) ignored."""
    import os
    import termios
    import time

    with make_sim("stm32f746") as sim:
        fd = os.open(sim.slave_path, os.O_RDWR | os.O_NOCTTY)
        try:
            attrs = termios.tcgetattr(fd)
            good = attrs[2] | (termios.PARENB if sim.parity_capable else 0)
            attrs[2] = good | termios.CSTOPB
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            os.write(fd, b"\x7f")  # 8E2: the bootloader cannot lock on
            time.sleep(0.3)
            attrs[2] = good
            termios.tcsetattr(fd, termios.TCSANOW, attrs)
            os.write(fd, b"\x7f")
            time.sleep(0.3)
            assert os.read(fd, 10) == b"\x79"
            os.write(fd, bytes([0x31, 0xCE, 0x08, 0x00, 0x00, 0x00, 0x09]))  # XOR is 0x08
            time.sleep(0.3)
            assert os.read(fd, 10) == b"\x79\x1f"  # command ACKed, address NACKed
        finally:
            os.close(fd)
    assert sim.line_errors == 1
