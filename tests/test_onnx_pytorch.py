"""Issue 19: ONNX as PyTorch users bring it. Models made the way a PyTorch user makes them
(tests/onnxgen/pytorch_style.py: a float CNN, a token MLP, a graph of PyTorch's data movement
(Split, Slice, Gather, Squeeze/Unsqueeze, GlobalMaxPool) and one of its activations (LeakyReLU,
Hardsigmoid, Hardswish) saved at opset 23, ``quant_pre_process``
(which imports ai.onnx.ml and other domains no node uses), ``quantize_static`` in QDQ and
QOperator forms with uint8 weights, asymmetric weights, and a raw int8 input), fed inputs in the
model's own layout (NCHW floats, as the user holds them) and compared bit for bit with the ONNX
reference (onnxruntime agreeing as the second opinion, or naming its saturating kernel) on the
host and in QEMU on stm32f746 (M7) and samd21 (M0+); and float inputs landing exactly on .5
quantization steps, which ONNX rounds half to even."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import run_with_inputs

from tinycompile import api
from tinycompile.run import samples

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

CNN = ["pt_cnn_qdq_i8", "pt_cnn_qdq_u8w", "pt_cnn_qdq_u8w_asym", "pt_cnn_qop_u8w",
       "pt_cnn_qop_i8w_asym", "pt_cnn_raw"]  # fmt: skip
MLP = [m.replace("cnn", "mlp") for m in CNN]
MOVES = [m.replace("cnn", "moves") for m in CNN]
ACT = [m.replace("cnn", "act") for m in CNN]
EMULATED = ["pt_cnn_qdq_u8w_asym", "pt_cnn_qop_i8w_asym", "pt_cnn_raw", "pt_mlp_qdq_u8w",
            "pt_mlp_raw", "pt_moves_qdq_i8", "pt_act_qop_u8w"]  # fmt: skip


@pytest.fixture(scope="session")
def pt_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.onnxgen.pytorch_style import build_pytorch_style

    return build_pytorch_style(tmp_path_factory.mktemp("pt_models"))


def nchw_inputs(model: Path, n: int, seed: int = 3) -> api.UserInputs:
    """n calibrated samples as the user holds them: N(0, 1) floats in the file's shape and
    layout (a raw int8/uint8 input gets those floats quantized by its own parameters)."""
    g = api.plan(model).graph
    rng = np.random.default_rng(seed)
    xs = []
    for tid in g.inputs:
        p = samples.port(g, tid)
        x = rng.normal(0, 1, samples.file_batch_shape(p, n)).astype(np.float32)
        xs.append(x)
    return api.user_inputs(g, xs)


def test_what_the_quantizer_wrote(pt_models: dict[str, Path]) -> None:
    """The models are what the issue names: opset 23+, unused domain imports, uint8 and
    nonzero weight zero points, a raw int8 input, a first dimension that is no batch."""
    m = onnx.load(pt_models["pt_cnn_qdq_u8w_asym"])
    assert next(o.version for o in m.opset_import if o.domain == "") >= 23
    assert "ai.onnx.ml" in {o.domain for o in m.opset_import}
    zps = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    w = [v for k, v in zps.items() if k.startswith("w") and k.endswith("zero_point")]
    assert w and all(v.dtype == np.uint8 for v in w) and any(np.any(v != 128) for v in w)
    raw = onnx.load(pt_models["pt_cnn_raw"]).graph.input[0]
    assert raw.type.tensor_type.elem_type == onnx.TensorProto.INT8
    mlp = onnx.load(pt_models["pt_mlp_qdq_i8"]).graph.input[0]
    assert [d.dim_value for d in mlp.type.tensor_type.shape.dim] == [2, 6, 12]


def _compare(path: Path, board: str = "host", n: int = 12):
    xs = nchw_inputs(path, n)
    r = api.compare(path, board=board, inputs=xs)
    assert r.ok, str(r)
    assert r.samples == n and len(r.layers) >= 4
    assert (
        r.second_opinion is None
        or not r.second_opinion["mismatches"]
        or ("saturating" in r.second_opinion["explanation"])
    ), r.second_opinion_line()
    out = r.result.outputs[0]
    assert len(np.unique(out)) > 4, f"degenerate outputs {np.unique(out)}"
    return r


@pytest.mark.parametrize("model", CNN + MLP + MOVES + ACT)
def test_host_bit_exact(pt_models: dict[str, Path], model: str) -> None:
    _compare(pt_models[model])


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("model", EMULATED)
def test_emulator_bit_exact(pt_models: dict[str, Path], model: str, board: str) -> None:
    _compare(pt_models[model], board=board, n=6)


def test_half_steps_round_half_to_even(pt_models: dict[str, Path]) -> None:
    """Float inputs exactly on .5 quantization steps: the host quantizes them as the model's
    QuantizeLinear does (half to even), and the compiled model equals the reference fed those
    very floats; TFLite's rule (half away from zero) would give other codes for most."""
    path = pt_models["pt_cnn_qdq_i8"]
    g = api.plan(path).graph
    t = g.t(g.inputs[0])
    s, zp = np.float32(t.quant.s), t.quant.zp
    rng = np.random.default_rng(8)
    k = rng.integers(-100, 100, samples.file_batch_shape(samples.port(g, g.inputs[0]), 6))
    x = ((k + 0.5) * s).astype(np.float32)
    steps = x / s
    ties = np.abs(steps - np.floor(steps) - 0.5) == 0
    assert ties.mean() > 0.9  # (almost) every value is exactly a tie in float32
    given = api.user_inputs(g, [x])
    codes = samples.to_file(t, samples.port(g, g.inputs[0]), given.arrays[0])
    even = np.clip(np.rint(steps) + zp, -128, 127)
    away = np.clip(np.sign(steps) * np.floor(np.abs(steps) + 0.5) + zp, -128, 127)
    assert np.array_equal(codes.reshape(even.shape), even)
    assert np.count_nonzero(even != away) > 0.3 * even.size
    r = api.compare(path, inputs=given)
    assert r.ok, str(r)


