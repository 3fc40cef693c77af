"""Flashing through the on-board debug probe without one: OpenOCD (the real program, which
`.ci/run` installs: every board's scripts parse, the command line, a clear exit 3 when no probe
answers, exit 2 for a script it does not have) and the probe's USB drive, simulated as a folder
laid out as the ST-LINK's (DETAILS.TXT, MBED.HTM) whose "probe" thread takes the copied file,
drops it and comes back with or without FAIL.TXT; a drive that never comes back; a read-only
drive; a folder that is no probe's drive; the drive found by its label."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from flashkit import built, cli  # noqa: F401

from tinycompile.boards import get_board, list_boards
from tinycompile.boards.spec import ProbeSpec
from tinycompile.errors import CompileError, DeviceError
from tinycompile.flash import FlashOptions, Timeouts, flash
from tinycompile.flash import drive as drivemod
from tinycompile.flash.image import load_image
from tinycompile.flash.openocd import flash_openocd, openocd_command
from tinycompile.flash.tools import find_tool

PROBE_BOARDS = sorted(b.name for b in list_boards() if "openocd" in b.flash_methods)


def test_default_methods_are_the_users_own() -> None:
    want = {"stm32f746": "openocd", "stm32f407": "openocd", "stm32h743": "openocd",
            "nrf52840": "openocd", "samd21": "sam-ba", "rp2040": "uf2",
            "rp2350": "uf2",
            "stm32u585": "openocd"}  # fmt: skip
    for name, method in want.items():
        b = get_board(name)
        assert b.flash_methods[0] == method and "gdb" in b.flash_methods, name
    assert set(PROBE_BOARDS) == set(want)


@pytest.mark.parametrize("board", PROBE_BOARDS)
def test_every_boards_openocd_scripts_parse(board: str, tmp_path: Path) -> None:
    """The real OpenOCD reads the board's scripts and commands, then stops before looking for a
    probe (``shutdown`` in its configuration stage)."""
    b = get_board(board)
    cmd = openocd_command(find_tool("openocd"), b, tmp_path / "image.hex", go=True)
    assert cmd[-2:] == ["-c", f"program {(tmp_path / 'image.hex').resolve()} verify reset exit"]
    assert cmd[1:-2] == b.probe.openocd_args() and cmd[1] == "-f"
    r = subprocess.run([*cmd[:-2], "-c", "shutdown"], capture_output=True, text=True, timeout=30)
    if r.returncode and board == "rp2350" and "rp2350.cfg" in r.stderr:
        pytest.skip("this OpenOCD has no target/rp2350.cfg (upstream's after 0.12.0 has it)")
    assert r.returncode == 0, r.stderr
    assert "shutdown command invoked" in r.stdout + r.stderr
    nogo = openocd_command("openocd", b, tmp_path / "image.hex", go=False)
    assert nogo[-1].endswith(" verify exit")


def test_no_probe_is_exit_3_with_openocds_words(built) -> None:  # noqa: F811
    r = cli("flash", str(built("stm32f746")), "--board", "stm32f746", timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "OpenOCD found no probe for board stm32f746" in r.stderr
    assert "open failed" in r.stderr.lower()
    assert "openocd -f board/stm32f7discovery.cfg" in r.stdout


def test_a_script_openocd_lacks_is_the_board_files_fault(built) -> None:  # noqa: F811
    b = get_board("stm32f746")
    bad = dataclasses.replace(b, probe=ProbeSpec(openocd=("board/no-such-board.cfg",)))
    image = load_image(built("stm32f746") / "build" / "stm32f746-board" / "firmware.elf", b)
    with pytest.raises(CompileError, match="OpenOCD has no script board/no-such-board.cfg"):
        flash_openocd(bad, image, FlashOptions())


def test_no_openocd_names_the_package(built, tmp_path: Path) -> None:  # noqa: F811
    import sys

    env = {**os.environ, "PATH": str(tmp_path)}
    args = ["flash", str(built("stm32f746")), "--board", "stm32f746"]
    p = subprocess.run([sys.executable, "-m", "tinycompile.cli", *args], capture_output=True,
                       text=True, env=env, timeout=60)  # fmt: skip
    assert p.returncode == 2 and "apt-get install openocd" in p.stderr, p.stderr


# ------------------------------------------------------------------ the probe's drive


def st_link_drive(root: Path, name: str = "DIS_F746NG") -> Path:
    d = root / name
    d.mkdir()
    (d / "DETAILS.TXT").write_text("Version: V2J40M27\r\nBuild:   Jan 1 2024\r\n")
    (d / "MBED.HTM").write_text('<meta http-equiv="refresh" content="0; URL=http://www.st.com">')
    return d


class Probe(threading.Thread):
    """The probe behind the drive: waits for firmware.bin, keeps its bytes, drops the drive
    (the folder's files vanish) and mounts it again, with FAIL.TXT when told to fail."""

    def __init__(self, drive: Path, fail: str | None = None, remount: bool = True) -> None:
        super().__init__(daemon=True)
        self.drive, self.fail, self.remount = drive, fail, remount
        self.got: bytes | None = None

    def run(self) -> None:
        f = self.drive / "firmware.bin"
        deadline = time.monotonic() + 20
        while not f.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the copy finishes (fsync)
        self.got = f.read_bytes()
        if not self.remount:
            return
        # the drive comes back whole (a mount is atomic): built aside, then renamed in place
        back = self.drive.parent / f".{self.drive.name}.remount"
        back.mkdir()
        for p in self.drive.iterdir():
            if p.name not in (f.name, "FAIL.TXT"):
                (back / p.name).write_bytes(p.read_bytes())
        if self.fail is not None:
            (back / "FAIL.TXT").write_text(self.fail)
        gone = self.drive.parent / f".{self.drive.name}.gone"
        self.drive.rename(gone)  # unmounted
        time.sleep(0.3)
        back.rename(self.drive)  # mounted again
        for p in gone.iterdir():
            p.unlink()
        gone.rmdir()


def _image(built):  # noqa: F811
    b = get_board("stm32f746")
    return b, load_image(built("stm32f746") / "build" / "stm32f746-board" / "firmware.elf", b)


FAST = Timeouts(reappear=2.0, erase_base=0.5, erase_per_kib=0.0)


def test_drive_copy_success(built, tmp_path: Path) -> None:  # noqa: F811
    b, image = _image(built)
    drive = st_link_drive(tmp_path)
    (drive / "FAIL.TXT").write_text("stale from the last try")  # cleared by the re-mount
    probe = Probe(drive)
    probe.start()
    out = flash(built("stm32f746"), b, FlashOptions(drive=str(drive), timeouts=FAST), "probe-drive")
    probe.join(5)
    assert probe.got == image.data
    assert out.startswith(f"done: {len(image.data):,} bytes at 0x08000000")


def test_drive_fail_txt_is_exit_3_with_its_words(built, tmp_path: Path) -> None:  # noqa: F811
    b, _ = _image(built)
    drive = st_link_drive(tmp_path)
    probe = Probe(drive, fail="The interface firmware FAILED to reprogram the MCU\r\n(timeout)")
    probe.start()
    with pytest.raises(DeviceError, match="FAILED to reprogram the MCU .timeout."):
        flash(built("stm32f746"), b, FlashOptions(drive=str(drive), timeouts=FAST), "probe-drive")


def test_drive_that_never_remounts(built, tmp_path: Path) -> None:  # noqa: F811
    b, _ = _image(built)
    drive = st_link_drive(tmp_path)
    probe = Probe(drive, remount=False)
    probe.start()
    t0 = time.monotonic()
    with pytest.raises(DeviceError, match="did not re-mount within 2.5 s"):
        flash(built("stm32f746"), b, FlashOptions(drive=str(drive), timeouts=FAST), "probe-drive")
    assert time.monotonic() - t0 < 6


def test_read_only_drive(built, tmp_path: Path) -> None:  # noqa: F811
    """A drive mounted read-only (a tmpfs as root, else a folder without write permission)."""
    b, _ = _image(built)
    drive = st_link_drive(tmp_path)
    mounted = False
    if os.geteuid() == 0:
        files = {p.name: p.read_bytes() for p in drive.iterdir()}
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(drive)], check=True)
        mounted = True
        for name, data in files.items():
            (drive / name).write_bytes(data)
        subprocess.run(["mount", "-o", "remount,ro", str(drive)], check=True)
    else:
        drive.chmod(0o555)
    try:
        r = cli("flash", str(built("stm32f746")), "--board", "stm32f746", "--method",
                "probe-drive", "--drive", str(drive))  # fmt: skip
        assert r.returncode == 3 and "copy failed" in r.stderr, r.stderr
        assert "Read-only file system" in r.stderr or "Permission denied" in r.stderr
    finally:
        if mounted:
            subprocess.run(["umount", str(drive)], check=True)
        else:
            drive.chmod(0o755)


def test_not_a_probe_drive_and_finding_it_by_label(
    built,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    b, image = _image(built)
    plain = tmp_path / "usbstick"
    plain.mkdir()
    with pytest.raises(DeviceError, match="not a probe's drive .no DETAILS.TXT or MBED.HTM"):
        flash(built("stm32f746"), b, FlashOptions(drive=str(plain)), "probe-drive")
    monkeypatch.setattr(drivemod, "mount_points", lambda label: [tmp_path / "media" / label])
    with pytest.raises(DeviceError, match="no DIS_F746NG drive mounted"):
        flash(built("stm32f746"), b, FlashOptions(), "probe-drive")
    (tmp_path / "media").mkdir()
    drive = st_link_drive(tmp_path / "media")
    probe = Probe(drive)
    probe.start()
    flash(built("stm32f746"), b, FlashOptions(timeouts=FAST), "probe-drive")
    probe.join(5)
    assert probe.got == image.data
