"""STM32 ROM bootloader over a USART (ST AN3155), for boards whose ``[bootloader]`` names
stm32-uart (the USART, pins and product ID from AN2606, the sector map from the reference
manual).

The line is 8 data bits, even parity, 1 stop bit. The host sends 0x7F; the bootloader measures
the baud rate and answers ACK (0x79). A command is its code and the code's complement; every
step is answered ACK or NACK (0x1F). Addresses go MSB first followed by the XOR of their 4
bytes; a count N means N+1 items. Flashing: GET (the command list: EXTENDED ERASE 0x44 or the
legacy ERASE 0x43), GET ID (checked against the board's part), erase of the sectors the image
covers, WRITE MEMORY in 256-byte blocks, READ MEMORY read-back, GO to the flash origin.
"""

from __future__ import annotations

import time
from functools import reduce

from ..boards import Board
from ..errors import DeviceError
from ..serialport import Port, SerialTimeout
from .common import FlashOptions, kib, progress, say
from .image import Image

ACK, NACK, SYNC = 0x79, 0x1F, 0x7F
GET, GET_ID, READ, GO, WRITE, ERASE, EXT_ERASE = 0x00, 0x02, 0x11, 0x21, 0x31, 0x43, 0x44
NAMES = {
    GET: "GET",
    GET_ID: "GET ID",
    READ: "READ MEMORY",
    GO: "GO",
    WRITE: "WRITE MEMORY",
    ERASE: "ERASE",
    EXT_ERASE: "EXTENDED ERASE",
}
BLOCK = 256
# Product IDs (AN2606) this tool can name when a board answers with another part than expected.
PARTS = {
    0x410: "STM32F10xxx medium-density",
    0x411: "STM32F2xxxx",
    0x413: "STM32F40x/41x",
    0x419: "STM32F42x/43x",
    0x421: "STM32F446xx",
    0x423: "STM32F401xB/C",
    0x431: "STM32F411xx",
    0x433: "STM32F401xD/E",
    0x449: "STM32F74x/75x",
    0x450: "STM32H74x/75x",
    0x451: "STM32F76x/77x",
    0x452: "STM32F72x/73x",
    0x482: "STM32U575/585",
    0x480: "STM32H7A3/7B3",
    0x483: "STM32H72x/73x",
}
# --boot-lines: which modem line drives NRST and which BOOT0, each wired straight to the
# adapter's pin (an asserted line is a low pin: NRST held in reset, BOOT0 low).
BOOT_LINES = {
    "none": None,
    "dtr-nrst-rts-boot0": ("dtr", "rts"),
    "rts-nrst-dtr-boot0": ("rts", "dtr"),
}


def _xor(data: bytes | list[int]) -> int:
    return reduce(lambda a, b: a ^ b, data, 0)


def with_checksum(data: bytes) -> bytes:
    """``data`` followed by the XOR of its bytes (AN3155's checksum)."""
    return bytes(data) + bytes([_xor(data)])


class Stm32Bootloader:
    """The AN3155 command set over an open port."""

    def __init__(self, port: Port, opts: FlashOptions) -> None:
        self.port, self.opts, self.t = port, opts, opts.timeouts
        self.commands: set[int] = set()
        self.version = 0

    # -- framing ---------------------------------------------------------------------------
    def _ack(self, what: str, timeout_s: float | None = None) -> None:
        t = self.t.answer if timeout_s is None else timeout_s
        try:
            b = self.port.read_exact(1, t, what)[0]
        except SerialTimeout:
            raise DeviceError(
                f"{self.port.path}: no answer to {what} within {t:g} s (is the board still in"
                " its bootloader?)"
            ) from None
        if b == NACK:
            raise DeviceError(f"{self.port.path}: the bootloader refused (NACK) {what}")
        if b != ACK:
            raise DeviceError(f"{self.port.path}: unexpected byte {b:#04x} answering {what}")

    def _command(self, code: int, what: str | None = None) -> None:
        if self.commands and code not in self.commands:
            raise DeviceError(f"{self.port.path}: the bootloader does not offer {NAMES[code]}")
        self.port.write(bytes([code, code ^ 0xFF]))
        self._ack(what or NAMES[code])

    def _address(self, addr: int, what: str) -> None:
        self.port.write(with_checksum(addr.to_bytes(4, "big")))
        self._ack(f"{what} (address {addr:#010x})")

    # -- commands --------------------------------------------------------------------------
    def sync(self) -> None:
        """Send 0x7F until the bootloader answers (a NACK: it was already synchronised)."""
        self.port.drain_input()
        for _ in range(self.opts.retries + 1):
            self.port.write(bytes([SYNC]))
            got = self.port.read_some(1, self.t.sync)
            if got and got[0] in (ACK, NACK):
                time.sleep(0.05)
                self.port.drain_input()
                return
        raise DeviceError(
            f"{self.port.path}: no answer from an STM32 bootloader ({self.opts.retries + 1}"
            " synchronisation attempts): is BOOT0 high, was the board reset, are TX/RX crossed?"
        )

    def get(self) -> None:
        """GET: the bootloader version and the commands it offers."""
        self._command(GET)
        n = self.port.read_exact(1, self.t.answer, "GET's length")[0]
        body = self.port.read_exact(n + 1, self.t.answer, "GET's command list")
        self._ack("GET (end)")
        self.version, self.commands = body[0], set(body[1:])

    def get_id(self) -> int:
        self._command(GET_ID)
        n = self.port.read_exact(1, self.t.answer, "GET ID's length")[0]
        pid = int.from_bytes(self.port.read_exact(n + 1, self.t.answer, "the product ID"), "big")
        self._ack("GET ID (end)")
        return pid

    def read(self, addr: int, n: int) -> bytes:
        """READ MEMORY of 1..256 bytes; a short or lost answer is asked again (bounded)."""
        for attempt in range(self.opts.retries + 1):
            self._command(READ)
            self._address(addr, "READ MEMORY")
            self.port.write(bytes([n - 1, (n - 1) ^ 0xFF]))
            self._ack(f"READ MEMORY (count {n})")
            try:
                return self.port.read_exact(n, self.t.answer, f"read-back at {addr:#010x}")
            except SerialTimeout:
                if attempt == self.opts.retries:
                    raise
                time.sleep(0.05)
                self.port.drain_input()
        raise AssertionError("unreachable")

    def write(self, addr: int, data: bytes) -> None:
        """WRITE MEMORY of 4..256 bytes (a multiple of 4)."""
        self._command(WRITE)
        self._address(addr, "WRITE MEMORY")
        self.port.write(with_checksum(bytes([len(data) - 1]) + data))
        self._ack(f"WRITE MEMORY (data at {addr:#010x})")

    def erase(self, sectors: list[int], timeout_s: float) -> None:
        """Erase sectors with EXTENDED ERASE when offered, else the legacy ERASE."""
        if EXT_ERASE in self.commands:
            self._command(EXT_ERASE)
            frame = (len(sectors) - 1).to_bytes(2, "big")
            frame += b"".join(s.to_bytes(2, "big") for s in sectors)
        else:
            self._command(ERASE)
            frame = bytes([len(sectors) - 1, *sectors])
        self.port.write(with_checksum(frame))
        name = "EXTENDED ERASE" if EXT_ERASE in self.commands else "ERASE"
        self._ack(f"{name} of sector {', '.join(map(str, sectors))}", timeout_s)

    def go(self, addr: int) -> None:
        self._command(GO)
        self._address(addr, "GO")


