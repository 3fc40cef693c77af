"""A pseudo-terminal whose master side a simulator thread reads and writes, byte by byte."""

from __future__ import annotations

import errno
import os
import select
import termios
import threading
import time
import tty


class Stopped(Exception):
    """The simulator was asked to stop (or was reset away from this pty)."""


class PtyDevice:
    """Base: open a pty, run ``serve()`` in a thread; faults drop bytes by their index."""

    def __init__(self, *, drop_rx: set[int] = frozenset(), drop_tx: set[int] = frozenset()):
        self.drop_rx, self.drop_tx = set(drop_rx), set(drop_tx)
        self.nrx = self.ntx = 0
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self.master = -1
        self.slave_path = self._new_pty()
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _new_pty(self) -> str:
        master, slave = os.openpty()
        tty.setraw(slave)
        path = os.ttyname(slave)
        os.close(slave)  # the flasher holds the slave; its close is seen here as a hang-up
        self.master = master
        return path

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(5)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1

    def _main(self) -> None:
        try:
            self.serve()
        except Stopped:
            pass
        except BaseException as e:  # reported by the test through .error
            self.error = e

    def serve(self) -> None:
        raise NotImplementedError

    def idle(self) -> None:
        """Called between polls of the port while waiting for a byte (line-state checks)."""

    # -- line state seen from the master side --------------------------------------------------
    def cflag(self) -> int:
        """The slave's termios c_cflag (a pty master's TCGETS reads its slave's termios)."""
        return termios.tcgetattr(self.master)[2]

    def speed(self) -> int:
        return termios.tcgetattr(self.master)[5]

    def hung_up(self) -> bool:
        """True when no process has the slave open."""
        p = select.poll()
        p.register(self.master, select.POLLIN | select.POLLHUP)
        return any(ev & select.POLLHUP for _, ev in p.poll(0))

    # -- bytes --------------------------------------------------------------------------------
    def recv1(self) -> int:
        """The next byte from the host (blocking like a UART; dropped bytes never arrive)."""
        while True:
            if self._stop.is_set():
                raise Stopped
            r, _, _ = select.select([self.master], [], [], 0.05)
            self.idle()
            if not r:
                continue
            try:
                b = os.read(self.master, 1)
            except OSError as e:
                if e.errno != errno.EIO:  # EIO: the slave is closed
                    raise
                time.sleep(0.01)
                continue
            if not b:
                time.sleep(0.01)
                continue
            i, self.nrx = self.nrx, self.nrx + 1
            if i in self.drop_rx:
                continue
            return b[0]

    def recv(self, n: int) -> bytes:
        return bytes(self.recv1() for _ in range(n))

    def send(self, data: bytes) -> None:
        out = bytearray()
        for b in data:
            i, self.ntx = self.ntx, self.ntx + 1
            if i not in self.drop_tx:
                out.append(b)
        if out:
            os.write(self.master, bytes(out))
