"""`tinycompile flash` to an Arduino Zero's SAM-BA monitor, against a simulated sketch (the
1200-baud touch) and bootloader behind pseudo-terminals: the flash read back byte for byte,
the bootloader region untouched, and how faults end."""

from __future__ import annotations

import random

import pytest
from devicesim import SambaSim
from devicesim.samba import crc16_xmodem
from flashkit import assert_failed_clearly, built, cli, elf_segments, timed_cli  # noqa: F401

from tinycompile.flash.samba import crc16

FLASH, RESERVED = 0x40000, 0x2000


def make_sim(**kw) -> SambaSim:
    old = bytearray(random.Random(21).randbytes(FLASH))
    old[:RESERVED] = old[:RESERVED].replace(b"\xff", b"\x00")  # a bootloader: never 0xFF
    return SambaSim(initial=bytes(old), **kw)


def flash_cli(build, sim: SambaSim, *extra: str):
    return timed_cli("flash", str(build), "--board", "samd21", "--port", sim.path, *extra)


def check_flashed(build, sim: SambaSim, before: bytes) -> None:
    assert sim.flash[:RESERVED] == before[:RESERVED]  # the bootloader, untouched
    expect = bytearray(before[:RESERVED] + b"\xff" * (FLASH - RESERVED))
    for a, d in elf_segments(build, "samd21"):
        assert a >= RESERVED
        expect[a : a + len(d)] = d
    assert sim.flash == expect
    fw_bin = (build / "build" / "samd21-board" / "firmware.bin").read_bytes()
    assert sim.flash[RESERVED : RESERVED + len(fw_bin)] == fw_bin
    assert sim.resets == 1 and sim.app_started


def test_crc16_matches_the_simulators_own() -> None:
    assert crc16(b"123456789") == crc16_xmodem(b"123456789") == 0x31C3  # CRC-16/XMODEM check
    data = random.Random(1).randbytes(4096)
    assert crc16(data) == crc16_xmodem(data)


@pytest.mark.parametrize("rename", [False, True], ids=["same-name", "renamed"])
def test_touch_then_flash_exactly_the_firmware(built, rename: bool) -> None:  # noqa: F811
    build = built("samd21")
    with make_sim(rename=rename) as sim:
        before = bytes(sim.flash)
        extra = ["--bootloader-port", sim.boot_path] if rename else []
        r, _ = flash_cli(build, sim, "--wait", "5", *extra)
    assert sim.error is None, sim.error
    assert r.returncode == 0, r.stderr
    assert sim.touched and "verified" in r.stdout
    check_flashed(build, sim, before)
    assert sim.log[:3] == ["N", "V", "w"]


@pytest.mark.parametrize("flag", [[], ["--no-touch"]], ids=["default", "no-touch"])
def test_already_in_the_bootloader_without_touch(built, flag: list[str]) -> None:  # noqa: F811
    """Issue 22 #8: by default the touch is sent only when no monitor answers on the port: a
    board whose bootloader runs (double-tapped RESET: tinycompile's firmware has no USB port)
    is flashed without one, and without --no-touch."""
    build = built("samd21")
    with make_sim(start_in_bootloader=True) as sim:
        before = bytes(sim.flash)
        r, _ = flash_cli(build, sim, *flag)
    assert r.returncode == 0, r.stderr
    assert not sim.touched and not sim.touched_bootloader
    check_flashed(build, sim, before)


def test_touch_forced(built) -> None:  # noqa: F811
    with make_sim(start_in_bootloader=True) as sim:
        r, _ = flash_cli(built("samd21"), sim, "--touch")
    assert r.returncode == 0, r.stderr
    assert sim.touched_bootloader


def test_s_command_and_its_data_in_separate_writes(built, monkeypatch) -> None:  # noqa: F811
    """Issue 22 #8: the SAM-BA firmware loses data sharing a USB packet with the S command;
    every S command goes out alone, drained, before its data (as BOSSA flushes)."""
    from tinycompile.flash import FlashOptions, flash
    from tinycompile.serialport import Port

    writes: list[bytes] = []
    real = Port.write

    def write(self, data: bytes) -> None:
        writes.append(bytes(data))
        real(self, data)

    monkeypatch.setattr(Port, "write", write)
    with make_sim(start_in_bootloader=True) as sim:
        flash(built("samd21"), "samd21", FlashOptions(port=sim.path), "sam-ba")
    s_cmds = [i for i, w in enumerate(writes) if w[:1] == b"S"]
    assert s_cmds
    for i in s_cmds:
        n = int(writes[i][10:18], 16)
        assert writes[i].endswith(b"#") and len(writes[i]) == 19, writes[i][:24]
        assert len(writes[i + 1]) == n


FAULTS = {
    "touch ignored": ({"touch_works": False}, ["no SAM-BA bootloader answered"]),
    "silence": ({"silent": True}, ["no SAM-BA bootloader answered"]),
    "wrong chip": ({"device_id": 0x10010003}, ["found device ID 0x10010003", "0x10010005"]),
    "no answer to a write": ({"y_silent": True}, ["no answer to Y (write"]),
    "dropped reply byte": ({"drop_tx": {60}}, ["no answer to"]),
    "verify mismatch": ({"stuck": (0x2345, None)}, ["verify failed at 0x00002345: wrote"]),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_faults_end_clearly_and_quickly(built, fault: str) -> None:  # noqa: F811
    kw, words = FAULTS[fault]
    build = built("samd21")
    if "stuck" in kw:  # a cell keeping another value than the firmware's
        image = dict(elf_segments(build, "samd21"))[RESERVED]
        wrote = image[0x2345 - RESERVED]
        kw = {"stuck": (0x2345, wrote ^ 0xA5)}
        words = [f"verify failed at 0x00002345: wrote {wrote:#04x}, read {wrote ^ 0xA5:#04x}"]
    with make_sim(**kw) as sim:
        before = bytes(sim.flash)
        r, elapsed = flash_cli(build, sim, "--wait", "1.5")
    assert sim.error is None, sim.error
    assert_failed_clearly(r, elapsed, *words)
    assert sim.flash[:RESERVED] == before[:RESERVED]
    assert sim.resets == 0


def test_an_image_below_the_bootloader_is_refused_before_the_port(tmp_path) -> None:
    # an Intel hex file with 16 bytes at 0x1000, inside the 8 KB bootloader region
    data = bytes(range(16))
    rec = bytes([16, 0x10, 0x00, 0]) + data
    hexfile = tmp_path / "low.hex"
    hexfile.write_text(f":{rec.hex().upper()}{(-sum(rec)) & 0xFF:02X}\n:00000001FF\n")
    with make_sim(start_in_bootloader=True) as sim:
        r = cli("flash", str(hexfile), "--board", "samd21", "--port", sim.path, "--no-touch")
    assert r.returncode == 2, r.stderr
    assert "bootloader region" in r.stderr
    assert sim.log == [] and sim.nrx == 0  # the port was never opened


def test_a_missing_port(built) -> None:  # noqa: F811
    r, elapsed = timed_cli(
        "flash", str(built("samd21")), "--board", "samd21", "--port", "/dev/ttyACM_NOPE"
    )
    assert_failed_clearly(r, elapsed, "/dev/ttyACM_NOPE")
