"""LOG_SOFTMAX: the models hold what the generator meant, a Python model of the device kernel
(the compile-time tables plus the per-row fixed-point steps) matches TFLM over a range of input
scales, the C kernel matches TFLM on patched scales, and refusals.

Models come from ``python -m tests.modelgen.ops_reduce_idx``; every one is also compared with
TFLM, layer by layer, in test_ops_registry.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from modelgen.ops_elementwise import patch_quant

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode
from tinycompile.ops.log_softmax import log_softmax_params, log_softmax_tables
from tinycompile.pipeline import lower_graph as lower
from tinycompile.quant import fixedpoint as fp
from tinycompile.run.reference import run_tflm

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
NAMES = ["vec", "rows", "wide", "deep", "classifier"]


def _graph(name: str) -> Graph:
    path = OPS_DIR / f"{name}.tflite"
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)
    return g


def log_softmax_rows(x: np.ndarray, in_scale: float) -> np.ndarray:
    """Python model of tc_log_softmax_s8 (rows along the last axis)."""
    mult, shift, rev_mult, rev_shift, diff_min = log_softmax_params(in_scale)
    exp_t, diff_t = log_softmax_tables(in_scale)
    flat = np.asarray(x, np.int8).reshape(-1, x.shape[-1]).astype(np.int64)
    y = np.empty(flat.shape, np.int8)
    for r, row in enumerate(flat):
        mx = int(row.max())
        total = 0
        for v in row:
            total = fp.wrap32(total + int(exp_t[mx - int(v)]))
        log_sum = fp.log_x_for_x_greater_than_or_equal_to_1(total, 12, 5)
        lo = fp.mul_by_quantized_multiplier(fp.wrap32(log_sum - 2**31), rev_mult, rev_shift)
        adjusted = max(diff_min - 1, lo)
        for c, v in enumerate(row):
            d = mx - int(v)
            if -d > adjusted:
                o = fp.rounding_divide_by_pot(fp.wrap32(int(diff_t[d]) - log_sum), 22) + 127
                y[r, c] = max(-128, min(127, o))
            else:
                y[r, c] = -128
    return y.reshape(x.shape)


def _patched(name: str, scale: float, folder: Path) -> Path:
    """The model with its LOG_SOFTMAX input rescaled (a graph input, so no other op changes)."""
    src = OPS_DIR / f"{name}.tflite"
    g = _graph(name)
    tid = g.ops[0].inputs[0]
    assert tid in g.inputs
    path = folder / f"{name}_s{scale:g}.tflite"
    path.write_bytes(patch_quant(src.read_bytes(), tid, scale, g.t(tid).quant.zp))
    return path


def _inputs(shape: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    """Uniform codes, plus rows of a few values (ties, equal rows) and extreme rows."""
    rng = np.random.default_rng(seed)
    xs = rng.integers(-128, 128, size=(n, *shape), dtype=np.int8)
    xs[: n // 4] = rng.choice(np.array([-128, -3, 0, 127], np.int8), size=(n // 4, *shape))
    xs[n // 4] = 5
    xs[n // 4 + 1] = -128
    xs[n // 4 + 1, ..., 0] = 127
    return xs


def test_models_cover_the_paths() -> None:
    for n in NAMES:
        g = _graph(f"log_softmax_{n}")
        op = [op for op in g.ops if op.kind == "LOG_SOFTMAX"]
        assert len(op) == 1
        o = g.t(op[0].outputs[0])
        assert o.quant.zp == 127 and o.quant.scale[0] == np.float32(1 / 16)
    g = _graph("log_softmax_wide")  # differences below diff_min occur
    assert log_softmax_params(g.t(g.inputs[0]).quant.s)[4] > -255
    assert _graph("log_softmax_rows").t(0).shape[:-1] != (1,)


def test_log_is_close_to_the_real_thing() -> None:
    for v in (1.0, 1.25, 2.0, 3.0, 7.5, 100.0, 1234.5, 4095.0):
        y = fp.log_x_for_x_greater_than_or_equal_to_1(int(v * 2**19), 12, 5) / 2**26
        assert abs(y - math.log(v)) < 1e-6


@pytest.mark.parametrize("scale", [0.0005, 0.01, 0.0625, 0.2, 1.0, 6.0, 100.0])
def test_python_model_matches_tflm(scale: float, tmp_path: Path) -> None:
    """The tables and the per-row arithmetic against TFLM over a range of input scales (no C)."""
    for name in ("log_softmax_vec", "log_softmax_deep"):
        path = _patched(name, scale, tmp_path)
        g = read_tflite(path.read_bytes())
        shape = g.t(g.inputs[0]).shape
        xs = _inputs(tuple(shape[1:]), 40, seed=int(scale * 1000) % 97)
        ref = run_tflm(path, [xs]).outputs[0]
        mine = log_softmax_rows(xs, g.t(g.inputs[0]).quant.s)
        assert np.array_equal(mine.reshape(ref.shape), ref), (name, scale)


@pytest.mark.parametrize("scale", [0.004, 0.5, 20.0])
def test_kernel_matches_tflm_on_other_scales(scale: float, tmp_path: Path) -> None:
    path = _patched("log_softmax_rows", scale, tmp_path)
    shape = read_tflite(path.read_bytes()).t(0).shape
    r = api.compare(path, inputs=[_inputs(tuple(shape[1:]), 24, seed=3)])
    assert r.ok, str(r)


def _ls_graph(shape=(1, 6), out_shape=None, out_q=(1 / 16, 127), dtype="int8") -> Graph:
    def q(s, z):
        return Quant(np.array([s], np.float32), np.array([z], np.int64))

    ts = [
        Tensor(0, "x", shape, dtype, q(0.05, 3)),
        Tensor(1, "y", out_shape or shape, dtype, q(*out_q)),
    ]
    return Graph("g", ts, [Op(0, "LOG_SOFTMAX", [0], [1], {})], [0], [1])


def test_lowers_to_the_kernel() -> None:
    low = lower(_ls_graph((2, 3, 5)))
    assert low.ops[0].stmt.startswith("tc_log_softmax_s8(")


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"out_q": (1 / 256, -128)}, "scale 16/256 and zero point 127"),
        ({"out_q": (1 / 16, 0)}, "scale 16/256 and zero point 127"),
        ({"out_shape": (2, 3)}, "differ"),
        ({"dtype": "int16"}, "int16"),
    ],
)
def test_refusals(kw: dict, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(_ls_graph(**kw))


def test_refuses_a_tiny_input_scale() -> None:
    g = _ls_graph()
    g.t(0).quant = Quant(np.array([1e-9], np.float32), np.array([0], np.int64))
    with pytest.raises(CompileError, match="too small"):
        lower(g)
