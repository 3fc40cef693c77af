"""Deterministic speed benchmark: instructions per inference in QEMU, per model and core.

For every whole test model and each core (Cortex-M7: stm32f746, Cortex-M4: stm32f407,
Cortex-M0+: samd21, or rp2040 when a model does not fit the samd21: same flags and kernels; on
request M33: qemu-m33, M55: qemu-m55), builds the emulator firmware with the kernels' portable
C paths only (``-DTC_PORTABLE``) and with the fast paths (the default), runs ``-n`` inputs of
each under ``-icount`` and compares every output byte with TFLM. Prints per model and core:
MACs, instructions per inference of both builds (exact guest counts, not cycles), MACs per
instruction, the TFLM + CMSIS-NN figure of issue 11 (tflm_reference.py; ``--baseline B.json``:
TFLM + CMSIS-NN built from source, docs/baseline.md, where given) with our ratio and whether it
meets the target (<= 0.67x), the fast firmware's flash and SRAM, whether every run was
bit-exact; then the five slowest layers of the fast build; then the ONNX / TFLite twins
(bench_twins.py). ``--json``: one JSON object.

Run from the repository root: ``python benchmarks/bench_emulator.py [MODEL ...] [--cores M7,M4]
[-n N] [--stream auto|off|min] [--speed-sram BYTES|max] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_twins import TWINS, format_pairs, pairs  # noqa: E402
from benchmarks.tflm_reference import METHOD, REFERENCE, SOURCE, TARGET  # noqa: E402
from tinycompile import api  # noqa: E402
from tinycompile.cli.args import speed_bytes  # noqa: E402
from tinycompile.errors import CompileError, DoesNotFit, RunError  # noqa: E402
from tinycompile.pipeline import Plan  # noqa: E402

MODELS = [
    ROOT / "tests" / "models" / f"{m}.tflite"
    for m in ("kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder")
] + TWINS
# --all adds the bundled example and the models of the kinds users bring (no reference figures)
EXTRA = [ROOT / "examples" / "digits.tflite"] + [
    ROOT / "tests" / "models" / "real" / f"{m}.tflite"
    for m in ("nchw_cnn", "mcunet_se", "tiny_det", "kws_svdf", "lstm_classifier")
]
# core -> boards to try in order (the first that the model fits); all of a core's boards share
# its compiler flags, kernels and QEMU machine, so their instruction counts are the same.
CORES: dict[str, tuple[str, ...]] = {
    "M7": ("stm32f746",),
    "M4": ("stm32f407",),
    "M0+": ("samd21", "rp2040"),
    "M33": ("qemu-m33",),  # QEMU mps2-an505 (issue 25): not in the default --cores
    "M55": ("qemu-m55",),  # QEMU mps3-an547, Helium (issue 25): not in the default --cores
}
DEFAULT_CORES = ("M7", "M4", "M0+")
SLOWEST = 5
BASELINE: dict[tuple[str, str], dict] = {}  # (model stem, core) -> --baseline's entry


@dataclass
class Build:
    """One build (portable or fast) of one model on one board, run and compared with TFLM."""

    instructions: int = 0
    instructions_min: int = 0
    instructions_max: int = 0
    exact: bool = False
    mismatching_bytes: int = 0
    inputs: int = 0
    flash_used: int = 0
    sram_used: int = 0
    kernel_code: int = 0  # bytes of kernel code linked (the size report's breakdown)
    arena: int = 0  # the plan's arena (bytes)
    layers: list[dict] = field(default_factory=list)
    error: str = ""  # the build or run failed (not a verdict on exactness)


@dataclass
class CoreResult:
    """One model on one core: both builds, the board that ran them and the reference figure."""

    model: str
    core: str
    board: str  # "" when no board of the core fits the model
    macs: int
    portable: Build | None = None
    fast: Build | None = None
    skipped: list[str] = field(default_factory=list)  # boards the model did not fit, why
    reference: float | None = None  # TFLM + CMSIS-NN instructions (issue 11), when known

    @property
    def ratio(self) -> float | None:
        """Fast build's instructions / TFLM + CMSIS-NN's."""
        if self.reference is None or self.fast is None or self.fast.error:
            return None
        return self.fast.instructions / self.reference

    @property
    def meets(self) -> bool | None:
        r = self.ratio
        return None if r is None else r <= TARGET

    @property
    def exact(self) -> bool:
        """Every run that completed was bit-exact with TFLM (a failed build is reported apart)."""
        return all(b.exact for b in (self.portable, self.fast) if b is not None and not b.error)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(ratio=self.ratio, meets_target=self.meets, exact=self.exact)
        return d


def _shape(s: tuple[int, ...] | list[int]) -> str:
    dims = list(s)[1:] if len(s) > 1 and s[0] == 1 else list(s)
    return "x".join(map(str, dims)) or "scalar"


def layer_shapes(p: Plan) -> list[str]:
    """Per layer of the schedule: 'input -> output' shapes, with the kernel and stride of a
    convolution ('25x5x64 -> 25x5x64 k3x3')."""
    g = p.graph
    out = []
    for i in p.order:
        op = p.lowering.ops[i].op
        ins = [t for t in op.inputs if t >= 0]
        text = f"{_shape(g.t(ins[0]).shape)} -> " if ins else ""
        text += _shape(g.t(op.outputs[0]).shape)
        if op.kind in ("CONV_2D", "DEPTHWISE_CONV_2D", "ONNX_CONV") and len(ins) > 1:
            k = g.t(ins[1]).shape
            text += f" k{k[1]}x{k[2]}"
            stride = tuple((op.attrs or {}).get("stride", (1, 1)))
            if stride != (1, 1):
                text += f" s{stride[0]}" if stride[0] == stride[1] else f" s{stride[0]}x{stride[1]}"
        out.append(text)
    return out


def run_build(
    model: Path,
    board: str,
    n: int,
    *,
    portable: bool,
    shapes: list[str],
    stream: str = "auto",
    speed: int | None = 0,
) -> Build:
    """Build, run ``n`` inputs in QEMU and compare with TFLM (raises DoesNotFit)."""
    try:
        r = api.compare(
            model,
            board=board,
            n=n,
            layers=False,
            portable=portable,
            stream=stream,
            speed=speed,
        )
    except DoesNotFit:
        raise
    except (CompileError, RunError) as e:
        return Build(error=str(e).splitlines()[0])
    prof = r.profile or {}
    fw = r.result.firmware if r.result is not None else None
    layers = [dict(la, shape=shapes[la["layer"]]) for la in prof.get("layers", [])]
    return Build(
        instructions=int(prof.get("instructions", 0)),
        instructions_min=int(prof.get("instructions_min", 0)),
        instructions_max=int(prof.get("instructions_max", 0)),
        exact=r.ok,
        mismatching_bytes=r.mismatches,
        inputs=r.samples,
        flash_used=fw.size.flash_used if fw else 0,
        sram_used=fw.size.sram_used if fw else 0,
        kernel_code=sum(fw.size.kernel_code.values()) if fw else 0,
        layers=layers,
    )


def bench_model(
    model: Path, cores: list[str], n: int, stream: str = "auto", speed: int | None = 0
) -> list[CoreResult]:
    """Both builds of ``model`` on each core, on the first of the core's boards it fits
    (``stream``: the planner's streaming mode, "auto" streams where a board needs it;
    ``speed``: arena bytes the planner may spend on speed, `--speed-sram`)."""
    macs = sum(la.macs for la in api.plan(model).layers)
    ref = REFERENCE.get(model.stem)
    name = model.name if model.suffix == ".onnx" else model.stem
    results = []
    for core in cores:
        known = ref.instructions.get(core) if ref else None
        if (model.stem, core) in BASELINE:  # measured from source beats issue 11's figure
            known = float(BASELINE[model.stem, core]["instructions"])
        res = CoreResult(name, core, "", macs, reference=known)
        for board in CORES[core]:
            try:
                p = api.plan(model, board=board, stream=stream, speed=speed)
                shapes = layer_shapes(p)
                kw = {"shapes": shapes, "stream": stream, "speed": speed}
                fast = run_build(model, board, n, portable=False, **kw)
                portable = run_build(model, board, n, portable=True, **kw)
            except DoesNotFit as e:
                res.skipped.append(e.reason.split(";")[0])
                continue
            res.board, res.fast, res.portable = board, fast, portable
            fast.arena = portable.arena = p.arena_bytes
            break
        results.append(res)
    return results


def _m(x: float) -> str:
    """Millions, to the issue's three significant figures (7.60 M, 0.583 M)."""
    return f"{x / 1e6:#.3g} M"


