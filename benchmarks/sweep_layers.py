"""Layer-shape sweep: instructions of single-layer models per core in QEMU, against a baseline.

For every model of ``--models DIR`` (made by sweep_models.py; its manifest.json gives each one's
class, op and MACs) and every core (the boards of bench_emulator.CORES: M7 stm32f746, M4
stm32f407, M0+ samd21, else rp2040), builds our emulator firmware, runs ``-n`` inputs, compares
every output byte with TFLM (api.compare) and records the instructions of the whole inference
and of the layer, and the planned arena. Baseline figures (TFLM + CMSIS-NN built outside the
repository: docs/baseline.md) come from ``--baseline`` JSON files, lists of {"model", "core":
m7|m4|m0, "kernels": cmsis|ref, "instructions", "arena", "outputs_match_host", "error"} matched
by model file stem: CMSIS-NN on the M7/M4, the faster of cmsis/ref on the M0+.

Prints one row per model and core, worst ratio (ours / baseline instructions per Invoke) first
(without a baseline: most instructions per MAC first), then per class and core the worst and
median ratio and instructions per MAC, and how many rows exceed the targets (0.67 on M7/M4, 0.8
on M0+) and 1.0. Results are cached per model, core and compiler sources (``--cache``), so a
rerun only runs what changed.

Run from the repository root: ``python benchmarks/sweep_layers.py --models DIR [--cores M7,M4,M0+]
[--baseline base.json ...] [--json out.json] [-j 2] [-n 2]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_emulator import CORES, DEFAULT_CORES  # noqa: E402

TARGETS = {"M7": 0.67, "M4": 0.67, "M0+": 0.8}
BASE_CORE = {"m7": "M7", "m4": "M4", "m0": "M0+", "m33": "M33", "m55": "M55"}
SOURCES = ("tinycompile", "firmware", "templates", "boards")  # what the cache key covers


@dataclass
class Row:
    """One model on one core: our run and the baseline's figures."""

    model: str
    cls: str
    op: str
    core: str
    macs: int
    board: str = ""
    instructions: int = 0  # whole inference (first input)
    layer_instructions: int = 0  # the model's layer (its op's per-layer figure)
    arena: int = 0  # our planned arena (bytes)
    exact: bool = False
    mismatches: int = 0
    inputs: int = 0
    error: str = ""  # refused, failed build or run, fits no board
    seconds: float = 0.0
    base_instructions: int | None = None
    base_arena: int | None = None
    base_kernels: str = ""
    base_match: bool | None = None  # the baseline's outputs matched TFLM on the host

    @property
    def ratio(self) -> float | None:
        if self.error or not self.instructions or not self.base_instructions:
            return None
        return self.instructions / self.base_instructions

    @property
    def per_mac(self) -> float | None:
        """Layer instructions per MAC (pooling, ADD, MUL: per window or output element)."""
        if self.error or not self.macs or not self.layer_instructions:
            return None
        return self.layer_instructions / self.macs

    def as_dict(self) -> dict:
        return asdict(self) | {"ratio": self.ratio, "instructions_per_mac": self.per_mac}


def run_one(path: str, meta: dict, core: str, n: int) -> Row:
    """Build, run and compare one model on the first board of ``core`` it fits."""
    from tinycompile import api
    from tinycompile.errors import CompileError, DoesNotFit

    t0 = time.monotonic()
    row = Row(Path(path).stem, meta.get("class", "?"), meta.get("op", "?"), core, 0)
    skipped = []
    for board in CORES[core]:
        try:
            p = api.plan(path, board=board)
            row.macs = int(meta.get("macs") or sum(la.macs for la in p.layers))
            r = api.compare(path, board=board, n=n, layers=False)
        except DoesNotFit as e:
            skipped.append(f"{board}: {e.reason.split(';')[0]}")
            continue
        except CompileError as e:
            row.board, row.error = board, f"{type(e).__name__}: {str(e).splitlines()[0]}"
            break
        except Exception as e:  # a crash in the compiler is a finding too: keep sweeping
            row.board, row.error = board, f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
            break
        prof = r.profile or {}
        layers = prof.get("layers", [])
        mine = [la for la in layers if la["op"] == row.op] or layers
        row.board, row.arena = board, p.arena_bytes
        row.instructions = int(prof.get("instructions", 0))
        row.layer_instructions = sum(int(la["instructions"]) for la in mine)
        row.exact, row.mismatches, row.inputs = r.ok, r.mismatches, r.samples
        break
    else:
        row.error = "fits no board: " + "; ".join(skipped)
    row.seconds = round(time.monotonic() - t0, 2)
    return row


