"""Shared test fixtures: model paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# `plan --board` estimates latency by running the model's emulator build in QEMU, one
# instruction at a time (seconds to a minute a model): off for the suite (child processes too),
# on in tests/test_estimate.py, which checks it.
os.environ.setdefault("TINYCOMPILE_ESTIMATE", "off")
MODELS = ROOT / "tests" / "models"
WHOLE = ["kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder"]


def whole_models() -> list[Path]:
    return [MODELS / f"{m}.tflite" for m in WHOLE] + [ROOT / "examples" / "digits.tflite"]


# Op models that exist to be refused (tested in their family's tests), and models TFLM itself
# cannot run (tested against a twin): kept out of loops over "all op models".
REFUSED = {"concat_qdiff"}
# 16x8 models of operators TFLM runs on int8 only (tests/modelgen/ops_refused16.py), which stay
# refused (tests/test_ops_int16.py checks their one-line refusal): the model and its op
INT16_REFUSED = {
    "hardswish16": "HARD_SWISH",
    "elu16": "ELU",
}
REFUSED |= set(INT16_REFUSED)
TFLM_CRASHES = {"dwconv_nobias"}


def op_models(*, tflm: bool = False) -> list[Path]:
    skip = REFUSED | (TFLM_CRASHES if tflm else set())
    ops = [*(MODELS / "ops").glob("*.tflite"), *(MODELS / "ops").glob("*.onnx")]
    return sorted(p for p in ops if p.stem not in skip)


@pytest.fixture
def example_model() -> Path:
    return ROOT / "examples" / "digits.tflite"


def run_with_inputs(model: Path, x, tmp_path: Path) -> tuple[dict, object]:
    """`tinycompile run MODEL --inputs x.npy --outputs y.npy --json` as a user runs it: the
    JSON report and the outputs file's array (exit 0 asserted)."""
    import json
    import subprocess
    import sys

    import numpy as np

    np.save(tmp_path / "x.npy", x)
    r = subprocess.run(
        [sys.executable, "-m", "tinycompile.cli", "run", str(model), "--inputs",
         str(tmp_path / "x.npy"), "--outputs", str(tmp_path / "y.npy"), "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), np.load(tmp_path / "y.npy")
