"""Fuzz the model reader (and everything after it) and the board-file reader.

    python -m tests.fuzz.fuzz_models --seconds 60 --seed 1 [--target models|onnx|boards|all]
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

This module is the command line and the harness's public names. The parts: cases.py (the seed
corpus and case i of a seed), worker.py (the worker process and its protocol), runners.py (one
model or board case through the compiler), checks.py (what counts as a failure), verdicts.py
(mutants certainly invalid, which must not compile),
sanitizer_build.py (the ASan/UBSan build and run), campaign.py (a run: statistics, saved
failures, replays).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .campaign import DEFAULT_OUT, Failure, Stats, replay_cases, run_fuzz
from .cases import (
    CORPUS,
    BoardCases,
    ModelCases,
    OnnxCases,
    corpus_boards,
    corpus_models,
    corpus_onnx,
)
from .checks import check_message as _check_message  # the harness test uses it
from .runners import run_board_case, run_model_case
from .sanitizer_build import build_and_run
from .worker import Worker, guard_negative_ids, limit_memory, worker_main

__all__ = [
    "CORPUS",
    "DEFAULT_OUT",
    "BoardCases",
    "Failure",
    "ModelCases",
    "OnnxCases",
    "Stats",
    "Worker",
    "_check_message",
    "build_and_run",
    "corpus_boards",
    "corpus_models",
    "corpus_onnx",
    "main",
    "replay",
    "replay_cases",
    "run_board_case",
    "run_fuzz",
    "run_model_case",
]


def replay(path: Path, mem_mb: int) -> int:
    """Run one saved case in this process and print the outcome (with the full traceback)."""
    limit_memory(mem_mb)
    guard_negative_ids()
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
    ap.add_argument(
        "--target",
        choices=["models", "onnx", "boards", "all"],
        default="models",
        help="models: .tflite seeds; onnx: .onnx seeds; all: the three in turn",
    )
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
    targets = ["models", "onnx", "boards"] if a.target == "all" else [a.target]
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
