"""The STM32 system-memory bootloader's USART protocol (ST AN3155), device side.

The flash is a byte array with the part's sector map: erased state 0xFF, programming can only
clear bits (``old & new``). After the 0x7F autobaud byte (only accepted on an 8E1 line: the
slave's termios is read from the master side) every command is a code and its complement,
answered ACK 0x79 or NACK 0x1F; addresses are 4 bytes MSB first plus their XOR; counts are
N-1; data frames end with the XOR of the count and the data.

Some kernels refuse parity on ptys (EINVAL): ``parity_capable`` says whether this one holds
PARENB; when it does not, the line must be 8N1 with one stop bit (the flasher then says so in
a notice), else 8E1 exactly.
"""

from __future__ import annotations

import termios

from .ptydev import PtyDevice

ACK, NACK = 0x79, 0x1F
CMDS_EXT = [0x00, 0x01, 0x02, 0x11, 0x21, 0x31, 0x44, 0x63, 0x73, 0x82, 0x92]
CMDS_LEGACY = [0x00, 0x01, 0x02, 0x11, 0x21, 0x31, 0x43, 0x63, 0x73, 0x82, 0x92]


def xor(data: bytes | list[int]) -> int:
    x = 0
    for b in data:
        x ^= b
    return x


class Stm32RomSim(PtyDevice):
    """One STM32 in its ROM bootloader.

    Faults: ``silent`` (never answers), ``nack`` (a command code whose last step is NACKed),
    ``stuck`` ((address, value): a cell that keeps ``value`` whatever is written), and the
    base's dropped bytes; ``legacy_erase`` offers ERASE 0x43 instead of EXTENDED ERASE 0x44.
    ``write_unit``: the flash's programming unit in bytes (4 by default; 16 on the STM32U5,
    programmed by quad-words with ECC, RM0456): a WRITE MEMORY must start and end on the unit,
    and every unit it writes must be erased (all 0xFF) beforehand, else it is NACKed.
    """

    def __init__(
        self,
        *,
        product_id: int,
        sectors: list[tuple[int, int]],
        initial: bytes,
        version: int = 0x31,
        legacy_erase: bool = False,
        silent: bool = False,
        nack: int | None = None,
        stuck: tuple[int, int] | None = None,
        drop_rx: set[int] = frozenset(),
        drop_tx: set[int] = frozenset(),
        write_unit: int = 4,
    ) -> None:
        super().__init__(drop_rx=drop_rx, drop_tx=drop_tx)
        self.product_id, self.sectors, self.version = product_id, list(sectors), version
        self.origin = sectors[0][0]
        self.flash = bytearray(initial)
        assert len(self.flash) == sum(s for _, s in sectors)
        self.commands = CMDS_LEGACY if legacy_erase else CMDS_EXT
        self.silent, self.nack, self.stuck = silent, nack, stuck
        self.write_unit = write_unit
        self.erased: list[int] = []
        self.log: list[str] = []
        self.go_address: int | None = None
        self.line_errors = 0
        assert self.parity_capable in (True, False)  # probed before the flasher opens the port

    # -- helpers -----------------------------------------------------------------------------
    @property
    def parity_capable(self) -> bool:
        """Whether this kernel's ptys keep even parity (probed once)."""
        if not hasattr(self, "_parity_capable"):
            attrs = termios.tcgetattr(self.master)
            try:
                termios.tcsetattr(
                    self.master,
                    termios.TCSANOW,
                    [*attrs[:2], attrs[2] | termios.PARENB, *attrs[3:]],
                )
                self._parity_capable = bool(self.cflag() & termios.PARENB)
            except termios.error:
                self._parity_capable = False
            termios.tcsetattr(self.master, termios.TCSANOW, attrs)
        return self._parity_capable

    def _8e1(self) -> bool:
        c = self.cflag()
        if c & termios.CSIZE != termios.CS8 or c & termios.CSTOPB:
            return False
        if self.parity_capable:
            return bool(c & termios.PARENB) and not c & termios.PARODD
        return True

    def _in_flash(self, addr: int, n: int = 1) -> bool:
        return self.origin <= addr and addr + n <= self.origin + len(self.flash)

    def _address(self) -> int | None:
        raw = self.recv(4)
        if self.recv1() != xor(raw):
            return None
        return int.from_bytes(raw, "big")

    def _apply_stuck(self) -> None:
        if self.stuck:
            self.flash[self.stuck[0] - self.origin] = self.stuck[1]

    def _erase(self, index: int) -> None:
        a, size = self.sectors[index]
        self.flash[a - self.origin : a - self.origin + size] = b"\xff" * size
        self.erased.append(index)
        self._apply_stuck()

    # -- the device ---------------------------------------------------------------------------
    def serve(self) -> None:
        while True:  # autobaud: the first 0x7F on a correctly framed line
            b = self.recv1()
            if self.silent:
                continue
            if b == 0x7F and self._8e1():
                self.send(bytes([ACK]))
                break
            self.line_errors += 1
        while self.go_address is None:
            code = self.recv1()
            if self.recv1() != code ^ 0xFF or code not in self.commands:
                self.send(bytes([NACK]))
                continue
            self.send(bytes([ACK]))
            handler = {
                0x00: self._get,
                0x01: self._get_version,
                0x02: self._get_id,
                0x11: self._read,
                0x21: self._go,
                0x31: self._write,
                0x43: self._erase_legacy,
                0x44: self._erase_extended,
            }.get(code)
            if handler is None:
                self.send(bytes([NACK]))
            else:
                self.log.append(handler.__name__.strip("_"))
                handler()
        # GO: the application runs; the bootloader no longer answers

    def _ok(self, code: int, ok: bool = True) -> None:
        self.send(bytes([ACK if ok and self.nack != code else NACK]))

    def _get(self) -> None:
        self.send(bytes([len(self.commands), self.version, *self.commands, ACK]))

    def _get_version(self) -> None:
        self.send(bytes([self.version, 0, 0, ACK]))

    def _get_id(self) -> None:
        self.send(bytes([1, self.product_id >> 8, self.product_id & 0xFF, ACK]))

    def _read(self) -> None:
        addr = self._address()
        if addr is None or not self._in_flash(addr):
            self.send(bytes([NACK]))
            return
        self.send(bytes([ACK]))
        n, comp = self.recv(2)
        if n ^ comp != 0xFF or not self._in_flash(addr, n + 1):
            self.send(bytes([NACK]))
            return
        off = addr - self.origin
        self.send(bytes([ACK]) + bytes(self.flash[off : off + n + 1]))

    def _write(self) -> None:
        addr = self._address()
        if addr is None or not self._in_flash(addr):
            self.send(bytes([NACK]))
            return
        self.send(bytes([ACK]))
        n = self.recv1()
        data = self.recv(n + 1)
        ok = self.recv1() == xor([n, *data])
        unit = self.write_unit
        ok = ok and addr % unit == 0 and (n + 1) % unit == 0 and self._in_flash(addr, n + 1)
        off = addr - self.origin
        if ok and unit > 4:  # ECC flash: each unit is programmed once after an erase
            ok = self.flash[off : off + n + 1] == b"\xff" * (n + 1)
        if ok and self.nack != 0x31:
            for i, d in enumerate(data):
                self.flash[off + i] &= d  # programming clears bits only
            self._apply_stuck()
        self._ok(0x31, ok)

    def _erase_extended(self) -> None:
        head = self.recv(2)
        n = int.from_bytes(head, "big")
        if n >= 0xFFF0:  # mass or bank erase: not what a flasher of one image should send
            self.recv1()
            self.send(bytes([NACK]))
            return
        pages = self.recv(2 * (n + 1))
        ok = self.recv1() == xor(head + pages)
        nums = [int.from_bytes(pages[i : i + 2], "big") for i in range(0, len(pages), 2)]
        ok = ok and all(p < len(self.sectors) for p in nums)
        if ok and self.nack != 0x44:
            for p in nums:
                self._erase(p)
        self._ok(0x44, ok)

    def _erase_legacy(self) -> None:
        n = self.recv1()
        if n == 0xFF:  # global erase
            self.recv1()
            self.send(bytes([NACK]))
            return
        pages = self.recv(n + 1)
        ok = self.recv1() == xor([n, *pages]) and all(p < len(self.sectors) for p in pages)
        if ok and self.nack != 0x43:
            for p in pages:
                self._erase(p)
        self._ok(0x43, ok)

    def _go(self) -> None:
        addr = self._address()
        ok = addr is not None and self._in_flash(addr)
        self._ok(0x21, ok)
        if ok and self.nack != 0x21:
            self.go_address = addr
