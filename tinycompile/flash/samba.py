"""The Arduino bootloader's SAM-BA monitor (Arduino Zero native USB port), as BOSSA drives it.

Entering it: a sketch's USB serial port resets into the bootloader when opened at 1200 baud and
closed (the "1200-baud touch"); the port then comes back, maybe under another name. Only an
Arduino sketch's USB stack answers the touch (tinycompile's firmware has none: its users
double-tap RESET), so by default it is sent only when no monitor answers on the port already.
Commands are ASCII, ``#``-terminated, with hexadecimal numbers: ``N#`` (binary mode, answer
"\\n\\r"), ``V#`` (version line; "[Arduino:XYZ]" announces the extended commands), ``wADDR,4#``
(read a word: the DSU device ID), ``SADDR,SIZE#`` + SIZE raw bytes (to RAM), ``XADDR#`` (erase from
ADDR to the end of flash, "X\\n\\r"), ``YADDR,0#`` (the RAM buffer) and ``YADDR,SIZE#`` (buffer to
flash, "Y\\n\\r"), ``ZADDR,SIZE#`` (CRC-16/XMODEM, "Z%08X#\\n\\r"), ``RADDR,SIZE#`` (read back),
``WADDR,VALUE#`` (write a word: AIRCR's system reset starts the new application).
The bootloader region (flash.reserved) is never erased or written: images below it are refused
before any port is opened (image.py), and X starts at the application start.
"""

from __future__ import annotations

import os
import time

from ..boards import Board
from ..errors import DeviceError
from ..serialport import Port, SerialPortError, SerialTimeout
from .common import FlashOptions, kib, progress, say
from .image import Image

DSU_DID = 0x41002018  # SAMD21 Device Service Unit: device identification
AIRCR, SYSRESETREQ = 0xE000ED0C, 0x05FA0004
TOUCH_BAUD = 1200


def crc16(data: bytes, crc: int = 0) -> int:
    """CRC-16/XMODEM (polynomial 0x1021, initial 0), as the Z command computes it."""
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        crc &= 0xFFFF
    return crc


def touch(path: str) -> None:
    """Open ``path`` at 1200 baud and close it (DTR dropped): a sketch resets into the
    bootloader."""
    port = Port(path, TOUCH_BAUD, timeout_s=0.2, notice=lambda _t: None)
    try:
        port.set_lines(dtr=False)
    finally:
        port.close()