def _enter_bootloader(port: Port, wiring: tuple[str, str] | None) -> None:
    """With NRST/BOOT0 wired to the modem lines: BOOT0 high, pulse NRST."""
    if wiring is None:
        return
    nrst, boot0 = wiring
    if not port.set_lines(**{boot0: False, nrst: True}):  # BOOT0 pin high, reset held
        return
    time.sleep(0.1)
    port.set_lines(**{nrst: False})
    time.sleep(0.2)  # the bootloader starts within a few ms; then it waits for 0x7F


def covered_sectors(board: Board, image: Image) -> list[int]:
    """Indexes of the sectors overlapping the image."""
    assert board.bootloader is not None
    return [
        i
        for i, (a, size) in enumerate(board.bootloader.sectors)
        if a < image.end and image.address < a + size
    ]


def flash_stm32(board: Board, image: Image, opts: FlashOptions) -> None:
    """Erase, write, verify and start ``image`` through the ROM bootloader on ``opts.port``."""
    bl = board.bootloader
    assert bl is not None and bl.product_id is not None and opts.port is not None
    sectors = covered_sectors(board, image)
    wiring = BOOT_LINES[opts.boot_lines]
    with Port(opts.port, opts.baud or bl.baud, parity="E", timeout_s=opts.timeouts.answer) as port:
        _enter_bootloader(port, wiring)
        dev = Stm32Bootloader(port, opts)
        dev.sync()
        dev.get()
        pid = dev.get_id()
        found = f"{pid:#05x}" + (f" ({PARTS[pid]})" if pid in PARTS else "")
        if pid != bl.product_id:
            raise DeviceError(
                f"{port.path}: found {found}, board {board.name} expects {bl.product_id:#05x}"
                + (f" ({bl.part})" if bl.part else "")
            )
        v = dev.version
        say(f"{port.path}: STM32 bootloader v{v >> 4}.{v & 15}, product ID {found}")
        if READ not in dev.commands or WRITE not in dev.commands:
            raise DeviceError(f"{port.path}: read/write refused: is the flash read-protected?")
        size = sum(bl.sectors[s][1] for s in sectors)
        first = bl.sectors[sectors[0]][0]
        say(f"erase  sectors {sectors[0]}-{sectors[-1]} ({kib(size)} at {first:#010x})")
        with progress("erase", size) as update:
            done = 0
            for s in sectors:
                dev.erase([s], opts.timeouts.erase(bl.sectors[s][1]))
                done += bl.sectors[s][1]
                update(done)
        data = image.data + b"\xff" * (-len(image.data) % BLOCK)
        with progress("write", len(image.data)) as update:
            for off in range(0, len(data), BLOCK):
                dev.write(image.address + off, data[off : off + BLOCK])
                update(off + BLOCK)
        say(f"write  {len(image.data):,} bytes at {image.address:#010x}")
        with progress("verify", len(image.data)) as update:
            for off in range(0, len(image.data), BLOCK):
                want = image.data[off : off + BLOCK]
                got = dev.read(image.address + off, len(want))
                for i, (w, g) in enumerate(zip(want, got, strict=True)):
                    if w != g:
                        raise DeviceError(
                            f"verify failed at {image.address + off + i:#010x}: wrote {w:#04x},"
                            f" read {g:#04x}"
                        )
                update(off + len(want))
        say(f"verify {len(image.data):,} bytes read back, identical")
        if wiring is not None:
            port.set_lines(**{wiring[1]: True})  # BOOT0 low: the next reset runs the application
        if opts.go:
            dev.go(board.flash.origin if board.flash else image.address)
            say(f"go     started at {board.flash.origin if board.flash else image.address:#010x}")
        else:
            say("go     skipped (--no-go): reset the board with BOOT0 low to run it")