def load_baseline(paths: list[Path]) -> dict[tuple[str, str], dict]:
    """(model stem, core) -> the baseline entry used: CMSIS-NN on M7/M4, the faster of cmsis
    and ref on M0+; entries with an error or no instructions are left out."""
    best: dict[tuple[str, str], dict] = {}
    for p in paths:
        for e in json.loads(Path(p).read_text()):
            core = BASE_CORE.get(str(e.get("core", "")).lower())
            if core is None or e.get("error") or not e.get("instructions"):
                continue
            if core != "M0+" and e.get("kernels") != "cmsis":
                continue
            key = (Path(e["model"]).stem, core)
            old = best.get(key)
            if core == "M0+" and old is not None and old["instructions"] <= e["instructions"]:
                continue
            best[key] = e
    return best


def attach_baseline(rows: list[Row], base: dict[tuple[str, str], dict]) -> None:
    for r in rows:
        e = base.get((r.model, r.core))
        if e is not None:
            r.base_instructions, r.base_arena = int(e["instructions"]), e.get("arena")
            r.base_kernels, r.base_match = e.get("kernels", ""), e.get("outputs_match_host")


def sort_rows(rows: list[Row]) -> list[Row]:
    """Worst ratio first; rows without one after, most instructions per MAC first."""
    return sorted(
        rows,
        key=lambda r: (
            r.ratio is None,
            -(r.ratio or 0.0),
            r.per_mac is None,
            -(r.per_mac or 0.0),
            r.model,
            r.core,
        ),
    )


def summarize(rows: list[Row]) -> dict:
    """Per class and core: rows, worst and median ratio and instructions per MAC; per core:
    rows with a ratio, how many exceed the target and 1.0."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.cls, r.core), []).append(r)
    classes = []
    for (cls, core), rs in groups.items():
        ratios = [r.ratio for r in rs if r.ratio is not None]
        ipm = [r.per_mac for r in rs if r.per_mac is not None]
        classes.append(
            {
                "class": cls,
                "core": core,
                "rows": len(rs),
                "worst_ratio": max(ratios, default=None),
                "median_ratio": statistics.median(ratios) if ratios else None,
                "worst_per_mac": max(ipm, default=None),
                "median_per_mac": statistics.median(ipm) if ipm else None,
            }
        )
    cores = {}
    order = {c: i for i, c in enumerate(CORES)}  # the cores' own order, not the rows'
    for core in sorted(dict.fromkeys(r.core for r in rows), key=lambda c: order.get(c, 9)):
        ratios = [r.ratio for r in rows if r.core == core and r.ratio is not None]
        target = TARGETS.get(core, 1.0)
        cores[core] = {
            "with_baseline": len(ratios),
            "target": target,
            "above_target": sum(x > target for x in ratios),
            "above_1": sum(x > 1.0 for x in ratios),
        }
    classes.sort(key=lambda c: (order.get(c["core"], 9), -(c["median_per_mac"] or 0.0)))
    return {"classes": classes, "cores": cores}


def _f(x: float | None, fmt: str, width: int) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:>{width}{fmt}}"


def format_table(rows: list[Row]) -> str:
    """The report: one row per model and core, the per-class summary, the problems."""
    based = any(r.base_instructions for r in rows)
    head = f"{'model':<44} {'class':<10} {'core':<4} {'MACs':>9} {'ours':>11} {'layer':>11} "
    head += f"{'ins/MAC':>7}"
    if based:
        head += f" {'baseline':>11} {'ratio':>6} {'arena':>7} {'b.arena':>7} {'exact':>5}"
    else:
        head += f" {'arena':>7} {'exact':>5}"
    lines = [
        "Instructions in QEMU (-icount, exact guest instructions): ours = whole inference, layer"
        " = the model's op;",
        "ratio = ours / baseline (whole Invoke); ins/MAC = layer / MACs (pool, ADD, MUL: per "
        "element). * board after samd21.",
        head,
        "-" * len(head),
    ]
    for r in sort_rows(rows):
        core = r.core + ("*" if r.board and r.board != CORES[r.core][0] else "")
        text = f"{r.model:<44} {r.cls:<10} {core:<4} {r.macs:>9,} "
        if r.error:
            lines.append(text + f"FAILED: {r.error[:90]}")
            continue
        text += f"{r.instructions:>11,} {r.layer_instructions:>11,} {_f(r.per_mac, '.2f', 7)}"
        if based:
            bi = f"{r.base_instructions:,}" if r.base_instructions else "-"
            bi += "!" if r.base_match is False else ""
            text += f" {bi:>11} {_f(r.ratio, '.2f', 6)} {r.arena:>7,}"
            text += f" {_f(r.base_arena, ',', 7)}"
        else:
            text += f" {r.arena:>7,}"
        lines.append(text + f" {'yes' if r.exact else 'NO':>5}")
    s = summarize(rows)
    h2 = f"{'class':<10} {'core':<4} {'rows':>4} {'worst ratio':>11} {'median ratio':>12} "
    h2 += f"{'worst ins/MAC':>13} {'median ins/MAC':>14}"
    lines += ["", "per class and core (median instructions per MAC, highest first):", h2]
    for c in s["classes"]:
        lines.append(
            f"{c['class']:<10} {c['core']:<4} {c['rows']:>4} {_f(c['worst_ratio'], '.2f', 11)} "
            f"{_f(c['median_ratio'], '.2f', 12)} {_f(c['worst_per_mac'], '.2f', 13)} "
            f"{_f(c['median_per_mac'], '.2f', 14)}"
        )
    if based:
        lines.append("")
        for core, c in s["cores"].items():
            lines.append(
                f"{core}: {c['with_baseline']} rows with a baseline, {c['above_target']} above "
                f"the {c['target']} target, {c['above_1']} above 1.0"
            )
    bad = [r for r in rows if r.error or not r.exact]
    lines.append("")
    lines.append(f"problems: {len(bad)}" if bad else f"all {len(rows)} runs bit-exact with TFLM")
    for r in sorted(bad, key=lambda r: (r.model, r.core)):
        what = r.error or f"NOT bit-exact: {r.mismatches} bytes differ over {r.inputs} inputs"
        lines.append(f"  {r.model} on {r.core} ({r.board or '-'}): {what}")
    if any(r.base_match is False for r in rows):
        lines.append("! the baseline's outputs did not match TFLM on the host")
    return "\n".join(lines)


def fingerprint() -> str:
    """A hash of the compiler, firmware, template and board sources (the cache's key)."""
    h = hashlib.sha1()
    for d in SOURCES:
        for p in sorted((ROOT / d).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def _key(path: Path, core: str, n: int, src: str) -> str:
    digest = hashlib.sha1(path.read_bytes()).hexdigest()[:12]
    return f"{path.stem}|{core}|n{n}|{digest}|{src}"


def _save(cache_path: Path, cache: dict) -> None:
    tmp = cache_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=0))
    tmp.replace(cache_path)


