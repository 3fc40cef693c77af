"""AVERAGE_POOL_2D and MAX_POOL_2D: bit-exact against TFLM through the whole pipeline, plus
IR-level checks of what the lowering rejects.

Models come from ``python -m tests.modelgen.ops_pool``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph
from tinycompile.ops import decode
from tinycompile.pipeline import lower_graph as lower
from tinycompile.run.reference import run_tflm

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
MODELS = sorted(OPS_DIR.glob("pool_*.tflite"))


def _graph(name: str) -> Graph:
    p = OPS_DIR / f"{name}.tflite"
    g = read_tflite(p.read_bytes(), source=str(p))
    decode(g)  # typed attrs, as every stage after the frontend sees them
    return g


def test_models_cover_options() -> None:
    assert len(MODELS) >= 8, "run python -m tests.modelgen.ops_pool"
    seen = set()
    for p in MODELS:
        g = _graph(p.stem)
        for op in g.ops:
            a = op.attrs
            seen.add((op.kind, a["padding"]))
            seen.add((op.kind, a["activation"]))
            if a["stride"][0] != a["stride"][1] or a["filter"][0] != a["filter"][1]:
                seen.add((op.kind, "asym"))
    for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for what in ("SAME", "VALID", "NONE", "RELU", "RELU6", "RELU_N1_TO_1", "asym"):
            assert (kind, what) in seen, (kind, what)


def test_average_rounds_half_away_from_zero(tmp_path: Path) -> None:
    """Inputs whose 2x2 window sums end in exactly half a step, both signs, through our C."""
    path = OPS_DIR / "pool_avg_2x2_s2.tflite"
    p = api.plan(path)
    shape = p.graph.t(p.graph.inputs[0]).shape
    x = np.zeros((2, *shape[1:]), np.int8)
    x[0, 0::2, 0::2, :] = 3  # every window sums 3 - 1 + 0 + 0 = 2: 2 / 4 rounds to 1
    x[0, 0::2, 1::2, :] = -1
    x[1, 0::2, 0::2, :] = -3  # every window sums -2: -2 / 4 rounds to -1
    x[1, 0::2, 1::2, :] = 1
    res = api.run_host(p, api.generate(p, tmp_path / "proj"), [x])
    out = res.outputs[0]
    assert np.all(out[0] == 1) and np.all(out[1] == -1), out[:, 0, 0]
    np.testing.assert_array_equal(out, run_tflm(path, [x], n_outputs=1).outputs[0])


def test_macs() -> None:
    low = lower(_graph("pool_avg_3x3_s1_same"))
    assert [lo.macs for lo in low.ops] == [7 * 9 * 5 * 9]


def _reject(name: str, mutate: Callable[[Graph], None], match: str) -> None:
    g = copy.deepcopy(_graph(name))
    mutate(g)
    with pytest.raises(CompileError, match=match):
        lower(g)


def test_rejects_requantizing_pool() -> None:
    def m(g: Graph) -> None:
        q = g.t(g.ops[0].outputs[0]).quant
        q.scale = q.scale * np.float32(2.0)

    _reject("pool_max_2x2_s2", m, "quantization differ")


def test_rejects_int16() -> None:
    def m(g: Graph) -> None:
        g.t(g.ops[0].inputs[0]).dtype = "int16"
        g.t(g.ops[0].outputs[0]).dtype = "int16"

    _reject("pool_avg_2x2_s2", m, "int16")


def test_rejects_unsupported_activation() -> None:
    def m(g: Graph) -> None:
        g.ops[0].attrs["activation"] = "SIGN_BIT"

    _reject("pool_max_2x2_s2", m, "SIGN_BIT")


def test_rejects_bad_geometry() -> None:
    def m(g: Graph) -> None:
        g.ops[0].attrs["stride"] = (0, 2)

    _reject("pool_avg_2x2_s2", m, "positive")
