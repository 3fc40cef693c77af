"""Fuzz the model reader (and everything after it) and the board-file reader.

    python -m tests.fuzz.fuzz_models --seconds 60 --seed 1 [--target models|boards|all]
    python -m tests.fuzz.fuzz_models --seconds 1500 --seed 100 --build-rate 0.1 --reasons
    python -m tests.fuzz.fuzz_models --replay build/fuzz-failures/models-s1-c677-da5237a0b0.tflite

Mutants of the seed corpus (tests/fuzz/corpus/, see mutators.py) go to a long-lived worker
process that runs the pipeline under an address-space limit; the parent enforces a per-case time
limit and restarts the worker when it dies or hangs. A case passes when it compiles (with an
in-bounds arena plan and generated C that is pure ASCII with balanced comments; a sampled few
are also built with -Werror and run under ASan/UBSan) or ends in a CompileError whose message
is one line naming the file. Anything else (another exception, MemoryError, a crash, a hang,
unsafe output) is a failure, saved with its input under --out for reproduction.
docs/fuzzing.md has the details and the results of long runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus"
DEFAULT_OUT = ROOT / "build" / "fuzz-failures"
MAX_MESSAGE = 2000


# ------------------------------------------------------------------------------ worker side


def _limit_memory(mem_mb: int) -> None:
    import resource

    lim = mem_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (lim, resource.getrlimit(resource.RLIMIT_AS)[1]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _check_message(e: Exception, path: str) -> str | None:
    """What is wrong with a CompileError as the CLI would print it, or None."""
    line = str(e)
    if not line.strip():
        return "empty error message"
    if "\n" in line or "\r" in line:
        return f"multi-line error message: {line[:300]!r}"
    if len(line) > MAX_MESSAGE:
        return f"error message of {len(line)} characters"
    if path not in line:
        return f"error message does not name the file: {line[:300]!r}"
    return None


def _check_plan(p: Any) -> str | None:
    """Arena placement in bounds, and no two buffers live at once sharing bytes."""
    arena = p.arena_bytes
    for tid in [*p.graph.inputs, *p.graph.outputs]:
        if tid not in p.storage:
            return f"graph input/output tensor {tid} has no place in the arena"
    if arena >= 1 << 32:
        return f"arena of {arena} bytes does not fit a 32-bit address space"
    for b in p.buffers:
        if b.nbytes < 0 or b.offset < 0 or b.offset + b.nbytes > arena:
            return f"buffer {b.id} [{b.offset}, +{b.nbytes}) outside arena of {arena}"
    bs = sorted((b for b in p.buffers if b.nbytes > 0), key=lambda b: b.offset)
    for i, a in enumerate(bs):
        for b in bs[i + 1 :]:
            if b.offset >= a.offset + a.nbytes:
                break
            if a.first <= b.last and b.first <= a.last:
                return f"buffers {a.id} and {b.id} overlap while both live"
    return None


def _check_sources(files: dict[str, str]) -> str | None:
    """Generated C: ASCII only, comments balanced, no trigraphs or line splices in text."""
    for rel, text in files.items():
        if not text.isascii():
            return f"{rel}: non-ASCII output"
        if "??" in text:
            return f"{rel}: '??' (trigraph) in output"
        if text.count("/*") != text.count("*/"):
            return f"{rel}: unbalanced comments"
        if re.search(r"\\[ \t]*\n", text):
            return f"{rel}: backslash at line end"
        if "\r" in text or "\x00" in text:
            return f"{rel}: control characters"
    return None


SAN_FLAGS = [
    "-std=c99",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Werror",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
]
BUILD_MAX_ARENA = 8 << 20
BUILD_MAX_MACS = 50_000_000


def _unlimited() -> None:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))  # ASan reserves terabytes of shadow


_KERNEL_CACHE: dict[str, list[str]] = {}


def _kernel_objects(kernels: list[Path], inc: list[str]) -> list[str]:
    """The model-independent kernels, compiled once per worker (keyed by their contents)."""
    from tinycompile.build import host_cc

    h = hashlib.sha1()
    for k in kernels:
        h.update(k.name.encode() + k.read_bytes())
    for hdr in sorted(Path(inc[3]).glob("*.h")):
        h.update(hdr.name.encode() + hdr.read_bytes())
    key = h.hexdigest()
    if key not in _KERNEL_CACHE:
        cache = Path(tempfile.gettempdir()) / f"tc_fuzz_kernels_{os.getpid()}_{key[:12]}"
        cache.mkdir(exist_ok=True)
        objs = []
        for k in kernels:
            o = cache / (k.stem + ".o")
            r = subprocess.run(
                [host_cc(), *SAN_FLAGS, *inc, "-c", str(k), "-o", str(o)],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if r.returncode != 0:
                raise RuntimeError(f"kernel compile failed:\n{r.stderr[-3000:]}")
            objs.append(str(o))
        _KERNEL_CACHE[key] = objs
    return _KERNEL_CACHE[key]


def _random_inputs(g: Any, n: int, seed: int) -> list[Any]:
    """n samples per graph input, each the input's full shape (batch included)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        if t.dtype == "float32":
            xs.append(rng.uniform(-4, 4, size=(n, *t.shape)).astype(np.float32))
        else:
            xs.append(rng.integers(-128, 128, size=(n, *t.shape), dtype=np.int8))
    return xs


