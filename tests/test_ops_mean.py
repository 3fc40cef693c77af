"""MEAN: the reduction loops against numpy, the options the models carry, and the refusals
(IR level). Compared with TFLM in test_ops_registry.py with every op model; models come from
``python -m tests.modelgen.ops_elementwise``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode
from tinycompile.ops.mean import mean_loops
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
MODELS = sorted(OPS_DIR.glob("mean_*.tflite"))


def _graph(path: Path) -> Graph:
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)
    return g


def _walk(dims: list[int], strides: list[int]) -> np.ndarray:
    """Offsets visited by a row-major loop nest with the given extents and strides."""
    offs = np.zeros(1, np.int64)
    for ext, st in zip(dims, strides, strict=True):
        offs = (offs[:, None] + np.arange(ext, dtype=np.int64)[None, :] * st).reshape(-1)
    return offs


def _t(tid: int, shape: tuple[int, ...], dtype: str = "int8", data=None) -> Tensor:
    q = Quant(np.array([0.05], np.float32), np.array([3], np.int64))
    return Tensor(tid, f"t{tid}", shape, dtype, q, data)


def test_models_carry_their_options() -> None:
    names = {p.stem for p in MODELS}
    assert {"mean_gap", "mean_gap_keep", "mean_eqquant"} <= names, (
        "run python -m tests.modelgen.ops_elementwise"
    )
    for p in MODELS:
        assert any(op.kind == "MEAN" for op in _graph(p).ops), p.stem
    g = _graph(OPS_DIR / "mean_eqquant.tflite")
    x, o = g.t(g.ops[0].inputs[0]), g.t(g.ops[0].outputs[0])
    assert (x.quant.s, x.quant.zp) == (o.quant.s, o.quant.zp)  # TFLM's equal-quantization case
    assert _graph(OPS_DIR / "mean_gap.tflite").ops[0].attrs["keep_dims"] is False
    assert _graph(OPS_DIR / "mean_gap_keep.tflite").ops[0].attrs["keep_dims"] is True


@pytest.mark.parametrize(
    "shape,axes",
    [
        ((1, 5, 5, 16), [1, 2]),
        ((1, 4, 3, 10), [3]),
        ((1, 4, 5, 6), [1, 3]),
        ((2, 3, 4), [0, 2]),
        ((2, 3, 4, 5, 2), [0, 1, 3]),
        ((3, 4), []),
        ((1, 1, 7), [2]),
    ],
)
def test_mean_loops_match_numpy(shape: tuple[int, ...], axes: list[int]) -> None:
    x = np.random.default_rng(0).integers(-128, 128, size=shape)
    flat = x.reshape(-1)
    kept, red, count = mean_loops(shape, axes)
    want = x.sum(axis=tuple(axes)).reshape(-1) if axes else flat
    kd = [k[0] for k in kept]
    base = _walk(kd, [k[1] for k in kept]) if kept else np.zeros(1, np.int64)
    inner = _walk([r[0] for r in red], [r[1] for r in red]) if red else np.zeros(1, np.int64)
    got = flat[base[:, None] + inner[None, :]].sum(axis=1)
    assert count == (int(np.prod([shape[a] for a in axes])) if axes else 1)
    assert np.array_equal(got, want)


def test_mean_refuses_runtime_axes() -> None:
    ts = [_t(0, (1, 4, 4, 3)), _t(1, (2,), "int32"), _t(2, (1, 3))]
    ts[1].quant = None
    g = Graph("g", ts, [Op(0, "MEAN", [0, 1], [2], {"keep_dims": False})], [0], [2])
    with pytest.raises(CompileError, match="axis tensor must be constant"):
        lower(g)
    ts[1].data = np.array([1, 2], np.int64)
    ts[1].dtype = "int64"
    with pytest.raises(CompileError, match="int64 axis"):
        lower(g)
    ts[1].data, ts[1].dtype = np.array([1, -2], np.int32), "int32"
    assert lower(g).ops[0].stmt.startswith("tc_mean_s8(")
    ts[2].shape = (1, 4)
    with pytest.raises(CompileError, match="does not match"):
        lower(g)
