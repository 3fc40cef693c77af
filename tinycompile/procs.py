"""Child processes and interruptions: the one place that starts QEMU, compilers and host runners.

Every child runs in its own process group (``start_new_session``, so a terminal's Ctrl-C reaches
tinycompile only) and is tracked while it runs. When the calling thread unwinds (an exception,
a timeout) its child's group is terminated, waited for, and killed after a short grace.

`handle_signals` (installed by the CLI) turns SIGINT/SIGTERM into: every tracked child's group
terminated at once, no new child started, then an exception in the main thread (SIGINT:
KeyboardInterrupt, exit 130; SIGTERM: `Terminated`, exit 143) whose unwinding removes temporary
folders and partial outputs. A second signal during that cleanup is ignored. `deferred` holds
the exception back over a few statements that must not be cut in half (moving a folder).

`Progress` prints "inputs done/total" (or a bar: flash's erase/write/verify) on stderr for long
runs when stderr is a terminal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

GRACE_S = 2.0  # between SIGTERM and SIGKILL of a child's group
POLL_S = 0.25  # how often a waiting thread looks at interruptions and progress

_lock = threading.RLock()
_children: dict[int, subprocess.Popen[Any]] = {}
_signal: int | None = None  # the signal being handled (set once per handle_signals)
_defer = 0  # depth of `deferred` blocks in the main thread
_pending: int | None = None  # a signal that arrived inside a deferred block


class Terminated(SystemExit):
    """SIGTERM: unwinds like an exit with status 143 (not caught by ``except Exception``)."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


class Interrupted(Exception):
    """Raised in a worker thread that would start a child after an interruption."""