def build_and_run(p: Any, seed: int) -> str | None:
    """Generate the project, build it for the host with ASan and UBSan, run it on two random
    inputs; returns what went wrong, or None. Skipped (None) for plans too big to run quickly."""
    from tinycompile import api
    from tinycompile.build import host_cc, runtime_sources

    if p.arena_bytes > BUILD_MAX_ARENA or sum(la.macs for la in p.layers) > BUILD_MAX_MACS:
        return None
    with tempfile.TemporaryDirectory(prefix="tc_fuzzb_") as td:
        proj = api.generate(p, Path(td) / "proj")
        kernels = [s for s in runtime_sources(proj) if s.parent.name == "kernels"]
        srcs = [s for s in runtime_sources(proj) if s not in kernels]
        srcs += sorted((proj / "model").glob("*.c"))
        srcs.append(proj / "runtime" / "runtime" / "tc_main_host.c")
        inc = ["-I", str(proj / "model"), "-I", str(proj / "runtime" / "include")]
        try:
            objs = _kernel_objects(kernels, inc)
        except RuntimeError as e:
            return str(e)
        exe = Path(td) / "tc_san"
        cmd = [host_cc(), *SAN_FLAGS, *inc, *map(str, srcs), *objs, "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return f"host compile (-Werror, sanitizers) failed:\n{r.stderr[-3000:]}"
        xs = _random_inputs(p.graph, 2, seed)
        Path(td, "tc_in.bin").write_bytes(api.pack_inputs(p.graph, xs))
        env = dict(
            os.environ,
            ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
            UBSAN_OPTIONS="print_stacktrace=1",
        )
        try:
            r = subprocess.run(
                [str(exe)],
                cwd=td,
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
                preexec_fn=_unlimited,
            )
        except subprocess.TimeoutExpired:
            return "generated program ran for more than 60 s"
        if r.returncode != 0:
            return f"generated program failed (exit {r.returncode}):\n{r.stderr[-3000:]}"
        data = Path(td, "tc_out.bin").read_bytes()
        api.unpack_outputs(p, data, 2, debug_layers=False, profile=False)
    return None


def run_model_case(path: str, build: bool = False, seed: int = 0) -> dict[str, Any]:
    """Compile one model as far as it goes; classify the outcome."""
    from tinycompile import api
    from tinycompile.codegen import render_model
    from tinycompile.errors import CompileError
    from tinycompile.fit import check_fit
    from tinycompile.report import plan_dict, plan_table

    try:
        p = api.plan(path)
        json.dumps(plan_dict(p))
        plan_table(p)
        verdict = check_fit(p, "stm32f746")  # what `plan --board` prints
        verdict.text()
        json.dumps(verdict.as_dict())
        files = render_model(p)  # may still refuse the plan (CompileError)
        bad = _check_plan(p)
        if bad:
            return {"status": "fail", "kind": "unsafe plan", "detail": bad}
        bad = _check_sources(files)
        if bad:
            return {"status": "fail", "kind": "unsafe output", "detail": bad}
        if build:
            bad = build_and_run(p, seed)
            if bad:
                return {"status": "fail", "kind": "unsafe program", "detail": bad}
        return {"status": "ok", "ops": len(p.order)}
    except CompileError as e:
        bad = _check_message(e, path)
        if bad:
            return {"status": "fail", "kind": "bad message", "detail": bad}
        return {"status": "rejected", "reason": e.reason}
    except MemoryError:
        return {"status": "fail", "kind": "MemoryError", "detail": traceback.format_exc()}
    except RecursionError:
        tb = traceback.format_exc()[-3000:]
        return {"status": "fail", "kind": "RecursionError", "detail": tb}
    except Exception as e:  # noqa: BLE001 - any other exception is the bug we hunt
        return {"status": "fail", "kind": type(e).__name__, "detail": traceback.format_exc()}


# Text that could end a C comment or string, splice lines, or expand in a Makefile.
DANGEROUS_TEXT = re.compile(r"\*/|/\*|\?\?|[\\\"$`\n\r\x00-\x1f\x7f-\U0010ffff]")
_BOARD_RUNTIME: list[Path] = []


_PLANS: list[Any] = []


def _digits_plan() -> Any:
    from tinycompile import api

    if not _PLANS:
        _PLANS.append(api.plan(ROOT / "examples" / "digits.tflite"))
    return _PLANS[0]


def _board_project() -> Path:
    """A scratch project (model stub + runtime link) for rendering one board's files."""
    from tinycompile.paths import FIRMWARE_DIR

    if not _BOARD_RUNTIME:
        _BOARD_RUNTIME.append(Path(tempfile.mkdtemp(prefix="tc_fuzz_rt_")))
        shutil.copytree(FIRMWARE_DIR, _BOARD_RUNTIME[0] / "runtime")
    proj = Path(tempfile.mkdtemp(prefix="tc_fuzz_bp_"))
    (proj / "model").mkdir()
    (proj / "model" / "tc_model.c").write_text("/* stub */\n")
    (proj / "runtime").symlink_to(_BOARD_RUNTIME[0] / "runtime")
    return proj


def _check_board_output(proj: Path, board: Any, path: str) -> str | None:
    """Board files stay under board/, are ASCII with balanced comments, and carry no text from
    the board file that holds a dangerous character (quote, comment end, $, newline...)."""
    tainted = [
        v
        for v in (board.name, board.description, Path(path).name)
        if isinstance(v, str) and DANGEROUS_TEXT.search(v)
    ]
    for f in sorted(proj.rglob("*")):
        rel = f.relative_to(proj)
        if rel.parts[0] in ("runtime", "model") or f.is_dir():
            continue
        if rel.parts[0] != "board":
            return f"board file written outside board/: {rel}"
        text = f.read_bytes().decode("utf-8", "replace")
        if not text.isascii():
            return f"{rel}: non-ASCII output"
        if f.suffix in (".h", ".ld", ".c", ".S") and text.count("/*") != text.count("*/"):
            return f"{rel}: unbalanced comments"
        if re.search(r"\\[ \t]*\n", text) and f.name != "Makefile":
            return f"{rel}: backslash at line end"
        for v in tainted:
            if v in text:
                return f"{rel}: board text {v[:60]!r} copied verbatim"
    return None


def run_board_case(path: str) -> dict[str, Any]:
    """Read one board file and use it the way the CLI does: list it, check a fit, render its
    linker scripts, header and Makefile."""
    from tinycompile import fit
    from tinycompile.boards import load_board_file
    from tinycompile.build import render_board_files
    from tinycompile.errors import CompileError

    proj = None
    try:
        board = load_board_file(Path(path))
        json.dumps(board.summary())
        board.line()
        board.cpu_flags()
        verdict = fit.check_fit(_digits_plan(), board)  # what `plan --board FILE` prints
        verdict.text()
        json.dumps(verdict.as_dict())
        for arena, flash in ((1000, 1000), (1 << 31, 0), (0, 1 << 40)):
            v = replace(
                verdict,
                arena=arena,
                sram_need=arena + verdict.stack,
                weights=flash,
                flash_need=flash,
            )
            try:
                fit.raise_if_too_big(v, source="m.tflite")
            except CompileError as e:  # DoesNotFit
                bad = _check_message(e, "m.tflite")
                if bad:
                    return {"status": "fail", "kind": "bad message", "detail": bad}
        proj = _board_project()
        try:
            render_board_files(proj, board)
        except CompileError as e:
            # raised after loading: the message names the board rather than the file
            if "\n" in str(e) or (path not in str(e) and board.name not in str(e)):
                return {
                    "status": "fail",
                    "kind": "bad message",
                    "detail": f"neither file nor board named: {str(e)[:300]!r}",
                }
            return {"status": "rejected", "reason": e.reason}
        bad = _check_board_output(proj, board, path)
        if bad:
            return {"status": "fail", "kind": "unsafe board output", "detail": bad}
        return {"status": "ok"}
    except CompileError as e:
        bad = _check_message(e, path)
        if bad:
            return {"status": "fail", "kind": "bad message", "detail": bad}
        return {"status": "rejected", "reason": e.reason}
    except MemoryError:
        return {"status": "fail", "kind": "MemoryError", "detail": traceback.format_exc()}
    except Exception as e:  # noqa: BLE001
        return {"status": "fail", "kind": type(e).__name__, "detail": traceback.format_exc()}
    finally:
        if proj is not None:
            shutil.rmtree(proj, ignore_errors=True)


class NegativeTensorId(Exception):
    """Graph.t(-1): Python would silently return the last tensor for an optional operand."""


def _guard_negative_ids() -> None:
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

    _limit_memory(mem_mb)
    faulthandler.enable()
    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints must not corrupt the protocol
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    os.environ["TINYCOMPILE_DEBUG"] = "1"
    import tinycompile.api  # noqa: F401 - import once, before the first case

    _guard_negative_ids()
    from tinycompile.ops import load_all

    try:
        load_all()
    except Exception:  # noqa: BLE001 - a missing op module shows up in every case instead
        pass
    import atexit

    atexit.register(
        lambda: [
            shutil.rmtree(Path(o[0]).parent, ignore_errors=True)
            for o in _KERNEL_CACHE.values()
            if o
        ]
    )
    atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _BOARD_RUNTIME])
    proto.write('{"status": "ready"}\n')
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if req["target"] == "models":
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


