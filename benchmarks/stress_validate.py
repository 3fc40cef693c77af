"""`tinycompile validate --port qemu` again and again with every core busy: the emulated board's
deadlines must hold on a loaded machine (issue 22: 4 of 11 runs once ended with "set-input: no
reply within 1 s (3 attempts)" at load average 8-10).

    benchmarks/stress_validate.py examples/digits.tflite kws_dscnn --runs 20 [-n 2] [--no-load]

Beside the runs, one busy loop per core (``--burners``, default the core count) keeps the
machine loaded; each run is the real command line in a child process. Prints a line per run and
a table per model: runs, passed, the slowest run, the load average seen. Exit 1 if any run
failed. Not part of the test suite (it takes minutes); its result goes in docs/validate.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_emulator import resolve_model  # noqa: E402


def _burn(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", help="model files or bench_emulator names")
    ap.add_argument("--board", default="stm32f407", help="a board QEMU models (stm32f407)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("-n", type=int, default=2, help="inputs per run (default 2)")
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-load", action="store_true", help="no busy loops beside the runs")
    a = ap.parse_args(argv)
    stop = multiprocessing.Event()
    burners = [] if a.no_load else [
        multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(a.burners)
    ]  # fmt: skip
    for b in burners:
        b.start()
    rows = []
    try:
        for name in a.models:
            model = resolve_model(name)
            for i in range(1, a.runs + 1):
                cmd = [sys.executable, "-m", "tinycompile.cli", "validate", str(model),
                       "--board", a.board, "--port", "qemu", "-n", str(a.n)]  # fmt: skip
                t0 = time.monotonic()
                r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                secs = time.monotonic() - t0
                load = os.getloadavg()[0]
                ok = r.returncode == 0
                last = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
                print(f"{Path(name).name:<24} run {i:>2}: {'ok  ' if ok else 'FAIL'} {secs:6.1f} s"
                      f"  load {load:4.1f}  {'' if ok else last[0]}", flush=True)  # fmt: skip
                rows.append((Path(name).name, ok, secs, load))
    finally:
        stop.set()
        for b in burners:
            b.join(5)
    print(f"\n{'model':<24} {'runs':>4} {'passed':>6} {'slowest s':>9} {'max load':>8}")
    for name in dict.fromkeys(r[0] for r in rows):
        rs = [r for r in rows if r[0] == name]
        print(f"{name:<24} {len(rs):>4} {sum(r[1] for r in rs):>6} "
              f"{max(r[2] for r in rs):>9.1f} {max(r[3] for r in rs):>8.1f}")  # fmt: skip
    print(f"busy loops beside the runs: {len(burners)} (cores: {os.cpu_count()})")
    return 0 if all(r[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