def _interruption(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated()


def _signal_group(proc: subprocess.Popen[Any], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop(proc: subprocess.Popen[Any], grace_s: float = GRACE_S) -> None:
    """Terminate a child's process group, wait for it, kill the group after `grace_s`.

    Only the thread that owns the child (waits for it) calls this."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc, signal.SIGKILL)  # stragglers in the group (the leader may be gone)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _handler(signum: int, frame: FrameType | None) -> None:
    global _signal, _pending
    with _lock:
        first = _signal is None
        if first:
            _signal = signum
        children = list(_children.values())
    for c in children:  # their owners wait for them and kill them after the grace
        _signal_group(c, signal.SIGTERM)
    if not first:
        return  # already unwinding: let the cleanup finish
    if signum != signal.SIGINT:  # the CLI reports a KeyboardInterrupt itself
        erase = b"\r\033[K" if sys.stderr.isatty() else b""  # over a progress line
        os.write(2, erase + b"tinycompile: interrupted\n")  # not print: no reentrant stderr
    if _defer:
        _pending = signum
        return
    raise _interruption(signum)


def handle_signals() -> None:
    """Install the SIGINT/SIGTERM handlers (main thread only; resets an earlier interruption)."""
    global _signal, _pending
    _signal = _pending = None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handler)
        signal.signal(signal.SIGTERM, _handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold a handled signal's exception back until the block ends (main thread only)."""
    global _defer, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _defer += 1
    try:
        yield
    finally:
        _defer -= 1
        if not _defer and _pending is not None:
            signum, _pending = _pending, None
            raise _interruption(signum)


def _check_not_interrupted() -> None:
    if _signal is not None:
        if threading.current_thread() is threading.main_thread():
            raise _interruption(_signal)
        raise Interrupted("interrupted")


def start(cmd: Sequence[str], **popen_kw: Any) -> subprocess.Popen[Any]:
    """Start a tracked child in its own process group (`subprocess.Popen` keywords).

    The caller must `release` it (``finally``) after it ended or was `stop`ped; `spawn` does both.
    """
    _check_not_interrupted()
    with deferred():  # a signal arriving while Popen runs is raised once the child is tracked
        proc = subprocess.Popen(list(cmd), start_new_session=True, **popen_kw)
        with _lock:
            _children[proc.pid] = proc
            late = _signal is not None  # an interruption came before it was tracked
        if late:
            stop(proc)
            release(proc)
    if late:
        _check_not_interrupted()
    return proc


def release(proc: subprocess.Popen[Any]) -> None:
    """Stop tracking a child (after it ended)."""
    with _lock:
        _children.pop(proc.pid, None)


@contextmanager
def spawn(cmd: Sequence[str], **popen_kw: Any) -> Iterator[subprocess.Popen[Any]]:
    """A tracked child for the block; its group is stopped when the block ends, however."""
    proc = start(cmd, **popen_kw)
    try:
        yield proc
    finally:
        stop(proc)
        release(proc)


def communicate(
    proc: subprocess.Popen[Any],
    timeout_s: float | None,
    *,
    poll: Callable[[], None] | None = None,
) -> tuple[Any, Any]:
    """`Popen.communicate` in short slices, calling `poll` between them.

    Raises `subprocess.TimeoutExpired` after `timeout_s` (the child is left running) and, in a
    worker thread, `Interrupted` when an interruption is handled (the child is stopped).
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout_s or 0)
        try:
            return proc.communicate(timeout=POLL_S if left is None else min(POLL_S, left))
        except subprocess.TimeoutExpired:
            pass
        if _signal is not None:
            stop(proc)
            _check_not_interrupted()
        if poll is not None:
            poll()


def run(
    cmd: Sequence[str],
    *,
    cwd: str | Path | None = None,
    timeout_s: float | None = None,
    text: bool = False,
    poll: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[Any]:
    """Run a tracked child to its end, capturing stdout and stderr (`subprocess.run` alike).

    On a timeout (`subprocess.TimeoutExpired`) or any exception its group is stopped first.
    """
    proc = start(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, text=text, env=env)  # fmt: skip
    try:
        out, err = communicate(proc, timeout_s, poll=poll)
    except BaseException:
        stop(proc)
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()
        raise
    finally:
        release(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stop_all(grace_s: float = GRACE_S) -> None:
    """Terminate every tracked child's group, killing it after `grace_s` (their owners, maybe
    other threads, still wait for them): for an exception unwinding a pool of workers."""
    with _lock:
        children = list(_children.values())
    for c in children:
        _signal_group(c, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(c.poll() is None for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    for c in children:
        _signal_group(c, signal.SIGKILL)


class Progress:
    """ "inputs done/total" on stderr (with `bar`, a bar before it), shown after `after_s`
    seconds and only on a terminal."""

    def __init__(
        self, total: int, what: str = "inputs", *, after_s: float = 3.0, bar: bool = False
    ) -> None:
        self.total, self.what, self.after_s, self.bar = total, what, after_s, bar
        self.start = time.monotonic()
        self.shown = False
        self.last = -1
        self.enabled = total > 0 and sys.stderr.isatty()

    def update(self, done: int) -> None:
        """Show `done` (clamped to the total) once the run has taken `after_s` seconds."""
        done = min(done, self.total)
        if not self.enabled or done == self.last or time.monotonic() - self.start < self.after_s:
            return
        if self.bar:  # "write [#######.............]  12,288/17,264"
            filled = 24 * done // self.total
            line = f"{self.what} [{'#' * filled}{'.' * (24 - filled)}] {done:,}/{self.total:,}"
        else:
            line = f"{self.what} {done}/{self.total}"
        sys.stderr.write(f"\r{line}")
        sys.stderr.flush()
        self.shown, self.last = True, done

    def close(self) -> None:
        """Erase the line, if one was shown."""
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def file_progress(progress: Progress, path: Path, record_bytes: int) -> Callable[[], None]:
    """A `poll` callback: progress from a results file growing by `record_bytes` per input."""

    def poll() -> None:
        try:
            size = path.stat().st_size
        except OSError:
            return
        progress.update(size // max(1, record_bytes))

    return poll
