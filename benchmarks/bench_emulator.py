"""Deterministic speed and size benchmark: instructions per inference in QEMU, per board.

For every whole model and each emulated core (stm32f746 -> Cortex-M7, stm32f407 -> Cortex-M4,
samd21 -> Cortex-M0+), builds the emulator firmware, runs a few inputs under ``-icount`` and
prints instructions per inference (exact, not time), instructions per MAC, and the linked flash
and SRAM use against the board. Models that do not fit a board are listed as such.

Run from the repository root: ``python benchmarks/bench_emulator.py [MODEL ...]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_compile import MODELS  # noqa: E402
from tinycompile import api  # noqa: E402
from tinycompile.errors import DoesNotFit  # noqa: E402

BOARDS = ["stm32f746", "stm32f407", "samd21"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path, default=MODELS)
    ap.add_argument("-n", type=int, default=3, help="inputs per run")
    a = ap.parse_args(argv)
    head = (
        f"{'model':<16} {'board':<10} {'MACs':>12} {'instructions':>13} {'instr/MAC':>9} "
        f"{'flash used':>11} {'SRAM used':>10} {'exact':>6}"
    )
    print(head)
    print("-" * len(head))
    for m in a.models:
        p = api.plan(m)
        macs = sum(la.macs for la in p.layers)
        for b in BOARDS:
            try:
                r = api.compare(m, board=b, n=a.n, layers=False)
            except DoesNotFit:
                print(f"{m.stem:<16} {b:<10} {macs:>12,} {'does not fit':>13}")
                continue
            fw = r.result.firmware.size
            ins = r.profile["instructions"]
            print(
                f"{m.stem:<16} {b:<10} {macs:>12,} {ins:>13,} {ins / macs:>9.2f} "
                f"{fw.flash_used:>11,} {fw.sram_used:>10,} {'yes' if r.ok else 'NO':>6}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