def _ins(b: Build) -> str:
    return f"{b.instructions:>12,}" if not b.error else f"{'FAILED':>12}"


def _mpi(macs: int, b: Build) -> str:
    ok = not b.error and b.instructions
    return f"{macs / b.instructions:>12.3f}" if ok else f"{'-':>12}"


def format_table(results: list[CoreResult], n: int) -> str:
    """The plain-text report: one block per model (cores, then the slowest layers)."""
    head = (
        f"{'core':<4} {'board':<10} {'portable':>12} {'fast':>12} {'fast/port':>9} "
        f"{'MAC/ins port':>12} {'MAC/ins fast':>12} {'TFLM+CMSIS':>11} {'fast/TFLM':>9} "
        f"{'<=0.67x':>7} {'flash':>8} {'SRAM':>7} {'kernels':>7} {'+fast':>6} {'exact':>5}"
    )
    lines = [
        "Instructions per inference in QEMU (-icount: exact guest instruction counts, not cycles).",
        "portable: every kernel on its portable C path (-DTC_PORTABLE); fast: the default "
        "build (DSP / M0+ paths).",
        f"TFLM+CMSIS: {METHOD};",
        f"  {SOURCE}. MAC/ins: MACs per instruction. flash, SRAM: the fast build's linked use "
        "(bytes);",
        "  kernels: its kernel code (bytes, the size report's breakdown), +fast: what the fast "
        "paths add to the portable build's.",
    ]
    notes: list[str] = []
    by_model: dict[str, list[CoreResult]] = {}
    for r in results:
        by_model.setdefault(r.model, []).append(r)
    for model, rows in by_model.items():
        ref = REFERENCE.get(model)
        title = f"{model}: {rows[0].macs:,} MACs"
        if ref is not None:
            title += f" ({ref.name}; issue 11: {_m(ref.macs)} MACs)"
        lines += ["", title, head, "-" * len(head)]
        for r in rows:
            if r.fast is None or r.portable is None:
                lines.append(f"{r.core:<4} {'-':<10} " + "; ".join(r.skipped))
                continue
            f, pt = r.fast, r.portable
            board = r.board + ("*" if r.skipped else "")
            if r.skipped:
                notes.append(
                    f"* {model} on {r.core}: " + "; ".join(r.skipped) + f"; run on {r.board} "
                    "(same core, compiler flags, kernels and QEMU machine)"
                )

            both = not f.error and not pt.error
            spd = f"{f.instructions / pt.instructions:>9.2f}" if both else f"{'-':>9}"
            refs = f"{_m(r.reference):>11}" if r.reference is not None else f"{'-':>11}"
            ratio = f"{r.ratio:>9.2f}" if r.ratio is not None else f"{'-':>9}"
            meets = {True: "yes", False: "no", None: "-"}[r.meets]
            failed = f.error or pt.error
            exact = "FAIL" if failed else "yes" if r.exact else "NO"
            for what, b in (("portable", pt), ("fast", f)):
                if b.error:
                    notes.append(f"{model} on {r.core} ({r.board}), {what} build FAILED: {b.error}")
                elif not b.exact:
                    notes.append(
                        f"{model} on {r.core} ({r.board}), {what} build NOT bit-exact: "
                        f"{b.mismatching_bytes} mismatching bytes over {b.inputs} inputs"
                    )
            size = f"{f.flash_used:>8,} {f.sram_used:>7,}" if not f.error else f"{'':>16}"
            code = f"{f.kernel_code:>7,} {f.kernel_code - pt.kernel_code:>+6,}"
            size += f" {code}" if both else f" {'':>14}"
            lines.append(
                f"{r.core:<4} {board:<10} {_ins(pt)} {_ins(f)} {spd} {_mpi(r.macs, pt)} "
                f"{_mpi(r.macs, f)} {refs} {ratio} {meets:>7} {size} {exact:>5}"
            )
        lines += _slowest(rows)
    ran = [b for r in results for b in (r.portable, r.fast) if b is not None and not b.error]
    bad = [b for b in ran if not b.exact]
    lines.append("")
    if ran and not bad:
        lines.append(
            f"bit-exact with TFLM: all {len(ran)} runs ({n} input{'s' if n != 1 else ''} each, "
            "every output byte "
            "compared)"
        )
    elif ran:
        lines.append(f"NOT bit-exact with TFLM: {len(bad)} of {len(ran)} runs (see below)")
    spread = max(
        ((b.instructions_max - b.instructions_min) / b.instructions for b in ran), default=0
    )
    if spread:
        lines.append(
            f"instructions vary with the input by at most {100 * spread:.3f}% (first input shown;"
            " --json gives the range)"
        )
    lines += notes + format_pairs(pairs(results))
    return "\n".join(lines)