class SamBa:
    """The monitor's commands over an open port (binary mode)."""

    def __init__(self, port: Port, opts: FlashOptions) -> None:
        self.port, self.t = port, opts.timeouts

    def _line(self, timeout_s: float, what: str) -> bytes:
        """Bytes up to and including "\\n\\r", within ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        buf = b""
        while not buf.endswith(b"\n\r"):
            left = deadline - time.monotonic()
            if left <= 0 or len(buf) > 256:
                shown = buf.decode("ascii", "replace")
                raise DeviceError(
                    f"{self.port.path}: no answer to {what} within {timeout_s:g} s"
                    + (f" (got {shown!r})" if buf else "")
                )
            buf += self.port.read_some(1, min(left, 0.25))
        return buf

    def _expect(self, cmd: str, reply: bytes, what: str, timeout_s: float | None = None) -> None:
        self.port.write(cmd.encode())
        got = self._line(self.t.answer if timeout_s is None else timeout_s, what)
        if got != reply:
            raise DeviceError(f"{self.port.path}: {what} answered {got!r}, expected {reply!r}")

    def binary_mode(self, timeout_s: float) -> None:
        self._expect("N#", b"\n\r", "N# (binary mode)", timeout_s)

    def version(self) -> str:
        self.port.write(b"V#")
        return self._line(self.t.answer, "V# (version)")[:-2].decode("ascii", "replace")

    def read_word(self, addr: int) -> int:
        self.port.write(f"w{addr:08X},4#".encode())
        raw = self.port.read_exact(4, self.t.answer, f"word at {addr:#010x}")
        return int.from_bytes(raw, "little")

    def write_ram(self, addr: int, data: bytes) -> None:
        # the command and its data in two writes, each drained (Port.write): the SAM-BA firmware
        # loses data that shares a USB packet with the S command (BOSSA flushes there too)
        self.port.write(f"S{addr:08X},{len(data):08X}#".encode())
        self.port.write(data)

    def erase_from(self, addr: int, timeout_s: float) -> None:
        self._expect(f"X{addr:08X}#", b"X\n\r", f"X (erase from {addr:#010x})", timeout_s)

    def copy_to_flash(self, buffer: int, dst: int, n: int) -> None:
        self._expect(f"Y{buffer:08X},0#", b"Y\n\r", "Y (set the RAM buffer)")
        self._expect(f"Y{dst:08X},{n:08X}#", b"Y\n\r", f"Y (write {n} bytes at {dst:#010x})")

    def checksum(self, addr: int, n: int) -> int:
        self.port.write(f"Z{addr:08X},{n:08X}#".encode())
        got = self._line(self.t.answer, f"Z (CRC at {addr:#010x})")
        text = got.decode("ascii", "replace")
        if len(got) != 12 or not text.startswith("Z") or text[9:] != "#\n\r":
            raise DeviceError(f"{self.port.path}: malformed Z answer {text!r}")
        try:
            return int(text[1:9], 16)
        except ValueError:
            raise DeviceError(f"{self.port.path}: malformed Z answer {text!r}") from None

    def read(self, addr: int, n: int) -> bytes:
        self.port.write(f"R{addr:08X},{n:08X}#".encode())
        return self.port.read_exact(n, self.t.answer + n / 10_000, f"read-back at {addr:#010x}")

    def reset(self) -> None:
        self.port.write(f"W{AIRCR:08X},{SYSRESETREQ:08X}#".encode())


def _answers(path: str, opts: FlashOptions) -> bool:
    """Whether a SAM-BA monitor already answers on ``path`` (the board was reset into its
    bootloader: a double-tap on RESET, or tinycompile's firmware, which has no USB port for a
    touch to reach). A port that is not there cannot be touched either: no."""
    if not os.path.exists(path):
        return True  # nothing to touch; _open_monitor says what to do
    try:
        port = Port(path, opts.baud or 115200, timeout_s=opts.timeouts.answer)
    except SerialPortError:
        return False
    with port:
        try:
            port.drain_input()
            SamBa(port, opts).binary_mode(min(opts.timeouts.answer, 0.5))
            return True
        except (DeviceError, SerialTimeout, SerialPortError):
            return False


def _open_monitor(path: str, opts: FlashOptions, touched: bool) -> tuple[Port, SamBa]:
    """Open the bootloader's port and switch to binary mode, retrying until the (bounded)
    wait for it to come back is over."""
    deadline = time.monotonic() + (opts.timeouts.reappear if touched else 0)
    why = "it does not exist"
    while True:
        if os.path.exists(path):
            try:
                port = Port(path, opts.baud or 115200, timeout_s=opts.timeouts.answer)
            except SerialPortError as e:
                why = e.reason
            else:
                mon = SamBa(port, opts)
                try:
                    port.drain_input()
                    wait = min(opts.timeouts.answer, 0.5) if touched else opts.timeouts.answer
                    mon.binary_mode(wait)
                    return port, mon
                except (DeviceError, SerialTimeout) as e:
                    why = e.reason
                    port.close()
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    after = f" within {opts.timeouts.reappear:g} s after the 1200-baud touch" if touched else ""
    raise DeviceError(
        f"no SAM-BA bootloader answered on {path}{after} (last: {why}); double-tap RESET to"
        " start it, or name the port it comes back on with --bootloader-port"
    )


def flash_samba(board: Board, image: Image, opts: FlashOptions) -> None:
    """Touch, erase from the application start, write through the RAM buffer, verify (Z CRC,
    R read-back to locate a difference) and reset into the application."""
    bl, fl = board.bootloader, board.flash
    assert bl is not None and fl is not None and opts.port is not None
    assert bl.buffer is not None and bl.device_id is not None
    if image.address < fl.app_origin:  # image.py refuses these already; never erase the bootloader
        raise DeviceError(f"image at {image.address:#x} overlaps the bootloader region")
    touched = opts.touch is True or (opts.touch is None and not _answers(opts.port, opts))
    if touched:
        touch(opts.port)
        time.sleep(0.3)  # the sketch resets; its port goes away
    target = opts.bootloader_port or opts.port
    port, mon = _open_monitor(target, opts, touched)
    with port:
        version = mon.version()
        caps = version.partition("[Arduino:")[2].partition("]")[0]
        if not all(c in caps for c in "XYZ"):
            raise DeviceError(f"{port.path}: {version!r} lacks the Arduino X/Y/Z commands")
        did = mon.read_word(DSU_DID)
        if did & bl.device_id_mask != bl.device_id & bl.device_id_mask:
            raise DeviceError(
                f"{port.path}: found device ID {did:#010x}, board {board.name} expects"
                f" {bl.device_id:#010x}"
            )
        say(f"{port.path}: SAM-BA {version.split(' [')[0]}, device ID {did:#010x}")
        erase_at = fl.app_origin  # the whole application area: X erases to the end of flash
        page = bl.page_size
        data = image.data + b"\xff" * (-len(image.data) % page)
        span = fl.origin + fl.size - erase_at
        with progress("erase", span) as update:
            mon.erase_from(erase_at, opts.timeouts.erase(span))
            update(span)
        say(f"erase  {kib(span)} from {erase_at:#010x} (bootloader below it kept)")
        with progress("write", len(data)) as update:
            for off in range(0, len(data), bl.buffer_size):
                chunk = data[off : off + bl.buffer_size]
                mon.write_ram(bl.buffer, chunk)
                mon.copy_to_flash(bl.buffer, image.address + off, len(chunk))
                update(off + len(chunk))
        say(f"write  {len(image.data):,} bytes at {image.address:#010x}")
        with progress("verify", len(data)) as update:
            for off in range(0, len(data), bl.buffer_size):
                chunk = data[off : off + bl.buffer_size]
                if mon.checksum(image.address + off, len(chunk)) != crc16(chunk):
                    got = mon.read(image.address + off, len(chunk))
                    bad = next(
                        (i for i, (w, g) in enumerate(zip(chunk, got, strict=True)) if w != g), None
                    )
                    if bad is None:
                        where = (
                            f"{image.address + off:#010x}..{image.address + off + len(chunk):#010x}"
                        )
                        raise DeviceError(
                            f"verify failed in {where}: CRC differs, bytes read equal"
                        )
                    raise DeviceError(
                        f"verify failed at {image.address + off + bad:#010x}: wrote"
                        f" {chunk[bad]:#04x}, read {got[bad]:#04x}"
                    )
                update(off + len(chunk))
        say(f"verify {len(image.data):,} bytes, CRC-16 identical")
        if opts.go:
            mon.reset()
            say("reset  the application starts")
        else:
            say("reset  skipped (--no-go): the bootloader keeps running")
