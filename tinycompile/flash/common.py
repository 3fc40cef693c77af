"""What every flashing method shares: options, bounded timeouts, progress and messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..procs import Progress


@dataclass(frozen=True)
class Timeouts:
    """Bounded waits, in seconds (erase is scaled by the bytes erased)."""

    answer: float = 1.0  # an ACK, a reply line, a block of read-back
    sync: float = 0.5  # each sync attempt
    erase_base: float = 5.0
    erase_per_kib: float = 0.05  # 256 KB sector: 5 + 12.8 s (data sheets: 2-4 s)
    reappear: float = 10.0  # the SAM-BA port coming back after the 1200-baud touch

    def erase(self, nbytes: int) -> float:
        return self.erase_base + self.erase_per_kib * nbytes / 1024


@dataclass(frozen=True)
class FlashOptions:
    """What `tinycompile flash` was asked for (method-specific fields are ignored elsewhere)."""

    port: str | None = None
    baud: int | None = None
    go: bool = True
    boot_lines: str = "none"
    touch: bool | None = None  # SAM-BA: None = only when no bootloader answers on the port
    bootloader_port: str | None = None
    drive: str | None = None
    retries: int = 3
    timeouts: Timeouts = field(default_factory=Timeouts)


def say(text: str) -> None:
    """One line of the flashing log on stdout."""
    print(text, flush=True)


@contextmanager
def progress(what: str, total: int) -> Iterator[Callable[[int], None]]:
    """A bar on stderr while a stage runs (only on a terminal); yields update(done)."""
    bar = Progress(total, f"{what:<6}", after_s=0.0, bar=True)
    try:
        yield bar.update
    finally:
        bar.close()


def kib(n: int) -> str:
    return f"{n // 1024} KB" if n % 1024 == 0 else f"{n:,} B"
