"""tinycompile.serialport on real pseudo-terminals: bounded reads, the pty quirks (no DTR/RTS,
no parity) met with one notice each, and one clear error for ports that cannot be opened."""

from __future__ import annotations

import os
import time

import pytest

from tinycompile.errors import DeviceError
from tinycompile.serialport import Port, SerialPortError, SerialTimeout


@pytest.fixture
def pty():
    master, slave = os.openpty()
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def test_bytes_cross_the_pty_both_ways(pty):
    master, path = pty
    with Port(path, 115200, notice=lambda _: None) as p:
        os.write(master, b"\x79hello")
        assert p.read_exact(6, 2.0) == b"\x79hello"
        p.write(b"\x7f")
        assert os.read(master, 1) == b"\x7f"


def test_read_exact_is_bounded_and_says_what_came(pty):
    master, path = pty
    with Port(path, 115200, notice=lambda _: None) as p:
        os.write(master, b"ab")
        t0 = time.monotonic()
        with pytest.raises(SerialTimeout, match=r"received 2 of 5 bytes"):
            p.read_exact(5, 0.5, what="reply")
        assert time.monotonic() - t0 < 2.0
        with pytest.raises(SerialTimeout, match=r"no reply within 0.2 s \(received nothing\)"):
            p.read_exact(1, 0.2, what="reply")


def test_pty_quirks_give_one_notice_each_and_carry_on(pty):
    master, path = pty
    notices: list[str] = []
    with Port(path, 115200, parity="E", notice=notices.append) as p:
        # Linux ptys refuse even parity after open and have no modem-control lines.
        assert p.parity == "N"
        assert p.set_lines(dtr=True, rts=False) is False
        assert p.set_lines(dtr=False) is False
        os.write(master, b"x")
        assert p.read_exact(1, 1.0) == b"x"
    assert len(notices) == 2
    assert "refuses parity E" in notices[0]
    assert "no DTR/RTS" in notices[1]


def test_ports_that_cannot_open_are_one_device_error(tmp_path):
    missing = tmp_path / "ttyNONE"
    not_a_tty = tmp_path / "plain-file"
    not_a_tty.write_text("x")
    for path, reason in [
        (missing, "No such file or directory"),
        (not_a_tty, "Inappropriate ioctl for device"),
    ]:
        with pytest.raises(SerialPortError) as e:
            Port(str(path), 9600)
        assert isinstance(e.value, DeviceError)
        assert str(e.value) == f"cannot open serial port {path}: {reason}"