@dataclass
class Failure:
    kind: str
    detail: str
    desc: str
    case: int
    saved: Path | None = None

    def signature(self) -> str:
        """Failures with the same kind and innermost frame count as one bug."""
        frames = [
            f
            for f in re.findall(r'File "([^"]+)", line (\d+)', self.detail)
            if "/tests/fuzz/" not in f[0] or "tinycompile" in f[0]
        ]
        if frames:
            return f"{self.kind} @ {Path(frames[-1][0]).name}:{frames[-1][1]}"
        m = re.search(r"(runtime error: .*|ERROR: \w+: [\w-]+|error: .*)", self.detail)
        what = m.group(1) if m else self.detail.splitlines()[0] if self.detail else ""
        where = re.search(r"([\w.]+\.[ch]):(\d+)", self.detail)
        what = re.sub(r"board/[^\n]*?/(tc_board\.h|Makefile|\w+\.ld)", r"board/B/\1", what)
        what = re.sub(r"board text .* copied verbatim", "board text copied verbatim", what)
        what = re.sub(r"0x[0-9a-f]+|-?\d+", "N", what)[:100]
        return f"{self.kind} @ {where.group(0) if where else '?'}: {what}"


@dataclass
class Stats:
    target: str
    seed: int
    cases: int = 0
    ok: int = 0
    rejected: int = 0
    failures: list[Failure] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    worker_starts: int = 0
    built: int = 0

    def summary(self) -> str:
        sigs = Counter(f.signature() for f in self.failures)
        lines = [
            f"{self.target}: seed {self.seed}: {self.cases} cases in {self.seconds:.0f} s "
            f"({self.cases / max(self.seconds, 1e-9):.1f}/s): {self.ok} compiled, "
            f"{self.rejected} refused with a CompileError, {len(self.failures)} failures "
            f"({len(sigs)} distinct), worker started {self.worker_starts} times"
            + (f"; {self.built} compiled ones built and run with sanitizers" if self.built else "")
        ]
        for sig, n in sigs.most_common():
            ex = next(f for f in self.failures if f.signature() == sig)
            lines.append(f"  FAIL x{n}: {sig}: {ex.desc} -> {ex.saved}")
        return "\n".join(lines)

    def top_reasons(self, k: int = 40) -> str:
        return "\n".join(f"  {n:6d}  {r}" for r, n in self.reasons.most_common(k))