def _slowest(rows: list[CoreResult]) -> list[str]:
    """The five slowest layers of each core's fast build."""
    out = []
    head = (
        f"  {'core':<4} {'layer':>5} {'op':<18} {'shape':<34} {'instructions':>12} "
        f"{'ins/MAC':>8} {'share':>6}"
    )
    for r in rows:
        if r.fast is None or r.fast.error or not r.fast.layers:
            continue
        if not out:
            out += [f"  {SLOWEST} slowest layers, fast build:", head]
        top = sorted(r.fast.layers, key=lambda la: -la["instructions"])[:SLOWEST]
        for la in top:
            ipm = f"{la['instructions'] / la['macs']:.2f}" if la["macs"] else "-"
            share = 100.0 * la["instructions"] / max(r.fast.instructions, 1)
            out.append(
                f"  {r.core:<4} {la['layer']:>5} {la['op']:<18} {la['shape']:<34} "
                f"{la['instructions']:>12,} {ipm:>8} {share:>5.1f}%"
            )
    return out


def as_json(results: list[CoreResult], n: int) -> dict:
    """The machine-readable report."""
    return {
        "unit": "guest instructions per inference in QEMU -icount (first input)",
        "inputs": n,
        "reference": {"source": SOURCE, "method": METHOD, "target_ratio": TARGET},
        "results": [r.as_dict() for r in results],
        "twins": pairs(results),
    }


