"""Instructions per MAC of few-input-channel first layers (issue 21) in QEMU, per core: the
speech model's DEPTHWISE_CONV_2D (depth multiplier 8 on 49x40x1, 10x8, stride 2: a CONV_2D
after the one-channel pass), first CONV_2D layers over 1 and 3 channels, and DS-CNN's first
layer (tests/models/kws_dscnn.tflite). Every run is also compared bit for bit with TFLM.

Run from the repository root: ``python benchmarks/bench_few_channel.py [--cores M7,M4,M0+]
[--only NAME,...] [-n N]``. Not a test: it prints a table (exact instruction counts from
``-icount``, so the figures are deterministic).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.modelgen.few_channel import first_layer, speech  # noqa: E402
from tinycompile import api  # noqa: E402

CORES = {"M7": "stm32f746", "M4": "stm32f407", "M0+": "samd21"}


def models(tmp: Path) -> dict[str, tuple[Path, int]]:
    """name -> (model, index in the schedule of the layer measured)."""
    return {
        "speech dw 10x8 s2 dm8 SAME": (speech("SAME").save(tmp / "speech.tflite"), 0),
        "speech dw 10x8 s2 dm8 VALID": (speech("VALID").save(tmp / "speech_v.tflite"), 0),
        "in_c=1 3x3 s2 oc8 96x96": (first_layer((96, 96, 1), 8, 3).save(tmp / "c1.tflite"), 0),
        "in_c=3 3x3 s2 oc16 48x48": (first_layer((48, 48, 3), 16, 3).save(tmp / "c3.tflite"), 0),
        "DS-CNN first 10x4 s2 oc64": (ROOT / "tests" / "models" / "kws_dscnn.tflite", 0),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="M7,M4,M0+")
    ap.add_argument("--only", default="")
    ap.add_argument("-n", type=int, default=2)
    a = ap.parse_args()
    cores = a.cores.split(",")
    with tempfile.TemporaryDirectory() as d:
        ms = models(Path(d))
        only = [s for s in a.only.split(",") if s]
        print(f"{'layer':30s} " + " ".join(f"{c:>18s}" for c in cores))
        for name, (path, layer) in ms.items():
            if only and not any(o in name for o in only):
                continue
            cells = []
            for core in cores:
                r = api.compare(path, board=CORES[core], n=a.n, layers=False)
                la = (r.profile or {})["layers"][layer]
                ipm = la["instructions"] / la["macs"]
                cells.append(f"{ipm:7.2f}{'' if r.ok else ' MISMATCH':9s}")
            print(f"{name:30s} " + " ".join(f"{c:>18s}" for c in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
