"""Issue 13: quantized ONNX models (onnxruntime's quantizer, QOperator and QDQ forms, per-tensor
and per-channel weights: a CNN with depthwise and a residual add, an MLP in PyTorch layout,
grouped convolutions, a Concat of different scales after Relu, Clip and Sigmoid, and Sigmoid /
Mul / AveragePool / Pad / Transpose / Softmax; hand-made tie, uint8, wide-accumulator, all-pairs
Add/Mul and QDQ-activation models) compiled, run on the host and in QEMU, and compared bit for
bit, outputs and every layer, with the numpy ONNX reference (``compare_plan``; onnxruntime is its
second opinion, tests/test_onnx_reference.py checks the two agree).

Models are built at test time (tests/onnxgen) into a session-scoped temporary folder. Inputs are
quantized normal samples (what the models were calibrated on), so activations stay alive.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.ir import Graph

CALIBRATED = ["cnn", "mlp", "grouped", "mix", "act"]
VARIANTS = ["qop", "qop_pc", "qdq", "qdq_pc"]
# The whole model x form matrix on the host (QOperator and QDQ, per tensor and per channel, int8
# and uint8) and most of it in QEMU: with the kernels' objects cached a build costs well under a
# second.
HOST = [f"{m}_{v}" for m in CALIBRATED for v in VARIANTS]
HOST += ["ties_u8", "cnn_u8", "cnn_u8_qdq", "ties", "wide"]
EMULATED = ["cnn_qdq_pc", "mix_qdq", "act_qdq", "ties_u8", "wide", "cnn_qop", "mlp_qop_pc",
            "mlp_qdq", "grouped_qop_pc", "ties", "cnn_u8", "cnn_u8_qdq"]  # fmt: skip


@pytest.fixture(scope="session")
def onnx_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("onnxruntime")
    from tests.onnxgen.handmade import build_handmade
    from tests.onnxgen.models import build_all

    out = tmp_path_factory.mktemp("onnx_models")
    return {**build_all(out), **build_handmade(out)}


def calibrated_inputs(g: Graph, n: int, seed: int = 5) -> list[np.ndarray]:
    """n samples of N(0, 1) floats quantized with each input's parameters (IR layout)."""
    rng = np.random.default_rng(seed)
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        f = rng.normal(0, 1, (n * t.shape[0], *t.shape[1:])).astype(np.float32)
        q = np.rint(f / np.float32(t.quant.s)) + t.quant.zp
        xs.append(np.clip(q, -128, 127).astype(np.int8))
    return xs


def wide_inputs(n: int) -> list[np.ndarray]:
    """Inputs of the ``wide`` model: half of them large and positive, so that accumulators pass
    2^24 (float(acc) rounds) and land on ties."""
    rng = np.random.default_rng(3)
    hi = rng.integers(60, 128, (n - n // 2, 2048))
    return [np.concatenate([hi, rng.integers(-128, 128, (n // 2, 2048))]).astype(np.int8)]


def _compare(path: Path, board: str = "host", n: int = 20):
    p = api.plan(path)
    xs = wide_inputs(n) if path.stem == "wide" else calibrated_inputs(p.graph, n)
    r = api.compare(path, board=board, inputs=xs)
    assert r.ok, str(r)
    out = r.result.outputs[0]
    assert len(np.unique(out)) > 4, f"degenerate outputs {np.unique(out)}"
    return r


@pytest.mark.parametrize("model", HOST)
def test_host_bit_exact(onnx_models: dict[str, Path], model: str) -> None:
    _compare(onnx_models[model], n=50 if model.startswith("ties") else 20)


def all_pairs() -> list[np.ndarray]:
    """Every (a, b) int8 pair, as 16 samples of the ``binary`` models' two 64 x 64 inputs."""
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(16, 64, 64)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(16, 64, 64)
    return [a, b]


@pytest.mark.parametrize("name", ["binary", "binary_u8"])
def test_add_mul_every_pair(onnx_models: dict[str, Path], name: str) -> None:
    """QLinearAdd (MLAS's fused multiply-adds), QLinearMul and a scalar-B QLinearAdd on all
    65536 input pairs, on the host."""
    r = api.compare(onnx_models[name], inputs=all_pairs())
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_add_mul_every_pair_emulated(onnx_models: dict[str, Path], board: str) -> None:
    """The same in QEMU: a hardware fused multiply-add on the M7, its exact double emulation
    on the M0+."""
    r = api.compare(onnx_models["binary"], board=board, inputs=all_pairs())
    assert r.ok, str(r)


def test_qdq_activations_every_value(onnx_models: dict[str, Path]) -> None:
    """DQ -> Relu -> Q, DQ -> Clip -> Q and DQ -> Q left by the quantizer, on all 256 values."""
    path = onnx_models["qdq_act"]
    assert [o.kind for o in api.plan(path).graph.ops] == ["ONNX_REQUANT"] * 3
    r = api.compare(path, inputs=[np.arange(-128, 128, dtype=np.int8).reshape(4, 64)])
    assert r.ok and len(r.layers) == 3, str(r)


def test_both_forms_lower_alike(onnx_models: dict[str, Path]) -> None:
    """QOperator and QDQ forms of one network become the same IR ops (the QDQ groups fused)."""
    for name in CALIBRATED:
        kinds = {
            v: [o.kind for o in api.plan(onnx_models[f"{name}_{v}"]).graph.ops] for v in VARIANTS
        }
        assert len({tuple(k) for k in kinds.values()}) == 1, kinds
    cnn = [o.kind for o in api.plan(onnx_models["cnn_qdq"]).graph.ops]
    assert cnn.count("ONNX_CONV") == 4 and "ONNX_ADD" in cnn and "MAX_POOL_2D" in cnn
    mix = [o.kind for o in api.plan(onnx_models["mix_qdq"]).graph.ops]
    assert mix.count("ONNX_REQUANT") >= 2 and "CONCATENATION" in mix  # rescaled inputs
    assert "ONNX_SIGMOID" in mix


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21", "qemu-m55"])  # M7, M0+, M55 (Helium)
@pytest.mark.parametrize("model", EMULATED)
def test_emulator_bit_exact(onnx_models: dict[str, Path], model: str, board: str) -> None:
    _compare(onnx_models[model], board=board, n=10)


def test_qdq_default_session(onnx_models: dict[str, Path]) -> None:
    """onnxruntime's default x86-64 session leaves some int8 QDQ groups unfused (float32 DQ ->
    op -> Q) where its s8 -> u8 rewrite does not reach them; the reference fuses every group, as
    onnxruntime's fusing session does (docs/onnx.md). Against the default session the compiled
    model is then within one step, and equal almost everywhere."""
    from tinycompile.run.reference import run_onnx_reference, run_onnxruntime

    path = onnx_models["act_qdq"]
    p = api.plan(path)
    xs = calibrated_inputs(p.graph, 100)
    ours = run_onnx_reference(path, xs, p.graph).outputs[0]  # = the compiled model (above)
    fused = run_onnxruntime(path, xs, p.graph).outputs[0]
    assert np.array_equal(ours, fused)
    default = run_onnxruntime(path, xs, p.graph, fuse_int8=False).outputs[0]
    d = np.abs(ours.astype(int) - default.astype(int))
    assert d.max() <= 1 and np.count_nonzero(d) <= 0.02 * d.size, (d.max(), np.count_nonzero(d))
