"""Models in the styles issue 21 met in the field, against TFLM + CMSIS-NN from one run.

Writes the models the project builds itself (tests/modelgen/field_models.py and
mobilenetv2_pt.py: a micro_speech-style speech CNN, a MobileNetV1-0.25 person detector on
96x96x1, a PyTorch-style MobileNetV2-0.35 with explicit PADs and a float NCHW interface at 80x80
and 224x224, and the 80x80 one's twin with built-in padding) into ``--models DIR``, then for each
case (model, options, core) plans it for the core's board, builds the emulator firmware, runs it
in QEMU and compares it with TFLM (``api.compare``), and prints: our arena as the board gets it
(``--stream auto``) and the smallest (``--stream min``), our instructions per inference, and
beside them TFLM + CMSIS-NN's arena (``arena_used_bytes``) and instructions from ``--baseline``
JSON files (made outside the repository: docs/baseline.md; CMSIS-NN on the M7/M4, the faster of
CMSIS-NN and the reference kernels on the M0+), with the ratios.

Run from the repository root: ``python benchmarks/bench_field.py --models DIR [--baseline
base.json ...] [--cores M7,M4,M0+] [--json out.json]``; ``--write-only`` writes the models and
stops (to measure the baseline on them first).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.sweep_layers import load_baseline  # noqa: E402
from tests.modelgen import field_models, mobilenetv2_pt  # noqa: E402

# (label, model, int8_io, {core: board}): a core without a board is not run
CASES = [
    ("speech CNN (dm 8 on 49x40x1)", "speech_cnn", False,
     {"M7": "stm32f746", "M4": "stm32f407", "M0+": "samd21"}),
    ("person detector MobileNetV1-0.25 96x96x1", "person_detect", False,
     {"M7": "stm32f746", "M4": "stm32f407", "M0+": "rp2040"}),
    ("MobileNetV2-0.35 PyTorch-style 80x80, float NCHW", "mbv2pt_80", False,
     {"M7": "stm32f746", "M4": "stm32f407"}),
    ("  the same, --int8-io", "mbv2pt_80", True, {"M7": "stm32f746", "M4": "stm32f407"}),
    ("  its twin with built-in padding", "mbv2pt_80_twin", False, {"M7": "stm32f746"}),
    ("MobileNetV2-0.35 PyTorch-style 224x224, --int8-io", "mbv2pt_224", True,
     {"M7": "stm32h743"}),
]  # fmt: skip


def write_models(folder: Path) -> dict[str, Path]:
    """Every model of CASES, written into ``folder`` (deterministic bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    makers = {**field_models.MODELS, **mobilenetv2_pt.MODELS}
    out = {}
    for name in dict.fromkeys(c[1] for c in CASES):
        out[name] = folder / f"{name}.tflite"
        out[name].write_bytes(makers[name]())
    return out


@dataclass
class Result:
    label: str
    model: str
    core: str
    board: str
    int8_io: bool
    macs: int = 0
    arena: int = 0  # planned for the board (streaming only where it needs it)
    arena_min: int = 0  # --stream min
    instructions: int = 0
    exact: bool = False
    error: str = ""
    base_instructions: int | None = None
    base_arena: int | None = None


def measure(label: str, path: Path, int8_io: bool, core: str, board: str) -> Result:
    from tinycompile import api
    from tinycompile.errors import CompileError

    r = Result(label, path.stem, core, board, int8_io)
    try:
        p = api.plan(path, board=board, int8_io=int8_io)
        r.macs, r.arena = sum(la.macs for la in p.layers), p.arena_bytes
        r.arena_min = api.plan(path, stream="min", int8_io=int8_io).arena_bytes
        c = api.compare(path, board=board, n=1, layers=False, int8_io=int8_io)
        r.instructions = int((c.profile or {}).get("instructions", 0))
        r.exact = c.ok
    except CompileError as e:
        r.error = str(e).splitlines()[0]
    return r


def _ratio(a: int, b: int | None) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def table(results: list[Result]) -> str:
    head = (f"{'case':50} {'core':4} {'board':10} {'MACs':>11} {'arena':>9} {'min':>8}"
            f" {'TFLM':>9} {'/TFLM':>6} {'instructions':>13} {'TFLM+CMSIS':>13} {'/TFLM':>6}"
            " exact")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in results:
        if r.error:
            lines.append(f"{r.label:50} {r.core:4} {r.board:10} {r.error}")
            continue
        base_a = f"{r.base_arena:,}" if r.base_arena else "-"
        base_i = f"{r.base_instructions:,}" if r.base_instructions else "-"
        lines.append(
            f"{r.label:50} {r.core:4} {r.board:10} {r.macs:>11,} {r.arena:>9,} {r.arena_min:>8,}"
            f" {base_a:>9} {_ratio(r.arena_min, r.base_arena):>6} {r.instructions:>13,}"
            f" {base_i:>13} {_ratio(r.instructions, r.base_instructions):>6}"
            f" {'yes' if r.exact else 'NO'}"
        )
    lines.append(
        "arena: planned for the board; min: --stream min (the smallest, /TFLM is of it); TFLM:"
        " arena_used_bytes of TFLM + CMSIS-NN on the float model (its own interface)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=Path, required=True, help="folder to write the models to")
    ap.add_argument("--baseline", type=Path, nargs="*", default=[])
    ap.add_argument("--cores", default="M7,M4,M0+")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--write-only", action="store_true")
    a = ap.parse_args(argv)
    paths = write_models(a.models)
    if a.write_only:
        print("\n".join(str(p) for p in paths.values()))
        return 0
    base = load_baseline(a.baseline)
    cores = a.cores.split(",")
    results = []
    for label, name, int8_io, boards in CASES:
        for core, board in boards.items():
            if core in cores:
                r = measure(label, paths[name], int8_io, core, board)
                e = base.get((name, core))
                if e is not None:
                    r.base_instructions, r.base_arena = int(e["instructions"]), e.get("arena")
                results.append(r)
                print(table([r]).splitlines()[2], flush=True)
    print()
    print(table(results))
    if a.json:
        a.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0 if all(r.exact and not r.error for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