def _normalise(reason: str) -> str:
    return re.sub(r"-?\d+", "N", reason)[:90]


def corpus_models(corpus: Path = CORPUS) -> list[Path]:
    return sorted((corpus / "models").glob("*.tflite"))


def corpus_boards(corpus: Path = CORPUS) -> list[Path]:
    return sorted((corpus / "boards").glob("*.toml"))


class ModelCases:
    """Deterministic mutants of the seed models: case i depends only on (seed, i)."""

    def __init__(self, seeds: list[Path], seed: int) -> None:
        from .flatmap import build_map
        from .mutators import unpack

        self.seed = seed
        self.data = [p.read_bytes() for p in seeds]
        self.names = [p.name for p in seeds]
        self.maps = [build_map(d) for d in self.data]
        self.trees = [unpack(d) for d in self.data]

    def case(self, i: int) -> tuple[bytes, str, str]:
        data, desc = self._case(i)
        return data, desc, "case"

    def _case(self, i: int) -> tuple[bytes, str]:
        from .mutators import mutate_bytes, mutate_model, safe_map, splice

        rng = random.Random(f"{self.seed}:{i}")
        k = rng.randrange(len(self.data))
        name = self.names[k]
        r = rng.random()
        if r < 0.02:
            return self.data[k], f"{name}: unmodified"
        if r < 0.38:
            out, d = mutate_bytes(self.data[k], self.maps[k], rng)
        elif r < 0.85:
            out, d = mutate_model(self.trees[k], rng)
        elif r < 0.97:
            mid, d1 = mutate_model(self.trees[k], rng)
            fm = safe_map(mid)
            if fm is None:
                out, d = mid, d1
            else:
                out, d2 = mutate_bytes(mid, fm, rng)
                d = f"{d1} | {d2}"
        else:
            other = self.data[rng.randrange(len(self.data))]
            out, d = splice(self.data[k], other, rng)
        return out, f"{name}: {d}"


