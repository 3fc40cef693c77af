"""Random differential runs of streamed segments against TFLM, on the host or a board's
emulator: the random chains of tests/test_stream.py (CONV_2D with windows up to 5 rows, strides
1-2, dilation 2; DEPTHWISE_CONV_2D with depth multipliers 1-2; residual ADDs), the first N
layers run by rows, every layer's output compared with TFLM's on three inputs.

    python -m tests.fuzz.stream_diff --board samd21 --seed 5000 -n 40

Not part of the default test run (docs/fuzzing.md); a failing case prints its seed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_stream import chain  # noqa: E402

from tinycompile import api  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="host", help="host or a board run in QEMU")
    ap.add_argument("--seed", type=int, default=5000, help="first case")
    ap.add_argument("-n", type=int, default=40, help="cases")
    a = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="tc_stream_diff_") as td:
        for seed in range(a.seed, a.seed + a.n):
            net, k, desc = chain(seed)
            path = net.save(Path(td) / f"stream_diff_{seed}.tflite")
            try:
                r = api.compare(path, board=a.board, n=3, layers=True, stream=k)
                ok, why = r.ok, str(r)
            except Exception as e:  # a crash is a finding too
                ok, why = False, f"{type(e).__name__}: {e}"
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} seed {seed} ({k} streamed): {desc}"
                  + ("" if ok else f"\n  {why}"))  # fmt: skip
    print(f"{a.n - bad} of {a.n} cases bit-exact with TFLM on {a.board}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
