"""An Arduino Zero on its native USB port: a sketch that resets into the bootloader on the
1200-baud touch, then the Arduino bootloader's SAM-BA monitor, device side.

The touch is seen from the pty's master side: the slave's termios speed set to 1200, then the
slave closed (a hang-up on the master). The port then disappears (its symlink is removed) and
comes back on a new pty, under the same name or (``rename``) another one.

The monitor: ASCII commands, hexadecimal numbers, ',' ends the first argument, '#' executes.
Flash of ``flash_size`` bytes with the bootloader in the first ``reserved`` (its bytes are
whatever the test gives, never 0xFF), rows of 4 pages erased by X from an address to the end of
flash, Y copying the RAM buffer into (erased) flash pages, which can only clear bits, Z giving
the CRC-16/XMODEM of a memory range, S/R writing and reading memory, w reading a word (the DSU
device ID at 0x41002018), W writing one (AIRCR 0x05FA0004 resets: the application starts).
"""

from __future__ import annotations

import os
import tempfile
import termios
import time
from pathlib import Path

from .ptydev import PtyDevice

RAM, RAM_SIZE = 0x20000000, 0x8000
DSU_DID, AIRCR = 0x41002018, 0xE000ED0C
VERSION = b"v1.1 [Arduino:XYZ] Jun 10 2015 11:08:10\n\r"


def crc16_xmodem(data: bytes) -> int:
    crc = 0
    for b in data:
        x = ((crc >> 8) ^ b) & 0xFF
        x ^= x >> 4
        crc = ((crc << 8) ^ (x << 12) ^ (x << 5) ^ x) & 0xFFFF
    return crc


class SambaSim(PtyDevice):
    """Faults: ``touch_works=False`` (the sketch ignores the touch), ``silent`` (the bootloader
    never answers), ``device_id``, ``stuck`` ((address, value) kept whatever is written),
    ``y_silent`` (no answer to a flash write), and the base's dropped bytes."""

    def __init__(
        self,
        *,
        initial: bytes,
        reserved: int = 0x2000,
        page: int = 64,
        device_id: int = 0x10010005,
        start_in_bootloader: bool = False,
        rename: bool = False,
        touch_works: bool = True,
        silent: bool = False,
        stuck: tuple[int, int] | None = None,
        y_silent: bool = False,
        drop_rx: set[int] = frozenset(),
        drop_tx: set[int] = frozenset(),
    ) -> None:
        super().__init__(drop_rx=drop_rx, drop_tx=drop_tx)
        self.flash, self.reserved, self.page = bytearray(initial), reserved, page
        self.ram = bytearray(RAM_SIZE)
        self.device_id, self.silent, self.stuck, self.y_silent = device_id, silent, stuck, y_silent
        self.touch_works, self.in_bootloader = touch_works, start_in_bootloader
        self.dir = Path(tempfile.mkdtemp(prefix="samba_sim_"))
        self.path = str(self.dir / "ttyACM0")
        self.boot_path = str(self.dir / ("ttyACM1" if rename else "ttyACM0"))
        os.symlink(self.slave_path, self.boot_path if start_in_bootloader else self.path)
        self.touched = False
        self.touched_bootloader = False  # a 1200-baud open while the bootloader runs
        self.resets = 0
        self.app_started = False
        self.buffer = 0
        self.log: list[str] = []

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        for p in self.dir.iterdir():
            p.unlink()
        self.dir.rmdir()

    # -- the sketch and the touch -------------------------------------------------------------
    def serve(self) -> None:
        if not self.in_bootloader:
            self._sketch()
        if not self.silent:
            self._monitor()
        while True:  # silent: swallow everything
            self.recv1()

    def _sketch(self) -> None:
        armed = False
        while True:
            if self._stop.is_set():
                return
            if self.speed() == termios.B1200:
                armed = True
            if armed and self.hung_up() and self.touch_works:
                break
            time.sleep(0.005)
        self.touched = True
        os.unlink(self.path)  # USB re-enumeration: the port goes away ...
        os.close(self.master)
        time.sleep(0.3)
        self.slave_path = self._new_pty()  # ... and comes back
        os.symlink(self.slave_path, self.boot_path)
        self.in_bootloader = True

    def idle(self) -> None:
        if self.in_bootloader and self.speed() == termios.B1200:
            self.touched_bootloader = True  # harmless here, but a sign of a needless touch

    # -- memory -------------------------------------------------------------------------------
    def _read(self, addr: int, n: int) -> bytes:
        if 0 <= addr and addr + n <= len(self.flash):
            return bytes(self.flash[addr : addr + n])
        if RAM <= addr and addr + n <= RAM + RAM_SIZE:
            return bytes(self.ram[addr - RAM : addr - RAM + n])
        if addr == DSU_DID and n == 4:
            return self.device_id.to_bytes(4, "little")
        return b"\0" * n

    def _erase_from(self, addr: int) -> None:
        row = self.page * 4
        a = addr - addr % row  # the whole row, even from its last byte
        self.flash[a:] = b"\xff" * (len(self.flash) - a)
        self._stick()

    def _program(self, dst: int, n: int) -> None:
        src = self.buffer - RAM
        for i in range(n // 4 * 4):
            if 0 <= dst + i < len(self.flash):
                self.flash[dst + i] &= self.ram[src + i]
        self._stick()

    def _stick(self) -> None:
        if self.stuck:
            self.flash[self.stuck[0]] = self.stuck[1]

    # -- the monitor --------------------------------------------------------------------------
    def _monitor(self) -> None:
        command, number, arg = "z", 0, 0
        while True:
            c = self.recv1()
            if c == 0xFF:
                continue
            ch = chr(c)
            if ch == "#":
                self._execute(command, arg, number)
                if command == "W" and arg == AIRCR and number == 0x05FA0004:
                    return self._after_reset()
                command, number = "z", 0
            elif ch in "0123456789ABCDEFabcdef":
                number = ((number << 4) | int(ch, 16)) & 0xFFFFFFFF
            elif ch == ",":
                arg, number = number, 0
            else:
                command, number = ch, 0

    def _execute(self, cmd: str, arg: int, number: int) -> None:
        self.log.append(cmd)
        if cmd == "N":
            self.send(b"\n\r")
        elif cmd == "V":
            self.send(VERSION)
        elif cmd == "S":
            data = self.recv(number)
            if RAM <= arg and arg + number <= RAM + RAM_SIZE:
                self.ram[arg - RAM : arg - RAM + number] = data
        elif cmd == "R":
            self.send(self._read(arg, number))
        elif cmd == "w":
            self.send(self._read(arg, 4))
        elif cmd == "X":
            self._erase_from(number)
            self.send(b"X\n\r")
        elif cmd == "Y":
            if number == 0:
                self.buffer = arg
            else:
                self._program(arg, number)
            if not (self.y_silent and number):
                self.send(b"Y\n\r")
        elif cmd == "Z":
            self.send(b"Z%08X#\n\r" % crc16_xmodem(self._read(arg, number)))

    def _after_reset(self) -> None:
        self.resets += 1
        self.app_started = self.flash[self.reserved : self.reserved + 4] != b"\xff" * 4
        while True:  # the application runs (and does not speak SAM-BA)
            self.recv1()
