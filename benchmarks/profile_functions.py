"""Where the instructions go, per function: one inference of a model's emulator firmware in QEMU,
every guest instruction attributed to the function it belongs to.

QEMU runs the build with ``-singlestep -d exec,nochain`` (one translation block per instruction,
each execution logged with its symbol); the log goes through a named pipe and is counted as it
streams, so nothing large is written. The counts are exact and deterministic (QEMU executes the
same instructions every run); they include start-up, the input/output through semihosting and
the timer reads of a profile build, which the table shows as their own functions. Slow: about
a million instructions per second, so DS-CNN on the M0+ (19 M) takes half a minute.

Prints a table: function, instructions, share of the run, instructions per MAC of the model.
``bench_emulator.py`` gives the per-layer view; this one says which loop inside a layer to work
on (the kernels' own helper functions, not inlined at -O2, are their own rows).

Run from the repository root: ``python benchmarks/profile_functions.py MODEL [--board B]
[--top N] [--seed S] [--stream auto|off|min] [--speed-sram BYTES|max] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_emulator import resolve_model  # noqa: E402
from tinycompile import api  # noqa: E402
from tinycompile.build import build_firmware  # noqa: E402
from tinycompile.cli.args import speed_bytes  # noqa: E402
from tinycompile.errors import ToolchainError  # noqa: E402
from tinycompile.estimate.trace import exec_trace  # noqa: E402
from tinycompile.run.inputs import make_inputs  # noqa: E402
from tinycompile.run.ioformat import pack_inputs  # noqa: E402


def _count(fifo: Path, counts: Counter[str]) -> None:
    """Count the exec log's lines by their last field (the symbol; '?' without one)."""
    with open(fifo, "rb") as f:
        for line in f:
            if line.startswith(b"Trace"):
                tail = line.rsplit(b"]", 1)[-1].strip()
                counts[tail.decode(errors="replace") or "?"] += 1


def profile(
    model: Path,
    board: str,
    *,
    seed: int = 0,
    stream: str = "auto",
    speed: int | None = 0,
    timeout_s: float = 1800,
) -> tuple[Counter[str], int]:
    """Instructions per function of one inference (and start-up and I/O) on ``board``'s
    emulator build of ``model``; also the model's MACs."""
    p = api.plan(model, board=board, stream=stream, speed=speed)
    macs = sum(la.macs for la in p.layers)
    with tempfile.TemporaryDirectory(prefix="tc_prof_") as td:
        wd = Path(td)
        fw = build_firmware(
            api.generate(p, wd / "project"), board, variant="emulator", onnx_variant=p.onnx_variant
        )
        (wd / "tc_in.bin").write_bytes(pack_inputs(p.graph, make_inputs(p.graph, 1, seed)))
        counts: Counter[str] = Counter()
        try:
            exec_trace(fw, wd, lambda fifo: _count(fifo, counts), timeout_s)
        except ToolchainError as e:
            raise SystemExit(str(e)) from None
    return counts, macs


def format_table(counts: Counter[str], macs: int, top: int) -> str:
    total = sum(counts.values())
    lines = [
        f"{'function':<40} {'instructions':>13} {'share':>7} {'ins/MAC':>8}",
        "-" * 71,
    ]
    for name, n in counts.most_common(top):
        per = f"{n / macs:8.3f}" if macs else f"{'-':>8}"
        lines.append(f"{name[:40]:<40} {n:>13,} {100 * n / total:6.1f}% {per}")
    rest = total - sum(n for _, n in counts.most_common(top))
    if rest:
        lines.append(f"{'(the rest)':<40} {rest:>13,} {100 * rest / total:6.1f}%")
    lines.append(f"{'total (start-up, I/O, one inference)':<40} {total:>13,}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a .tflite/.onnx path or a test model's name")
    ap.add_argument("--board", default="stm32f746", help="board whose emulator build runs")
    ap.add_argument("--top", type=int, default=20, help="rows (default 20)")
    ap.add_argument("--seed", type=int, default=0, help="the random input's seed")
    ap.add_argument("--stream", default="auto", help="the planner's streaming mode")
    ap.add_argument(
        "--speed-sram",
        type=speed_bytes,
        default=0,
        help="arena bytes the planner may spend on speed (as `plan --speed-sram`)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    model = resolve_model(a.model)
    counts, macs = profile(model, a.board, seed=a.seed, stream=a.stream, speed=a.speed_sram)
    if a.json:
        d = {"model": model.name, "board": a.board, "macs": macs, "functions": dict(counts)}
        print(json.dumps(d, indent=1))
    else:
        print(f"{model.name} on {a.board} (emulator build, one inference): {macs:,} MACs")
        print(format_table(counts, macs, a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