def resolve_model(arg: str) -> Path:
    """A model path, or the name of a test model (tests/models, tests/models/real, examples)."""
    p = Path(arg)
    if p.suffix in (".tflite", ".onnx") or p.exists():
        return p
    models = ROOT / "tests" / "models"
    for d in (models, models / "real", models / "onnx", ROOT / "examples"):
        if (d / f"{arg}.tflite").is_file():
            return d / f"{arg}.tflite"
    raise SystemExit(f"no model {arg!r} (a .tflite / .onnx path or a test model's name)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", help="paths or test model names (default: the 4 whole)")
    ap.add_argument(
        "--cores", default=",".join(DEFAULT_CORES), help=f"comma-separated, of {', '.join(CORES)}"
    )
    ap.add_argument("-n", type=int, default=3, help="inputs per run (default 3)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--all", action="store_true", help="also digits and tests/models/real")
    ap.add_argument("--stream", default="auto", help="streaming mode: auto (default), off, min")
    ap.add_argument("--baseline", type=Path, nargs="*", default=[], help="TFLM + CMSIS-NN JSON")
    ap.add_argument(
        "--speed-sram",
        type=speed_bytes,
        default=0,
        metavar="BYTES|max",
        help="arena bytes the planner may spend on column buffers for speed (default 0)",
    )
    a = ap.parse_args(argv)
    cores = [c.strip() for c in a.cores.split(",") if c.strip()]
    bad = [c for c in cores if c not in CORES]
    if bad:
        ap.error(f"unknown core {bad[0]!r} (of {', '.join(CORES)})")
    if a.n < 1:
        ap.error("-n must be at least 1")
    from benchmarks.sweep_layers import load_baseline  # (it imports CORES from here)

    BASELINE.update(load_baseline(a.baseline))  # built here: docs/baseline.md
    models = [resolve_model(m) for m in a.models] or MODELS
    if a.all:
        models += [m for m in EXTRA if m not in models]
    results = [r for m in models for r in bench_model(m, cores, a.n, a.stream, a.speed_sram)]
    if a.json:
        print(json.dumps(as_json(results, a.n), indent=1))
    else:
        print(format_table(results, a.n))
    failed = any(b is not None and b.error for r in results for b in (r.portable, r.fast))
    return 1 if failed or not all(r.exact for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
