"""Random differential runs of CONV_2D chains against TFLM, on the host or a board's emulator.

Each case is a chain of one to three CONV_2D layers with a random input size (3..11 x 3..11,
1..24 channels), output channels, window (1x1 to 5x5, 3x5), stride (1, 2), padding and fused
activation, int8 weights at random; the planner then picks in place, column buffers and
schedules as it would for a user, so the cases reach the kernels' fast paths (the int16 column
GEMM, in-place walks, borders, the output-tail column) in combinations the fixed test models do
not. Every layer's output is compared with TFLM's on three inputs (``api.compare(...,
layers=True)``). A failing case prints its seed and shape; ``--keep DIR`` saves the models.

    python -m tests.fuzz.conv_diff --board stm32f407 --seed 1000 -n 40
    python -m tests.fuzz.conv_diff --board samd21 --seed 3000 -n 30 --pointwise

``--pointwise`` favours 1x1 layers and channel changes (in-place chains growing and shrinking).
A run of 40 cases on a Cortex-M board takes about three minutes. Not part of the default test
run (docs/fuzzing.md); what it found is kept as fixed cases in the tests (the chain
3x10x2 -> 6 -> 8 of seed 2032: tests/test_kernels_fast_conv.py, tests/test_inplace.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_kernels_fast_conv import _Net  # noqa: E402

from tinycompile import api  # noqa: E402


def case(seed: int, pointwise: bool) -> tuple[_Net, str]:
    """The chain of case ``seed`` and a one-line description."""
    r = random.Random(seed)
    h, w = r.randint(3, 11), r.randint(3, 11)
    c = r.choice([1, 2, 3, 4, 5, 8, 12, 16, 17, 24])
    net = _Net((1, h, w, c), seed)
    desc = [f"{h}x{w}x{c}"]
    for _ in range(r.randint(1, 3)):
        if pointwise:
            oc = r.choice([1, 2, 3, 5, 6, 7, 8, 9, 12, 17, 24, 40])
            k = r.choice([1, 1, 1, 1, 3, (1, 3)])
        else:
            oc = r.choice([1, 3, 4, 6, 7, 8, 9, 16, 20, 33])
            k = r.choice([1, 1, 3, 3, (3, 5), 2, 5])
        stride = r.choice([1, 1, 1, 2])
        pad = r.choice(["SAME", "SAME", "VALID"])
        ih, iw = net.tensors[net.cur].shape[1:3]
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad == "VALID" and (ih < kh or iw < kw):
            pad = "SAME"
        net.conv(oc, k, stride, pad, r.choice(["NONE", "RELU", "RELU6"]))
        desc.append(f"conv{oc} k{kh}x{kw} s{stride} {pad}")
    return net, " -> ".join(desc)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="host", help="host or a board run in QEMU")
    ap.add_argument("--seed", type=int, default=1000, help="first case")
    ap.add_argument("-n", type=int, default=40, help="cases")
    ap.add_argument("--pointwise", action="store_true", help="favour 1x1 chains")
    ap.add_argument("--keep", type=Path, help="save every case's model here")
    a = ap.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="tc_conv_diff_") as td:
        out = a.keep or Path(td)
        out.mkdir(parents=True, exist_ok=True)
        for seed in range(a.seed, a.seed + a.n):
            net, desc = case(seed, a.pointwise)
            path = net.save(out / f"conv_diff_{seed}.tflite")
            try:
                r = api.compare(path, board=a.board, n=3, layers=True)
                ok, why = r.ok, str(r)
            except Exception as e:  # a crash is a finding too
                ok, why = False, f"{type(e).__name__}: {e}"
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} seed {seed}: {desc}" + ("" if ok else f"\n  {why}"))
    print(f"{a.n - bad} of {a.n} cases bit-exact with TFLM on {a.board}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