def sweep(
    models: list[Path], meta: dict, cores: list[str], n: int, jobs: int, cache_path: Path | None
) -> list[Row]:
    """Every model on every core, ``jobs`` processes at a time, cached runs reused."""
    src = fingerprint()
    cache = json.loads(cache_path.read_text()) if cache_path and cache_path.exists() else {}
    fields = set(Row.__dataclass_fields__)
    todo, rows = [], []
    for m in models:
        for core in cores:
            k = _key(m, core, n, src)
            if k in cache:
                rows.append(Row(**{f: v for f, v in cache[k].items() if f in fields}))
            else:
                todo.append((k, m, core))
    if rows:
        print(f"{len(rows)} runs from the cache {cache_path}", file=sys.stderr)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
        futs = {ex.submit(run_one, str(m), meta.get(m.stem, {}), c, n): k for k, m, c in todo}
        for i, f in enumerate(as_completed(futs), 1):
            r = f.result()
            rows.append(r)
            verdict = r.error[:70] if r.error else ("exact" if r.exact else "NOT EXACT")
            print(
                f"[{i}/{len(todo)}] {r.model} {r.core} {r.board} {r.instructions:,} {verdict} "
                f"({r.seconds:.1f} s)",
                file=sys.stderr,
            )
            if cache_path is not None:
                cache[futs[f]] = asdict(r)
                _save(cache_path, cache)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, required=True, help="folder of sweep_models.py")
    ap.add_argument("--cores", default=",".join(DEFAULT_CORES), help=f"of {', '.join(CORES)}")
    ap.add_argument("--baseline", type=Path, nargs="*", default=[], help="baseline JSON files")
    ap.add_argument("--json", type=Path, help="write the results and summary here")
    ap.add_argument("-j", type=int, default=1, help="processes (default 1)")
    ap.add_argument("-n", type=int, default=2, help="inputs per run (default 2)")
    ap.add_argument("--cache", type=Path, help="default: DIR/sweep_cache.json")
    ap.add_argument("--no-cache", action="store_true", help="run everything, keep no cache")
    ap.add_argument("--only", default="", help="run only models whose name contains this")
    a = ap.parse_args(argv)
    cores = [c.strip() for c in a.cores.split(",") if c.strip()]
    if bad := [c for c in cores if c not in CORES]:
        ap.error(f"unknown core {bad[0]!r} (of {', '.join(CORES)})")
    man = a.models / "manifest.json"
    meta = {m["name"]: m for m in json.loads(man.read_text())} if man.exists() else {}
    models = [p for p in sorted(a.models.glob("*.tflite")) if a.only in p.stem]
    if not models:
        ap.error(f"no .tflite models in {a.models}")
    cache = None if a.no_cache else (a.cache or a.models / "sweep_cache.json")
    t0 = time.monotonic()
    rows = sweep(models, meta, cores, a.n, max(a.j, 1), cache)
    attach_baseline(rows, load_baseline(a.baseline))
    print(format_table(rows))
    print(f"\n{len(rows)} runs in {time.monotonic() - t0:.0f} s (-j {a.j})")
    if a.json:
        out = {
            "unit": "guest instructions in QEMU -icount (first input)",
            "inputs": a.n,
            "baseline_files": [str(p) for p in a.baseline],
            "results": [r.as_dict() for r in sort_rows(rows)],
            "summary": summarize(rows),
        }
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if any(r.error or not r.exact for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