class BoardCases:
    """Deterministic mutants of the seed board files; the case file is named after the board
    (the reader wants ``name`` to match the file name), often after the mutated name."""

    def __init__(self, seeds: list[Path], seed: int) -> None:
        self.seed = seed
        self.texts = [p.read_text() for p in seeds]
        self.names = [p.name for p in seeds]

    def case(self, i: int) -> tuple[bytes, str, str]:
        from .mutators import mutate_toml

        rng = random.Random(f"{self.seed}:{i}")
        k = rng.randrange(len(self.texts))
        stem = Path(self.names[k]).stem
        if rng.random() < 0.03:
            return self.texts[k].encode(), f"{self.names[k]}: unmodified", stem
        out, d = mutate_toml(self.texts[k], rng)
        try:
            name = tomllib.loads(out.decode()).get("name")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            name = None
        # a file name is the user's own choice: no control characters or '/' (a name with
        # quotes, '$' or '*' is still a valid file name, and the reader must cope with it)
        if (
            isinstance(name, str)
            and name != stem
            and rng.random() < 0.7
            and 0 < len(name) < 200
            and not re.search(r"[/\x00-\x1f\x7f]", name)
            and name not in (".", "..")
        ):
            stem = name
        return out, f"{self.names[k]}: {d}", stem


def run_fuzz(
    seconds: float,
    seed: int = 0,
    *,
    target: str = "models",
    max_cases: int | None = None,
    timeout: float = 10.0,
    mem_mb: int = 3072,
    out_dir: Path = DEFAULT_OUT,
    corpus: Path = CORPUS,
    keep_per_signature: int = 3,
    build_rate: float = 0.0,
    log: Any = None,
) -> Stats:
    """Fuzz ``target`` ("models" or "boards") for ``seconds``; returns the statistics."""
    seeds = corpus_models(corpus) if target == "models" else corpus_boards(corpus)
    if not seeds:
        raise RuntimeError(f"empty {target} corpus in {corpus}")
    gen: ModelCases | BoardCases = (
        ModelCases(seeds, seed) if target == "models" else BoardCases(seeds, seed)
    )
    suffix = ".tflite" if target == "models" else ".toml"
    stats = Stats(target, seed)
    saved_per_sig: Counter = Counter()
    t0 = time.monotonic()
    last_log = t0
    with tempfile.TemporaryDirectory(prefix="tc_fuzz_") as wd:
        worker = Worker(mem_mb, Path(wd) / "worker.log")
        try:
            i = 0
            while time.monotonic() - t0 < seconds and (max_cases is None or i < max_cases):
                data, desc, stem = gen.case(i)
                case_dir = Path(wd) / "case"
                shutil.rmtree(case_dir, ignore_errors=True)
                case_dir.mkdir()
                case_path = case_dir / f"{stem}{suffix}"
                case_path.write_bytes(data)
                build = random.Random(f"build:{seed}:{i}").random() < build_rate
                req = {"target": target, "path": str(case_path), "build": build, "case": i}
                res = worker.run(req, timeout + (300 if build else 0))
                stats.cases += 1
                if res["status"] == "ok":
                    stats.ok += 1
                    stats.built += build
                elif res["status"] == "rejected":
                    stats.rejected += 1
                    stats.reasons[_normalise(res["reason"])] += 1
                else:
                    f = Failure(res["kind"], res.get("detail", ""), desc, i)
                    sig = f.signature()
                    if saved_per_sig[sig] < keep_per_signature:
                        f.saved = _save(out_dir, target, seed, f, data, suffix, stem)
                    saved_per_sig[sig] += 1
                    stats.failures.append(f)
                    if log:
                        log(f"case {i}: FAIL {sig}: {desc}")
                    if worker.proc is not None:  # a failed case may leave the worker damaged
                        worker.stop()
                i += 1
                if log and time.monotonic() - last_log > 60:
                    last_log = time.monotonic()
                    log(f"... {stats.cases} cases, {len(stats.failures)} failures")
        finally:
            worker.stop()
            stats.worker_starts = worker.starts
    stats.seconds = time.monotonic() - t0
    return stats


