"""Calibrate and check the latency estimator (tinycompile/estimate/) against published
measurements of the MLPerf Tiny reference models on real boards (docs/latency_published.md).

The published rows time TFLM or microTVM with CMSIS-NN's kernels, not tinycompile: so what is
checked is the cost model (instructions -> cycles), applied to that software. Its instructions
per inference are the TFLM + CMSIS-NN figures measured in QEMU (benchmarks/tflm_reference.py,
for the same architectures); its cycles per instruction are taken from the estimator run on the
exact reference .tflite file for the core (our kernels' instruction mix: both are SMLAD-based
int8 kernels; the assumption is the main error source, with CMSIS-NN's version, said per row).
The Cortex-M4 calibration factor is the geometric mean of published / predicted over the M4
rows; the Cortex-M33 rows (no M33 model yet: the M4 model stands in, the cores share the
ARMv7E-M/ARMv8-M DSP instruction timing) check it.

Run: python benchmarks/calibrate_latency.py MODELS_DIR [--markdown]
MODELS_DIR holds the MLPerf Tiny files kws_ref_model.tflite, vww_96_int8.tflite,
pretrainedResnet_quant.tflite, ad01_int8.tflite (mlcommons/tiny, benchmark/training/*/
trained_models/; fetch the repository, they are not shipped here). Prints a table.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.tflm_reference import REFERENCE  # noqa: E402
from tinycompile import api  # noqa: E402
from tinycompile.boards import get_board  # noqa: E402
from tinycompile.estimate import classed_layers, layer_cycles  # noqa: E402
from tinycompile.estimate.cost import CALIBRATION, CORE_CYCLES  # noqa: E402

FILES = {
    "kws_dscnn": "kws_ref_model.tflite",
    "vww_mobilenet": "vww_96_int8.tflite",
    "ic_resnet8": "pretrainedResnet_quant.tflite",
    "ad_autoencoder": "ad01_int8.tflite",
}
# (row id in docs/latency_published.md, model, board, core, MHz, software, published ms, fit)
ROWS = [
    ("R009", "kws_dscnn", "NUCLEO-L4R5ZI", "M4", 120, "microTVM AOT + CMSIS-NN 2022", 99.81, True),
    (
        "R010",
        "vww_mobilenet",
        "NUCLEO-L4R5ZI",
        "M4",
        120,
        "microTVM AOT + CMSIS-NN 2022",
        301.2,
        True,
    ),
    ("R011", "ic_resnet8", "NUCLEO-L4R5ZI", "M4", 120, "microTVM AOT + CMSIS-NN 2022", 389.6, True),
    (
        "R012",
        "ad_autoencoder",
        "NUCLEO-L4R5ZI",
        "M4",
        120,
        "microTVM AOT + CMSIS-NN 2022",
        8.605,
        True,
    ),
    ("R005", "kws_dscnn", "EK-RA6M4", "M33", 200, "TFLM + CMSIS-NN (2021)", 50.57, False),
    ("R006", "vww_mobilenet", "EK-RA6M4", "M33", 200, "TFLM + CMSIS-NN (2021)", 162.4, False),
    ("R007", "ic_resnet8", "EK-RA6M4", "M33", 200, "TFLM + CMSIS-NN (2021)", 246.2, False),
    ("R008", "ad_autoencoder", "EK-RA6M4", "M33", 200, "TFLM + CMSIS-NN (2021)", 4.613, False),
    ("R013", "kws_dscnn", "nRF5340-DK", "M33", 128, "microTVM AOT + CMSIS-NN 2022", 76.09, False),
    (
        "R014",
        "vww_mobilenet",
        "nRF5340-DK",
        "M33",
        128,
        "microTVM AOT + CMSIS-NN 2022",
        232.0,
        False,
    ),
    ("R015", "ic_resnet8", "nRF5340-DK", "M33", 128, "microTVM AOT + CMSIS-NN 2022", 316.2, False),
    (
        "R016",
        "ad_autoencoder",
        "nRF5340-DK",
        "M33",
        128,
        "microTVM AOT + CMSIS-NN 2022",
        6.266,
        False,
    ),
]
M4_BOARD = "stm32f407"  # an M4 board whose memory factor is 1.0 (the fit absorbs memory)


def cpi(model: Path) -> float:
    """Cycles per instruction of the M4 cost model on the model's own instruction mix."""
    b = get_board(M4_BOARD)
    p = api.plan(str(model), board=b)
    counts = classed_layers(p, b)
    ins = sum(c.get("instructions", 0) for c in counts)
    return sum(layer_cycles(c, CORE_CYCLES["cortex-m4"]) for c in counts) / ins


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", type=Path, help="folder of the MLPerf Tiny reference .tflite files")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    a = ap.parse_args(argv)
    cpis = {m: cpi(a.models / f) for m, f in FILES.items()}
    preds = {}
    for row in ROWS:
        rid, m, _, _, mhz, _, _, _ = row
        preds[rid] = REFERENCE[m].instructions["M4"] * cpis[m] / (mhz * 1e3)
    fit = [pub / preds[rid] for rid, *_, pub, used in ROWS if used]
    factor = math.exp(sum(math.log(f) for f in fit) / len(fit))
    head = [
        "row",
        "model",
        "board",
        "core",
        "MHz",
        "software",
        "published ms",
        "instructions (M4)",
        "CPI",
        "estimate ms",
        "error",
    ]
    out = [head]
    errs = {"fit": [], "check": []}
    for rid, m, board, core, mhz, sw, pub, used in ROWS:
        est = preds[rid] * factor
        err = est / pub - 1
        errs["fit" if used else "check"].append(err)
        out.append(
            [
                rid,
                m,
                board,
                core,
                str(mhz),
                sw,
                f"{pub:g}",
                f"{REFERENCE[m].instructions['M4'] / 1e6:.2f} M",
                f"{cpis[m]:.3f}",
                f"{est:.1f}",
                f"{100 * err:+.0f}%",
            ]
        )
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in out[1:]:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(r[i]) for r in out) for i in range(len(head))]
        for r in out:
            print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
    print()
    print(f"Cortex-M4 calibration factor: {factor:.3f} (in use: {CALIBRATION['cortex-m4']:.3f})")
    for k, v in errs.items():
        print(f"{k} rows: error {100 * min(v):+.0f}% .. {100 * max(v):+.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
