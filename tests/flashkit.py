"""Helpers of the flashing tests: one real build per board (cached for the session), the
firmware's bytes by address read from its ELF with the test's own few lines, and the CLI run
in a child process with its time measured."""

from __future__ import annotations

import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

FAULT_BOUND_S = 8.0  # every injected fault must end the command within this


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """built(board) -> the build folder of the bundled example for that board."""
    cache: dict[str, Path] = {}

    def get(board: str) -> Path:
        if board not in cache:
            out = tmp_path_factory.mktemp("fw") / f"digits-{board}"
            r = cli("build", str(ROOT / "examples" / "digits.tflite"), "--board", board,
                    "-o", str(out))  # fmt: skip
            assert r.returncode == 0, r.stderr
            cache[board] = out
        return cache[board]

    return get


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tinycompile.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def timed_cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = cli(*args, timeout=60)
    return r, time.monotonic() - t0


def elf_segments(build_dir: Path, board: str) -> list[tuple[int, bytes]]:
    """(physical address, bytes) of every loadable segment with file contents."""
    raw = (build_dir / "build" / f"{board}-board" / "firmware.elf").read_bytes()
    assert raw[:4] == b"\x7fELF"
    phoff = struct.unpack_from("<I", raw, 28)[0]
    size, count = struct.unpack_from("<HH", raw, 42)
    segs = []
    for i in range(count):
        kind, off, _v, paddr, filesz = struct.unpack_from("<5I", raw, phoff + i * size)
        if kind == 1 and filesz:
            segs.append((paddr, raw[off : off + filesz]))
    assert segs
    return segs


def assert_failed_clearly(r: subprocess.CompletedProcess, elapsed: float, *words: str) -> None:
    """A non-zero exit, one line naming the problem, quickly, and never a claim of success."""
    out = (r.stdout + r.stderr).lower()
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert elapsed < FAULT_BOUND_S, elapsed
    assert "success" not in out and "done:" not in out and "identical" not in out
    for w in words:
        assert w.lower() in r.stderr.lower(), r.stderr