def _save(
    out_dir: Path, target: str, seed: int, f: Failure, data: bytes, suffix: str, stem: str
) -> Path:
    """Save a failing input; board files keep their (board) name in a folder of their own."""
    h = hashlib.sha1(data).hexdigest()[:10]
    if target == "boards":
        folder = out_dir / f"{target}-s{seed}-c{f.case}-{h}"
        folder.mkdir(parents=True, exist_ok=True)
        p = folder / f"{stem}{suffix}"
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        p = out_dir / f"{target}-s{seed}-c{f.case}-{h}{suffix}"
    p.write_bytes(data)
    p.with_suffix(".txt").write_text(
        f"target: {target}\nseed: {seed}\ncase: {f.case}\nmutation: {f.desc}\n"
        f"failure: {f.signature()}\n\n{f.detail}\n"
    )
    return p


def replay_cases(
    paths: list[Path], *, build: bool = True, timeout: float = 10.0, mem_mb: int = 3072
) -> list[tuple[Path, dict[str, Any]]]:
    """Run saved inputs (.tflite, or board .toml named after the board) through the worker;
    returns each path with its outcome (a dict whose "status" is ok, rejected or fail)."""
    out = []
    with tempfile.TemporaryDirectory(prefix="tc_replay_") as wd:
        worker = Worker(mem_mb, Path(wd) / "worker.log")
        try:
            for p in paths:
                target = "boards" if p.suffix == ".toml" else "models"
                b = build and target == "models"
                req = {"target": target, "path": str(p), "build": b, "case": 0}
                res = worker.run(req, timeout + (300 if b else 0))
                out.append((p, res))
                if res["status"] == "fail" and worker.proc is not None:
                    worker.stop()
        finally:
            worker.stop()
    return out


def replay(path: Path, mem_mb: int) -> int:
    """Run one saved case in this process and print the outcome (with the full traceback)."""
    _limit_memory(mem_mb)
    _guard_negative_ids()
    target = "boards" if path.suffix == ".toml" else "models"
    if target == "models":
        res = run_model_case(str(path), build=True)
    else:
        res = run_board_case(str(path))
    print(res.get("status"), res.get("kind", ""), res.get("reason", ""))
    if res.get("detail"):
        print(res["detail"])
    return 0 if res["status"] != "fail" else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget per target")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", choices=["models", "boards", "all"], default="models")
    ap.add_argument("--max-cases", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    ap.add_argument("--mem-mb", type=int, default=3072, help="address-space limit of the worker")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where failing inputs go")
    ap.add_argument(
        "--build-rate",
        type=float,
        default=0.0,
        help="fraction of compiled cases built and run with sanitizers",
    )
    ap.add_argument("--reasons", action="store_true", help="print the commonest refusals")
    ap.add_argument("--replay", type=Path, help="run one saved case in-process")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker_main(a.mem_mb)
        return 0
    if a.replay:
        return replay(a.replay, a.mem_mb)
    targets = ["models", "boards"] if a.target == "all" else [a.target]
    failed = 0
    for t in targets:
        st = run_fuzz(
            a.seconds,
            a.seed,
            target=t,
            max_cases=a.max_cases,
            timeout=a.timeout,
            mem_mb=a.mem_mb,
            out_dir=a.out,
            build_rate=a.build_rate,
            log=lambda s: print(s, flush=True),
        )
        print(st.summary(), flush=True)
        if a.reasons:
            print("commonest refusals:\n" + st.top_reasons())
        failed += len(st.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
