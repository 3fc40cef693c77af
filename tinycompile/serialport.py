"""Serial ports for flashing and on-device validation, with pyserial.

One place knows the quirks of the ports this tool meets:

- Pseudo-terminals (the emulator's console, the tests' device simulators) and some USB-serial
  adapters refuse the modem-control lines (DTR/RTS: ``ENOTTY`` or ``EINVAL``) and some refuse
  even parity (``EINVAL``). The port is opened anyway: parity falls back to none and line
  toggling becomes a no-op, each with one notice, so the same code runs over a pty and a cable.
- A port that does not exist, is busy or is not a serial device gives one ``SerialPortError``
  naming the port, never a traceback.

Timeouts are always bounded: every read has one (``timeout_s``), and ``read_exact`` gathers a
number of bytes within a deadline or raises ``SerialTimeout`` saying how many came.
"""

from __future__ import annotations

import errno
import os
import sys
import termios
import time
from collections.abc import Callable

import serial

from .errors import DeviceError

# Errors the modem-control and parity ioctls give on ports that do not support them.
_UNSUPPORTED = (errno.ENOTTY, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


class SerialPortError(DeviceError):
    """A port that cannot be opened or used (missing, busy, not a tty, gone)."""


class SerialTimeout(SerialPortError):
    """No (complete) answer within the bounded time."""


def _notice(text: str) -> None:
    print(f"notice: {text}", file=sys.stderr)


class Port:
    """An open serial port with bounded reads and tolerant line control.

    ``notice`` receives one-line notices (default: printed to stderr)."""

    def __init__(
        self,
        path: str,
        baud: int,
        *,
        parity: str = "N",
        timeout_s: float = 1.0,
        notice: Callable[[str], None] = _notice,
    ) -> None:
        self.path = path
        self.notice = notice
        self.lines_ok = True
        self._warned_lines = False
        try:
            self.ser = serial.Serial(
                path, baud, bytesize=8, parity=serial.PARITY_NONE, stopbits=1, timeout=timeout_s
            )
        except (serial.SerialException, OSError, ValueError) as e:
            raise SerialPortError(f"cannot open serial port {path}: {_reason(e)}") from None
        self.parity = "N"
        if parity != "N":
            self.set_parity(parity)

    # -- configuration -----------------------------------------------------------------------
    def set_parity(self, parity: str) -> None:
        """Ask for parity ``E``/``O``/``N``; a port that refuses it keeps none (one notice)."""
        try:
            self.ser.parity = {"N": serial.PARITY_NONE, "E": serial.PARITY_EVEN}.get(
                parity, serial.PARITY_ODD
            )
            self.parity = parity
        except (serial.SerialException, OSError, ValueError, termios.error) as e:
            code = e.args[0] if isinstance(e, termios.error) and e.args else getattr(e, "errno", 0)
            if isinstance(e, (OSError, termios.error)) and code not in _UNSUPPORTED:
                raise SerialPortError(f"{self.path}: cannot set parity: {_reason(e)}") from None
            try:  # the failed attempt may have left the port half-configured
                self.ser.parity = serial.PARITY_NONE
            except (serial.SerialException, OSError, ValueError, termios.error):
                pass
            self.notice(f"{self.path} refuses parity {parity}; continuing without parity")

    def set_baud(self, baud: int) -> None:
        """Change the baud rate."""
        try:
            self.ser.baudrate = baud
        except (serial.SerialException, OSError, ValueError) as e:
            raise SerialPortError(f"{self.path}: cannot set {baud} baud: {_reason(e)}") from None

    def set_lines(self, *, dtr: bool | None = None, rts: bool | None = None) -> bool:
        """Drive DTR/RTS; on a port without modem control, do nothing (one notice) and
        return False."""
        if not self.lines_ok:
            return False
        try:
            if dtr is not None:
                self.ser.dtr = dtr
            if rts is not None:
                self.ser.rts = rts
            return True
        except (serial.SerialException, OSError) as e:
            if isinstance(e, OSError) and e.errno not in _UNSUPPORTED:
                raise SerialPortError(f"{self.path}: cannot drive DTR/RTS: {_reason(e)}") from None
            self.lines_ok = False
            if not self._warned_lines:
                self._warned_lines = True
                self.notice(f"{self.path} has no DTR/RTS control; continuing without toggling")
            return False

    # -- I/O ---------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        """Write all of ``data``."""
        try:
            self.ser.write(data)
            self.ser.flush()
        except (serial.SerialException, OSError) as e:
            raise SerialPortError(f"{self.path}: write failed: {_reason(e)}") from None

    def read_some(self, n: int, timeout_s: float) -> bytes:
        """Up to ``n`` bytes, waiting at most ``timeout_s`` for the first; b"" on silence."""
        try:
            self.ser.timeout = timeout_s
            return self.ser.read(n)
        except (serial.SerialException, OSError) as e:
            raise SerialPortError(f"{self.path}: read failed: {_reason(e)}") from None

    def read_exact(self, n: int, timeout_s: float, what: str = "answer") -> bytes:
        """Exactly ``n`` bytes within ``timeout_s`` in all, or SerialTimeout."""
        deadline = time.monotonic() + timeout_s
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                got = f"{len(buf)} of {n} bytes" if buf else "nothing"
                raise SerialTimeout(
                    f"{self.path}: no {what} within {timeout_s:g} s (received {got})"
                )
            buf += self.read_some(n - len(buf), min(left, 0.25))
        return bytes(buf)

    def drain_input(self) -> bytes:
        """Discard and return whatever is waiting to be read."""
        try:
            return self.ser.read(self.ser.in_waiting or 0)
        except (serial.SerialException, OSError) as e:
            raise SerialPortError(f"{self.path}: read failed: {_reason(e)}") from None

    def close(self) -> None:
        """Close the port (idempotent)."""
        try:
            self.ser.close()
        except (serial.SerialException, OSError):
            pass

    def __enter__(self) -> Port:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(e: BaseException) -> str:
    """The OS's words for an error, without pyserial's wrapping."""
    args = e.args
    if len(args) >= 2 and isinstance(args[0], int):  # OSError, SerialException(errno, text)
        return os.strerror(args[0]) if args[0] > 0 else str(args[1])
    text = str(e)
    for code in (errno.ENOTTY, errno.ENOENT, errno.EACCES, errno.EBUSY):
        if f"({code}," in text or f"[Errno {code}]" in text:
            return os.strerror(code)
    return text
