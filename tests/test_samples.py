"""What a sample is (tinycompile/run/samples.py), on made-up tensors of rank 0 to 6: IR batches,
the file's view (ONNX's NCHW and uint8 interfaces), what users may give, and the two roundings
of float inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.ir import Graph, Port, Quant, Tensor
from tinycompile.run import samples
from tinycompile.run.inputs import make_inputs, user_inputs

SHAPES = [(), (5,), (1, 5), (2, 3), (1, 4, 3, 2), (2, 3, 4), (3, 1, 2, 2, 1), (1, 2, 1, 3, 1, 2)]


def _graph(shape: tuple[int, ...], port: Port | None = None, dtype: str = "int8") -> Graph:
    q = Quant(np.array([0.5], np.float32), np.array([3]))
    t = Tensor(0, "x", shape, dtype, q)
    g = Graph("g", [t], [], [0], [0])
    if port is not None:
        g.ports[0] = port
    return g


@pytest.mark.parametrize("shape", SHAPES)
def test_ir_batches_round_trip(shape: tuple[int, ...]) -> None:
    """n samples -> an IR batch -> the same samples, for every rank; counts are exact."""
    t = _graph(shape).t(0)
    rng = np.random.default_rng(len(shape))
    xs = [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(4)]
    b = samples.stack(t, xs)
    assert b.shape == samples.batch_shape(t, 4)
    assert samples.count(t, b) == 4
    for i, x in enumerate(xs):
        assert np.array_equal(samples.sample(t, b, i), x)
    assert samples.stack(t, []).shape == samples.batch_shape(t, 0)
    if shape and shape[0] > 1:
        with pytest.raises(CompileError, match="no whole number of samples"):
            samples.count(t, b[:-1])


@pytest.mark.parametrize("shape", SHAPES)
def test_user_inputs_one_sample_or_a_batch(shape: tuple[int, ...]) -> None:
    """A user gives one sample in the file's shape or (N, *shape); random inputs have the same
    IR batch shape as converted user inputs of the same count."""
    g = _graph(shape)
    t = g.t(0)
    one = np.arange(t.size, dtype=np.int8).reshape(shape)
    r = user_inputs(g, [one])
    assert r.arrays[0].shape == samples.batch_shape(t, 1)
    assert np.array_equal(samples.sample(t, r.arrays[0], 0), one)
    batch = np.stack([one, one + 1, one + 2])
    r = user_inputs(g, [batch])
    assert samples.count(t, r.arrays[0]) == 3
    assert np.array_equal(samples.sample(t, r.arrays[0], 2), one + 2)
    assert make_inputs(g, 3)[0].shape == r.arrays[0].shape
    with pytest.raises(CompileError, match="wants shape"):
        user_inputs(g, [np.zeros((3, *shape, 2), np.int8)])


def test_leading_one_is_the_batch_axis() -> None:
    """For a file shape [1, ...] the leading 1 is the batch axis: [N, ...] is N samples, and
    one sample may come without it; outputs go back the same way."""
    g = _graph((1, 4, 3, 2))
    x = np.arange(5 * 24, dtype=np.int64).reshape(5, 4, 3, 2) % 100
    r = user_inputs(g, [x.astype(np.int8)])
    assert samples.count(g.t(0), r.arrays[0]) == 5
    assert samples.to_user(g, 0, r.arrays[0]).shape == (5, 4, 3, 2)
    assert user_inputs(g, [x[0].astype(np.int8)]).arrays[0].shape == (1, 4, 3, 2)


def test_nchw_and_uint8_file_view() -> None:
    """An ONNX input [1, C, H, W] of uint8 is given as NCHW uint8 and held as NHWC int8 minus
    128; outputs come back as the file shows them."""
    port = Port((1, 3, 4, 5), "uint8", "uint8", perm=(0, 2, 3, 1), offset=-128,
                rounding="half_even")  # fmt: skip
    g = _graph((1, 4, 5, 3), port)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (2, 3, 4, 5)).astype(np.uint8)
    ir = user_inputs(g, [x]).arrays[0]
    assert ir.shape == (2, 4, 5, 3) and ir.dtype == np.int8
    assert np.array_equal(ir, (x.transpose(0, 2, 3, 1).astype(int) - 128).astype(np.int8))
    back = samples.to_user(g, 0, ir)
    assert back.dtype == np.uint8 and np.array_equal(back, x)
    bad = x.astype(np.int64)
    bad[0, 0, 0, 0] = -1
    with pytest.raises(CompileError, match=r"wants uint8 data; int64 values reach \[-1"):
        user_inputs(g, [bad])


def test_rank6_nchw_free_port() -> None:
    """A rank-6 input whose first dimension is not a batch: one sample of [2, ...] or N of
    them on a new axis."""
    shape = (2, 1, 3, 1, 2, 2)
    g = _graph(shape, Port(shape, "int8", "int8", rounding="half_even"))
    x = np.arange(3 * 24, dtype=np.int8).reshape(3, *shape)
    r = user_inputs(g, [x])
    assert r.arrays[0].shape == (6, 1, 3, 1, 2, 2)
    assert np.array_equal(samples.to_user(g, 0, r.arrays[0]), x)


def test_float_inputs_round_as_the_file_does() -> None:
    """.5 steps: TFLite's QUANTIZE rounds half away from zero, ONNX's QuantizeLinear half to
    even (scale 0.5, zero point 3: 0.25 -> 0.5 steps)."""
    x = np.array([[0.25, 0.75, -0.25, -0.75, 1.25]], np.float32)
    tfl = _graph((1, 5))
    onnx_port = Port((1, 5), "float32", "int8", rounding="half_even")
    onx = _graph((1, 5), onnx_port)
    away = user_inputs(tfl, [x]).arrays[0]
    even = user_inputs(onx, [x]).arrays[0]
    assert away.tolist() == [[4, 5, 2, 1, 6]]  # 0.5 -> 1, 1.5 -> 2, -0.5 -> -1, ...
    assert even.tolist() == [[3, 5, 3, 1, 5]]  # 0.5 -> 0, 1.5 -> 2, -0.5 -> 0, 2.5 -> 2
    r = user_inputs(onx, [x])
    assert r.model[0].dtype == np.float32 and np.array_equal(r.model[0], x[None])
    assert "half to even" in r.notes[0]


def test_cli_inputs_whose_first_dimension_is_no_batch(tmp_path) -> None:
    """TFLite models whose input's first dimension is not a batch of 1 (an LSTM on [2, 4, 5],
    ARG_MAX over axis 0 of [3, 7]): `run --inputs` takes one sample in the model's shape or N
    of them on a new axis, `--outputs` gives (N, *output shape), and both equal TFLM."""
    from conftest import ROOT, run_with_inputs

    from tinycompile.run.reference import run_tflm

    for name, n in (("lstm_batch2", 3), ("argmax_axis0", 1)):
        model = ROOT / "tests" / "models" / "ops" / f"{name}.tflite"
        g = api.plan(model).graph
        t = g.t(g.inputs[0])
        x = np.random.default_rng(4).integers(-128, 128, (n, *t.shape)).astype(np.int8)
        d, y = run_with_inputs(model, x if n > 1 else x[0], tmp_path)
        assert d["bit_exact"] and d["samples"] == n, d
        assert y.shape == samples.file_batch_shape(samples.port(g, g.outputs[0]), n)
        ref = run_tflm(model, [samples.stack(t, list(x))]).outputs[0]
        assert np.array_equal(y.reshape(-1), ref.reshape(-1)), name
