"""Whole networks (MLPerf Tiny KWS, VWW, IC, AD and the bundled digits example) against TFLM.

Each model goes through the whole pipeline (``api.compare``: generated C built for the host, every
layer and the outputs compared byte for byte with TensorFlow Lite Micro) on 20 inputs of two
kinds: uniform random int8 codes (the API's default) and normal(0, 1) samples quantized with the
input's scale and zero point. A bit-exact match only means something if the reference outputs are
alive, so the TFLM outputs are first checked not to have collapsed to one or two values.
The models come from ``python -m tests.modelgen.whole_models``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, whole_models

from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.run.reference import run_tflm

pytest.importorskip("tflite_micro")

N = 20
EXAMPLES = ROOT / "examples"


def _normal_inputs(path: Path, n: int = N, seed: int = 0) -> list[np.ndarray]:
    """normal(0, 1) samples quantized with each input's scale and zero point."""
    g = load_model(path)
    rng = np.random.default_rng(seed)
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        assert t.dtype == "int8" and t.quant is not None
        x = rng.normal(0.0, 1.0, size=(n, *t.shape[1:]))
        xs.append(np.clip(np.round(x / t.quant.s) + t.quant.zp, -128, 127).astype(np.int8))
    return xs


def _inputs(path: Path, kind: str) -> list[np.ndarray]:
    if kind == "uniform":
        return api.make_inputs(load_model(path), N, 0)
    return _normal_inputs(path)


def _assert_alive(path: Path, xs: list[np.ndarray]) -> None:
    """TFLM's outputs over the batch take more than 2 values and more than 2 distinct rows."""
    ref = run_tflm(path, xs)
    for out in ref.outputs:
        rows = out.reshape(out.shape[0], -1)
        assert len(np.unique(out)) > 2, f"{path.name}: outputs collapsed: {np.unique(out)}"
        assert len(np.unique(rows, axis=0)) > 2, f"{path.name}: reference output rows collapsed"


@pytest.mark.parametrize("kind", ["uniform", "normal"])
@pytest.mark.parametrize("path", whole_models(), ids=lambda p: p.stem)
def test_whole_model_bit_exact(path: Path, kind: str) -> None:
    xs = _inputs(path, kind)
    _assert_alive(path, xs)
    r = api.compare(path, inputs=xs, n=N, layers=True)
    assert r.ok, str(r)
    assert r.layers and all(la["mismatches"] == 0 for la in r.layers), str(r)


def test_digits_example_accuracy_matches_tflm() -> None:
    """On the bundled test images, the compiled code predicts exactly what TFLM predicts."""
    path = EXAMPLES / "digits.tflite"
    x = np.load(EXAMPLES / "digits_inputs.npy")
    labels = np.load(EXAMPLES / "digits_labels.npy")
    g = load_model(path)
    t_in = g.t(g.inputs[0])
    assert x.dtype == np.int8 and x.shape == (len(labels), *t_in.shape[1:])

    r = api.compare(path, inputs=[x], layers=True)
    assert r.ok, str(r)
    assert r.result is not None
    ours = np.argmax(r.result.outputs[0].reshape(len(labels), -1), axis=1)
    tflm = np.argmax(run_tflm(path, [x]).outputs[0].reshape(len(labels), -1), axis=1)
    np.testing.assert_array_equal(ours, tflm)
    acc_ours = float(np.mean(ours == labels))
    assert acc_ours == float(np.mean(tflm == labels))
    assert acc_ours >= 0.9, f"digits example accuracy {acc_ours:.2f}: is the model trained?"
