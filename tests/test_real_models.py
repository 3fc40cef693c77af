"""Models of the kinds users bring (tests/models/real, from ``tests.modelgen.real_models``)
against TFLM: a PyTorch-style NCHW CNN opening with TRANSPOSE, an MCUNet-like net with
squeeze-and-excitation and a float32 interface, a two-scale detector head with upsampling and
concatenation, a streaming SVDF keyword model fed frames in order, and an LSTM sequence
classifier fed sequences in order (its hidden and cell state carried over, as TFLM does).

Inputs are shaped like the training data (random int8 codes saturate trained classifiers), and
TFLM's outputs on them are first checked to be spread out, so a bit-exact match means something.
On the host every layer is compared; in QEMU (stm32f746, and samd21 where the plan fits) too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS
from modelgen.real_kws import streams
from modelgen.real_lstm import sample_data as sequences
from modelgen.real_models import sample_data

from tinycompile import api
from tinycompile.errors import DoesNotFit
from tinycompile.fit import check_fit
from tinycompile.frontend import load_model
from tinycompile.run.reference import run_tflm

pytest.importorskip("tflite_micro")

REAL = MODELS / "real"
NAMES = ["nchw_cnn", "mcunet_se", "tiny_det", "kws_svdf", "lstm_classifier"]
STATEFUL = ["kws_svdf", "lstm_classifier"]  # two variable tensors each, persisting across inputs
N = 20
STEPS = 24  # kws_svdf: frames of one stream, in order (the state persists)
HAVE_QEMU = bool(shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc"))


def _path(name: str) -> Path:
    return REAL / f"{name}.tflite"


def _inputs(name: str) -> list[np.ndarray]:
    """Data like the training data, quantized with the input's scale and zero point when the
    model's input is int8 (mcunet_se takes float32)."""
    if name == "kws_svdf":
        x = streams(STEPS, seed=5)[0]
    elif name == "lstm_classifier":
        x = sequences(STEPS)  # [24, 16 steps, 8 features]
    else:
        x = sample_data(name, N)
    g = load_model(_path(name))
    t = g.t(g.inputs[0])
    if t.dtype == "int8":
        q = t.quant
        x = np.clip(np.round(x / q.s) + q.zp, -128, 127).astype(np.int8)
    return [x]


def _kinds(name: str) -> list[str]:
    return [op.kind for op in load_model(_path(name)).ops]


def test_models_have_their_shape() -> None:
    nchw = load_model(_path("nchw_cnn"))
    assert nchw.ops[0].kind == "TRANSPOSE" and nchw.t(nchw.inputs[0]).shape == (1, 3, 32, 32)
    mc = load_model(_path("mcunet_se"))
    kinds = [op.kind for op in mc.ops]
    assert len(kinds) >= 100 and _path("mcunet_se").stat().st_size < 300_000
    assert kinds[0] == "QUANTIZE" and kinds[-1] == "DEQUANTIZE"
    assert mc.t(mc.inputs[0]).dtype == "float32" and mc.t(mc.outputs[0]).dtype == "float32"
    assert {"MEAN", "HARD_SWISH", "LOGISTIC", "MUL", "ADD", "CONV_2D"} <= set(kinds)
    mul = next(op for op in mc.ops if op.kind == "MUL")
    assert mc.t(mul.inputs[0]).shape != mc.t(mul.inputs[1]).shape  # broadcasting
    det = load_model(_path("tiny_det"))
    assert len(det.outputs) == 2 and {"RESIZE_NEAREST_NEIGHBOR", "CONCATENATION"} <= set(
        op.kind for op in det.ops
    )
    producer = {tid: op.kind for op in det.ops for tid in op.outputs}
    assert [producer[o] for o in det.outputs] == ["LOGISTIC", "LOGISTIC"]
    assert _kinds("kws_svdf").count("SVDF") == 2
    lstm = load_model(_path("lstm_classifier"))
    assert [op.kind for op in lstm.ops] == [
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "STRIDED_SLICE",
        "FULLY_CONNECTED",
        "SOFTMAX",
    ]
    assert lstm.t(lstm.inputs[0]).shape == (1, 16, 8) and lstm.t(lstm.outputs[0]).shape == (1, 5)
    cell = lstm.t(lstm.ops[0].inputs[19])
    assert cell.variable and cell.dtype == "int16"
    assert _path("lstm_classifier").stat().st_size < 20_000


def _assert_alive(name: str, xs: list[np.ndarray]) -> None:
    """TFLM's outputs are spread out: many values, every row different, several winners."""
    for out in run_tflm(_path(name), xs).outputs:
        rows = out.reshape(out.shape[0], -1)
        assert len(np.unique(out)) > 20, f"{name}: outputs collapsed: {np.unique(out)}"
        assert len(np.unique(rows, axis=0)) == len(rows), f"{name}: equal output rows"
        assert len(np.unique(rows.argmax(axis=1))) >= 3, f"{name}: always the same winner"


@pytest.mark.parametrize("name", NAMES)
def test_real_model_bit_exact_on_host(name: str) -> None:
    """Every layer and output (and kws_svdf's and the LSTM's state after every input) equal
    TFLM's."""
    xs = _inputs(name)
    _assert_alive(name, xs)
    r = api.compare(_path(name), inputs=xs, n=len(xs[0]), layers=True)
    assert r.ok, str(r)
    assert r.layers and len(r.layers) >= len(_kinds(name)) - 2
    assert all(la["mismatches"] == 0 for la in r.layers), str(r)
    if name in STATEFUL:
        assert len(r.state) == 2 and all(s["mismatches"] == 0 for s in r.state)


@pytest.mark.parametrize("name", STATEFUL)
def test_state_persists_across_inputs(name: str) -> None:
    """The same input gives other outputs after other inputs: TFLM reset before every input
    disagrees with the run in order that the compiled code matched."""
    x = _inputs(name)[0]
    fresh = run_tflm(_path(name), [x], reset_between=True).outputs[0]
    in_order = run_tflm(_path(name), [x]).outputs[0]
    assert not np.array_equal(fresh.reshape(len(x), -1), in_order.reshape(len(x), -1))


@pytest.mark.qemu
@pytest.mark.skipif(not HAVE_QEMU, reason="needs qemu-system-arm and arm-none-eabi-gcc")
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("name", NAMES)
def test_real_model_in_qemu(name: str, board: str) -> None:
    """3 inputs (the stateful models: 6 in order) bit-exact in every layer in QEMU where the
    plan fits the board; where it does not, the refusal names the board."""
    path = _path(name)
    n = 6 if name in STATEFUL else 3
    xs = [x[:n] for x in _inputs(name)]
    if not check_fit(api.plan(path), board).fits:
        with pytest.raises(DoesNotFit, match=f"does not fit board {board}"):
            api.compare(path, board=board, inputs=xs, n=n)
        return
    r = api.compare(path, board=board, inputs=xs, n=n, layers=True)
    assert r.ok, str(r)
    assert r.layers and all(la["mismatches"] == 0 for la in r.layers), str(r)
