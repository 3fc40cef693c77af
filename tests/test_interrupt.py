"""Interruptions: SIGINT/SIGTERM stop every child (QEMU, compilers), leave no temporary folder and
no half-built output folder, and exit 130/143 with one line on stderr. Also: a build without
arm-none-eabi-gcc leaves nothing, and the progress line of long runs."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import MODELS, ROOT

from tinycompile import api, procs

DIGITS = ROOT / "examples" / "digits.tflite"
KWS = MODELS / "kws_dscnn.tflite"  # ~30 ms of QEMU per input: 1000 inputs run for half a minute
HAVE_QEMU = shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")
needs_qemu = pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc")


def processes() -> list[tuple[int, str, int, int]]:
    """(pid, command name, parent pid, process group) of every live (not zombie) process."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if state != "Z":
            found.append((int(d.name), name, int(ppid), int(pgrp)))
    return found


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of the live children of `pid`."""
    return [(p, name) for p, name, ppid, _ in processes() if ppid == pid]


def group_alive(pgid: int, wait_s: float = 3.0) -> bool:
    """Whether a live (not zombie) process is still in process group `pgid` after `wait_s` (a
    killed process takes a moment to die)."""
    deadline = time.monotonic() + wait_s
    while any(pgrp == pgid for _, _, _, pgrp in processes()):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)
    return False


def start_cli(args: list[str], tmpdir: Path, **env: str) -> subprocess.Popen[str]:
    """The CLI in a child process, its temporary folders under `tmpdir`."""
    return subprocess.Popen(
        [sys.executable, "-m", "tinycompile.cli", *args],
        cwd=tmpdir.parent,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the test's own process group is not signalled
    )


def wait_for_child(proc: subprocess.Popen[str], prefix: str, timeout_s: float = 60) -> int:
    """Poll until `proc` has a child named `prefix`...; returns its pid."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for pid, name in children(proc.pid):
            if name.startswith(prefix):
                return pid
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail(f"no {prefix} child appeared (exit {proc.returncode}): {err[-2000:]}")


def interrupt(proc: subprocess.Popen[str], sig: int) -> tuple[int, str, list[int]]:
    """Send `sig`; return the exit status, stderr (bounded wait) and the process groups of the
    children it had then (each child leads a group of its own)."""
    groups = [pid for pid, _ in children(proc.pid)]
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"tinycompile did not exit within 30 s of signal {sig}")
    return proc.returncode, err, groups


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.qemu
@needs_qemu
def test_sigint_during_emulator_run_stops_qemu(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    args = ["run", str(KWS), "--board", "stm32f746", "--emulator", "-n", "1000"]
    proc = start_cli(args, tmpdir)
    qemu = wait_for_child(proc, "qemu-system-arm")
    time.sleep(0.5)  # well inside the run
    rc, err, groups = interrupt(proc, signal.SIGINT)
    assert rc == 130, err
    assert err.strip().splitlines() == ["tinycompile: interrupted"], err
    assert qemu in groups
    assert not group_alive(qemu), "QEMU (or its process group) outlived tinycompile"
    assert list(tmpdir.iterdir()) == [], "temporary folders left behind"


@pytest.mark.qemu
@needs_qemu
def test_sigterm_during_firmware_build_keeps_the_previous_output(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    out = api.generate(DIGITS, tmp_path / "out")  # an earlier project in DIR
    before = tree(out)
    proc = start_cli(["build", str(DIGITS), "--board", "stm32f746", "-o", str(out)], tmpdir)
    wait_for_child(proc, "arm-none-eabi-")
    rc, err, groups = interrupt(proc, signal.SIGTERM)
    assert rc == 143, err
    assert err.strip().splitlines() == ["tinycompile: interrupted"], err
    assert groups and not [g for g in groups if group_alive(g)], "a compiler outlived tinycompile"
    assert tree(out) == before, "the previous output folder changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tmp"], "staging folder left"
    assert not list(tmp_path.rglob("*.o")), "object files left behind"
    assert list(tmpdir.iterdir()) == [], "temporary folders left behind"


def test_build_without_arm_gcc_leaves_nothing(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    out = tmp_path / "out"
    proc = start_cli(
        ["build", str(DIGITS), "--board", "stm32f746", "-o", str(out)], tmpdir, PATH=str(empty_bin)
    )
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert "arm-none-eabi-gcc not found" in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists(), "a half project was left in the output folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "tmp"]
    assert list(tmpdir.iterdir()) == []


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_progress_line_only_on_a_terminal(
    tty: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    results = tmp_path / "tc_out.bin"
    progress = procs.Progress(300, after_s=0.0)
    poll = procs.file_progress(progress, results, record_bytes=50)
    poll()  # no file yet: nothing
    results.write_bytes(bytes(50 * 120 + 7))
    poll()
    progress.close()
    assert err.getvalue() == ("\rinputs 120/300\r\033[K" if tty else "")


def test_a_quick_run_shows_no_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    progress = procs.Progress(300)  # shown after 3 s only
    progress.update(10)
    progress.close()
    assert err.getvalue() == ""


def test_a_child_is_stopped_when_its_caller_unwinds(tmp_path: Path) -> None:
    """An exception (here a timeout) in the waiting thread stops the child's whole group."""
    with pytest.raises(subprocess.TimeoutExpired):
        procs.run(["sh", "-c", "echo $$ > pid; sleep 30 & sleep 30"], cwd=tmp_path, timeout_s=1)
    assert not group_alive(int((tmp_path / "pid").read_text()))