def test_cli_run_nchw_inputs_and_outputs(pt_models: dict[str, Path], tmp_path: Path) -> None:
    """`run --inputs` takes the user's NCHW floats of a [2, 6, 12] input and `--outputs` gives
    the model's own output shape back, equal to the reference."""
    path = pt_models["pt_mlp_qdq_u8w"]
    x = np.random.default_rng(2).normal(0, 1, (5, 2, 6, 12)).astype(np.float32)
    d, y = run_with_inputs(path, x, tmp_path)
    assert d["bit_exact"] and d["samples"] == 5, d
    assert y.shape == (5, 2, 6, 5) and y.dtype == np.uint8
    g = api.plan(path).graph
    ref = api.compare(path, inputs=api.user_inputs(g, [x])).reference_outputs[0]
    assert np.array_equal(y, samples.to_user(g, g.outputs[0], ref))


@pytest.mark.parametrize(
    "op, attrs",
    [
        ("HardSwish", {}),
        ("HardSigmoid", {"alpha": 0.25, "beta": 0.4}),
        ("LeakyRelu", {"alpha": 0.3}),
    ],  # fmt: skip
)
def test_float_functions_every_value(tmp_path: Path, op: str, attrs: dict) -> None:
    """DQ -> HardSwish / HardSigmoid / LeakyRelu -> Q over all 256 input values: the table
    equals the reference, and onnxruntime agrees."""
    from tests.onnxgen.pytorch_style import qdq_unary

    path = tmp_path / f"{op}.onnx"
    onnx.save(qdq_unary(op, **attrs), path)
    assert [o.kind for o in api.plan(path).graph.ops] == ["ONNX_REQUANT"]
    r = api.compare(path, inputs=[np.arange(-128, 128, dtype=np.int8).reshape(4, 64)])
    assert r.ok and r.second_opinion is not None and not r.second_opinion["mismatches"], str(r)
    assert len(np.unique(r.result.outputs[0])) > 20


def test_layers_without_a_twin_are_reported(pt_models: dict[str, Path]) -> None:
    """Tensors the frontend adds (the rescaled inputs of a Concat, a move's result before the
    requantization its QuantizeLinear asks for) have no twin in the file: the report lists them
    as not compared instead of leaving them out in silence."""
    path = pt_models["pt_moves_qdq_i8"]
    p = api.plan(path)
    r = api.compare(path, inputs=nchw_inputs(path, 4))
    skipped = [la for la in r.layers if not la["compared"]]
    assert r.ok and "ONNX_REQUANT" in {la["kind"] for la in skipped}, str(r)
    assert all("/" in p.graph.t(la["tensor"]).name for la in skipped)  # names the frontend made
    assert len(r.layers) == len(p.order)
    assert f"{len(skipped)} layer(s) not compared, no twin in the model file" in str(r)


def test_qgemm_scalar_bias(pt_models: dict[str, Path], tmp_path: Path) -> None:
    """A QGemm whose bias is one value for every column (the spec allows C to broadcast)."""
    m = onnx.load(pt_models["pt_mlp_qop_u8w"])
    gemm = next(n for n in m.graph.node if n.op_type == "QGemm")
    init = next(t for t in m.graph.initializer if t.name == gemm.input[6])
    first = onnx.numpy_helper.to_array(init).reshape(-1)[:1].reshape(())
    init.CopyFrom(onnx.numpy_helper.from_array(first.astype(np.int32), init.name))
    path = tmp_path / "scalar_bias.onnx"
    onnx.save(m, path)
    g = api.plan(path).graph
    bias = next(t for t in g.tensors if t.name.endswith("/bias"))
    assert bias.shape[0] > 1 and len(set(bias.data.tolist())) == 1
    r = api.compare(path, inputs=nchw_inputs(path, 6))
    assert r.ok and not r.second_opinion["mismatches"], str(r)
