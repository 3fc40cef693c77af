"""How much tensor arena TensorFlow Lite Micro needs for a model (host build of TFLM).

Two independent measurements:

- ``recorded_arena``: TFLM's RecordingMicroAllocator, read through ``print_allocations()``. It
  prints from C++ (printf to file descriptor 1), so the output is captured at descriptor level.
  It splits the arena into the *head* (non-persistent: activation tensors and kernel scratch, laid
  out by TFLM's greedy planner) and the *tail* (persistent: interpreter structs, per-op data such
  as requantization multipliers, tensor metadata).
- ``minimal_arena``: the smallest ``arena_size`` with which the interpreter still allocates,
  found by bisection (the interpreter allocates all tensors when it is constructed).

On the host TFLM is a 64-bit build: pointers and structs in the tail are larger than on a 32-bit
Cortex-M, so ``total`` overstates what a microcontroller needs; ``head`` is the figure comparable
with an activation arena. Run as ``python benchmarks/tflm_arena.py model.tflite ...``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_LIBC = ctypes.CDLL(None)


@dataclass
class TflmArena:
    """TFLM arena figures for one model, in bytes."""

    total: int  # head + tail, as recorded
    head: int  # non-persistent: activations and scratch buffers
    tail: int  # persistent: interpreter and per-op data
    minimal: int | None = None  # smallest arena_size that allocates (bisection), if measured


@contextlib.contextmanager
def capture_fds(fds: tuple[int, ...] = (1, 2)) -> Iterator[list[str]]:
    """Redirect OS-level file descriptors into a temp file; the text lands in the yielded list."""
    sys.stdout.flush()
    sys.stderr.flush()
    text: list[str] = []
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = [os.dup(fd) for fd in fds]
        try:
            for fd in fds:
                os.dup2(tmp.fileno(), fd)
            yield text
        finally:
            _LIBC.fflush(None)  # C stdio buffers go to the temp file, not the restored terminal
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, s in zip(fds, saved, strict=True):
                os.dup2(s, fd)
                os.close(s)
            tmp.seek(0)
            text.append(tmp.read().decode(errors="replace"))


def _runtime():
    from tflite_micro.python.tflite_micro import runtime

    return runtime


def _zero_inputs(interp) -> None:
    i = 0
    while True:
        try:
            d = interp.get_input_details(i)
        except Exception:
            return
        interp.set_input(np.zeros(d["shape"], dtype=d["dtype"]), i)
        i += 1


_LINE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def parse_allocations(text: str) -> dict[str, int]:
    """``{"total": .., "head": .., "tail": ..}`` from RecordingMicroAllocator's report."""
    return {k: int(v) for k, v in _LINE.findall(text)}


def recorded_arena(model: str | Path, *, invoke: bool = True) -> TflmArena:
    """Arena use recorded by TFLM's RecordingMicroAllocator (after one invoke on zeros)."""
    runtime = _runtime()
    with capture_fds() as out:
        interp = runtime.Interpreter.from_file(str(model))
        if invoke:
            _zero_inputs(interp)
            interp.invoke()
        interp.print_allocations()
    found = parse_allocations(out[0])
    if not {"total", "head", "tail"} <= found.keys():
        raise RuntimeError(f"could not read TFLM allocations for {model}:\n{out[0][:2000]}")
    return TflmArena(total=found["total"], head=found["head"], tail=found["tail"])


def _try_allocate(model: str | Path, arena_size: int, invoke: bool) -> bool:
    runtime = _runtime()
    with capture_fds():
        try:
            interp = runtime.Interpreter.from_file(str(model), arena_size=arena_size)
            if invoke:
                _zero_inputs(interp)
                interp.invoke()
        except Exception:
            return False
    return True


def allocates(model: str | Path, arena_size: int, *, invoke: bool = False) -> bool:
    """Whether TFLM sets the model up (and optionally invokes it) in ``arena_size`` bytes.

    Each probe runs in a forked child: TFLM segfaults on some arenas far too small (seen with a
    few hundred bytes), which must count as "does not fit", not end the measurement.
    """
    if not hasattr(os, "fork"):
        return _try_allocate(model, arena_size, invoke)
    _runtime()  # import once in the parent, so children start warm
    pid = os.fork()
    if pid == 0:  # child: report through the exit status only
        try:
            ok = _try_allocate(model, arena_size, invoke)
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def minimal_arena(model: str | Path, *, hi: int | None = None, invoke: bool = False) -> int:
    """Smallest ``arena_size`` that allocates, by bisection (``hi`` must allocate)."""
    size = Path(model).stat().st_size
    hi = hi or max(10 * size, 1 << 16)
    while not allocates(model, hi, invoke=invoke):
        hi *= 2
        if hi > 1 << 30:
            raise RuntimeError(f"TFLM does not allocate {model} even with 1 GiB")
    lo = 0  # invariant: lo fails (or is 0), hi allocates
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if allocates(model, mid, invoke=invoke):
            hi = mid
        else:
            lo = mid
    return hi


def measure(model: str | Path, *, bisect: bool = True) -> TflmArena:
    """Recorded figures, plus the bisected minimum when ``bisect``."""
    a = recorded_arena(model)
    if bisect:
        a.minimal = minimal_arena(model, hi=a.total)
    return a


def main(argv: list[str]) -> None:
    print(f"{'model':28s} {'head':>9s} {'tail':>9s} {'total':>9s} {'minimal':>9s}")
    for m in argv:
        a = measure(m)
        print(f"{Path(m).name:28s} {a.head:9d} {a.tail:9d} {a.total:9d} {a.minimal:9d}")


if __name__ == "__main__":
    main(sys.argv[1:])
