"""The worker process and its line protocol.

The worker (``worker_main``, started as ``python -m tests.fuzz.fuzz_models --worker``) runs
cases under an address-space limit: one JSON request per stdin line, one JSON result per line.
The parent's ``Worker`` gives each case a time limit, and kills and restarts the worker's
process group when it hangs or dies.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .runners import remove_board_runtime, run_board_case, run_model_case

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------ worker side


def limit_memory(mem_mb: int) -> None:
    import resource

    lim = mem_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (lim, resource.getrlimit(resource.RLIMIT_AS)[1]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class NegativeTensorId(Exception):
    """Graph.t(-1): Python would silently return the last tensor for an optional operand."""


def guard_negative_ids() -> None:
    """Make ``Graph.t`` refuse negative ids (in the fuzz worker only), so that code treating an
    absent optional operand (-1) as a tensor fails loudly instead of reading the last tensor."""
    from tinycompile import ir

    if getattr(ir.Graph.t, "_fuzz_guard", False):
        return
    real = ir.Graph.t

    def t(self: Any, tid: int) -> Any:
        if tid < 0:
            raise NegativeTensorId(f"Graph.t({tid})")
        return real(self, tid)

    t._fuzz_guard = True  # type: ignore[attr-defined]
    ir.Graph.t = t  # type: ignore[method-assign]


def worker_main(mem_mb: int) -> None:
    """Serve cases: one JSON request per stdin line, one JSON result per line on fd 3's copy."""
    import faulthandler

    limit_memory(mem_mb)
    faulthandler.enable()
    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints must not corrupt the protocol
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    os.environ["TINYCOMPILE_DEBUG"] = "1"
    import tinycompile.api  # noqa: F401 - import once, before the first case

    guard_negative_ids()
    from tinycompile.ops import load_all

    try:
        load_all()
    except Exception:  # noqa: BLE001 - a missing op module shows up in every case instead
        pass
    import atexit

    atexit.register(remove_board_runtime)
    proto.write('{"status": "ready"}\n')
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req["target"] != "boards":  # models: .tflite or .onnx
            res = run_model_case(req["path"], req.get("build", False), req.get("case", 0))
        else:
            res = run_board_case(req["path"])
        proto.write(json.dumps(res) + "\n")
        proto.flush()


# ------------------------------------------------------------------------------ parent side


class WorkerDied(Exception):
    pass


class WorkerTimeout(Exception):
    pass


class Worker:
    """A worker subprocess with a line protocol, killed and restarted on hang or death."""

    def __init__(self, mem_mb: int, log_path: Path) -> None:
        self.mem_mb = mem_mb
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.buf = b""
        self.starts = 0

    def start(self) -> None:
        # the worker's scratch files (kernel objects, builds) go under the parent's folder, so
        # they are removed even when the worker is killed
        tmp = self.log_path.parent / "worker-tmp"
        tmp.mkdir(exist_ok=True)
        env = dict(
            os.environ,
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
            TMPDIR=str(tmp),
            PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        )
        log = open(self.log_path, "wb")  # noqa: SIM115 - owned by the child
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fuzz.fuzz_models",
                "--worker",
                "--mem-mb",
                str(self.mem_mb),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=ROOT,
            env=env,
            start_new_session=True,  # its own process group: stop() also ends cc and test runs
        )
        log.close()
        self.buf = b""
        self.starts += 1
        ready = self._read_line(120.0)
        if json.loads(ready).get("status") != "ready":
            raise RuntimeError(f"worker did not start: {ready!r}")

    def stop(self, *, polite: bool = True) -> None:
        if self.proc is not None:
            if polite and self.proc.poll() is None and self.proc.stdin is not None:
                try:  # a polite end first: the worker leaves its loop and cleans up
                    self.proc.stdin.close()
                    self.proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the group this worker leads
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
            self.proc = None

    def _read_line(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerTimeout
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerDied
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def run(self, req: dict[str, Any], timeout: float) -> dict[str, Any]:
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
            return json.loads(self._read_line(timeout))
        except (BrokenPipeError, WorkerDied):
            rc = self.proc.wait()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            tail = self.log_path.read_bytes()[-3000:].decode(errors="replace")
            self.proc = None
            return {"status": "fail", "kind": f"worker died (exit {rc})", "detail": tail}
        except WorkerTimeout:
            self.stop(polite=False)
            return {"status": "fail", "kind": "hang", "detail": f"no answer within {timeout:g} s"}
