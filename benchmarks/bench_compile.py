"""Compile-time and memory benchmark on the whole models (4 MLPerf Tiny networks, digits and
the 5 models of tests/models/real).

Per model: plan and code generation time (median of 3 runs), the arena our plan places, the
live-bytes lower bound of our schedule, the naive arena (model order, no in-place, no sharing:
``naive_arena``), weight flash (weights, biases, requantization tables), and TensorFlow Lite
Micro's arena for the same model (see ``tflm_arena.py``):

- ``tflm act``: TFLM's non-persistent arena section (activations and scratch), which is what
  our arena holds: the like-for-like comparison;
- ``tflm min``: the smallest ``arena_size`` TFLM accepts (bisection): what an application
  has to give TFLM. It also holds TFLM's persistent interpreter data, measured here on a 64-bit
  host build, so it is larger than on a 32-bit Cortex-M.

Run from the repository root: ``python benchmarks/bench_compile.py [--no-bisect] [MODEL ...]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = [
    ROOT / "tests" / "models" / f"{m}.tflite"
    for m in ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder")
] + [ROOT / "examples" / "digits.tflite"]
# models of the kinds users bring (tests/modelgen/real_models.py)
MODELS += [
    ROOT / "tests" / "models" / "real" / f"{m}.tflite"
    for m in ("nchw_cnn", "mcunet_se", "tiny_det", "kws_svdf", "lstm_classifier")
]


def _imports():
    """Make ``tinycompile`` and ``benchmarks`` importable when run as a script from anywhere."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks import tflm_arena
    from tinycompile import api

    return api, tflm_arena


def naive_arena(p) -> int:
    """The arena of plan ``p``'s model with none of the planner's tricks
    (``planner.naive_arena``, from the plan's prepared ops)."""
    from tinycompile.planner import naive_arena as naive

    return naive(p.model_graph, p.model_prepared)


@dataclass
class Row:
    model: str
    plan_s: float
    codegen_s: float
    arena: int
    lower_bound: int
    naive: int
    flash: int
    tflm_act: int
    tflm_total: int
    tflm_min: int | None
    rows_arena: int  # the smallest arena with the first layers streamed by rows (--stream min)
    rows_layers: int  # how many layers that streams (0: streaming does not help)

    @property
    def total_s(self) -> float:
        return self.plan_s + self.codegen_s


def bench(model: Path, *, repeats: int = 3, bisect: bool = True) -> Row:
    """Time plan and generate (median of ``repeats``) and collect the memory figures."""
    api, tflm_arena = _imports()
    plan_t, gen_t = [], []
    p = None
    with tempfile.TemporaryDirectory(prefix="tc_bench_") as td:
        for i in range(repeats):
            t0 = time.perf_counter()
            p = api.plan(model)
            t1 = time.perf_counter()
            api.generate(p, Path(td) / f"project{i}")
            t2 = time.perf_counter()
            plan_t.append(t1 - t0)
            gen_t.append(t2 - t1)
    assert p is not None
    from tinycompile.planner.streams import streamed_ops

    m = api.plan(model, stream="min")
    a = tflm_arena.measure(model, bisect=bisect)
    return Row(
        model=model.stem,
        plan_s=statistics.median(plan_t),
        codegen_s=statistics.median(gen_t),
        arena=int(p.arena_bytes),
        lower_bound=int(p.peak_bytes),
        naive=naive_arena(p),
        flash=int(p.flash_bytes),
        tflm_act=a.head,
        tflm_total=a.total,
        tflm_min=a.minimal,
        rows_arena=int(m.arena_bytes),
        rows_layers=len(streamed_ops(m.graph)),
    )


def _ratio(a: int, b: int | None) -> str:
    return f"{a / b:.2f}" if b else "-"


def _rows(r: Row) -> str:
    if not r.rows_layers or r.rows_arena >= r.arena:
        return "-"
    return f"{r.rows_arena} ({r.rows_layers})"


def format_table(rows: list[Row], repeats: int = 3) -> str:
    """A plain-text table, one line per model."""
    head = (
        f"{'model':16s} {'plan s':>7s} {'gen s':>7s} {'total s':>7s} {'arena':>8s} "
        f"{'lower bd':>8s} {'naive':>8s} {'flash':>8s} {'tflm act':>8s} {'tflm min':>8s} "
        f"{'/naive':>6s} {'/act':>5s} {'/min':>5s} {'by rows':>12s} {'/min':>5s}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.model:16s} {r.plan_s:7.3f} {r.codegen_s:7.3f} {r.total_s:7.3f} {r.arena:8d} "
            f"{r.lower_bound:8d} {r.naive:8d} {r.flash:8d} {r.tflm_act:8d} "
            f"{r.tflm_min if r.tflm_min is not None else r.tflm_total:8d} "
            f"{_ratio(r.arena, r.naive):>6s} {_ratio(r.arena, r.tflm_act):>5s} "
            f"{_ratio(r.arena, r.tflm_min or r.tflm_total):>5s} "
            f"{_rows(r):>12s} {_ratio(min(r.rows_arena, r.arena), r.tflm_min or r.tflm_total):>5s}"
        )
    lines += [
        f"times: seconds, median of {repeats} runs (total = plan + gen)",
        "arena: our placed arena; lower bd: largest sum of live bytes in our schedule",
        "naive: model order, every tensor its own buffer (no in-place, no sharing), first fit",
        "flash: weights + biases + requantization tables",
        "tflm act: TFLM's non-persistent arena (activations + scratch): like for like",
        "tflm min: smallest arena_size TFLM accepts, 64-bit host build "
        "(recorded total with --no-bisect)",
        "/naive, /act, /min: our arena / the naive one, / TFLM's",
        "by rows: the smallest arena with the first N layers run one output row at a time",
        "  (`--stream min`: time only, no MACs added; '-': streaming does not shrink it), /min",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path, help="default: the 9 whole models")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-bisect", action="store_true", help="skip TFLM arena bisection")
    args = ap.parse_args(argv)
    rows = [
        bench(m, repeats=args.repeats, bisect=not args.no_bisect) for m in args.models or MODELS
    ]
    print(format_table(rows, args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
