"""A fuzzing campaign: mutants through the worker for a time or case budget, with statistics,
failures grouped by signature and saved for replay; and saved inputs run again."""

from __future__ import annotations

import hashlib
import random
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cases import (
    CORPUS,
    BoardCases,
    ModelCases,
    OnnxCases,
    corpus_boards,
    corpus_models,
    corpus_onnx,
)
from .worker import Worker

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "build" / "fuzz-failures"
# target -> (seed lister, case generator, suffix of a case file)
_TARGETS: dict[str, tuple[Any, Any, str]] = {
    "models": (corpus_models, ModelCases, ".tflite"),
    "onnx": (corpus_onnx, OnnxCases, ".onnx"),
    "boards": (corpus_boards, BoardCases, ".toml"),
}


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
    """Fuzz ``target`` ("models", "onnx" or "boards") for ``seconds``; returns the
    statistics."""
    lister, cases, suffix = _TARGETS[target]
    seeds = lister(corpus)
    if not seeds:
        raise RuntimeError(f"empty {target} corpus in {corpus}")
    gen: ModelCases | OnnxCases | BoardCases = cases(seeds, seed)
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
    """Run saved inputs (.tflite, .onnx, or board .toml named after the board) through the worker;
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
