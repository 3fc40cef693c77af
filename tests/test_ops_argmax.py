"""ARG_MAX and ARG_MIN: the models hold what the generator meant, ties go to the first index as
in TFLM, int32 indices travel as graph outputs, and what TFLM does not run is refused.

Models come from ``python -m tests.modelgen.ops_reduce_idx``; every one is also compared with
TFLM, layer by layer, in test_ops_registry.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor, problems
from tinycompile.ops import decode
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"


def _graph(name: str) -> Graph:
    path = OPS_DIR / f"{name}.tflite"
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)
    return g


def _arg_graph(
    kind: str = "ARG_MAX",
    shape=(1, 4, 5),
    axis=-1,
    out_shape=(1, 4),
    *,
    out_dtype: str = "int32",
    in_dtype: str = "int8",
    axis_dtype: str = "int32",
    axis_const: bool = True,
) -> Graph:
    q = Quant(np.array([0.05], np.float32), np.array([3], np.int64))
    data = np.array(axis, dtype=axis_dtype) if axis_const else None
    ts = [
        Tensor(0, "x", shape, in_dtype, q if in_dtype == "int8" else None),
        Tensor(1, "axis", (), axis_dtype, None, data),
        Tensor(2, "y", out_shape, out_dtype, None),
    ]
    inputs = [0] if axis_const else [0, 1]
    op = Op(0, kind, [0, 1], [2], {"output_type": out_dtype})
    return Graph("g", ts, [op], inputs, [2])


def test_models_cover_the_paths() -> None:
    kinds, axes = set(), set()
    for p in sorted(OPS_DIR.glob("arg*.tflite")):
        g = _graph(p.stem)
        for op in g.ops:
            if op.kind in ("ARG_MAX", "ARG_MIN"):
                kinds.add(op.kind)
                axes.add(int(g.t(op.inputs[1]).data.reshape(-1)[0]))
                assert g.t(op.outputs[0]).dtype == "int32"
    assert kinds == {"ARG_MAX", "ARG_MIN"}
    assert {-2, -1, 0, 1} <= axes
    g = _graph("argmax_classifier")  # classifier tail: the indices are the graph's output
    assert [op.kind for op in g.ops] == ["FULLY_CONNECTED", "FULLY_CONNECTED", "ARG_MAX"]
    assert g.t(g.outputs[0]).dtype == "int32"


@pytest.mark.parametrize("name", ["argmax_last", "argmin_last", "argmax_axis1_rank4"])
def test_ties_go_to_the_first_index_as_in_tflm(name: str) -> None:
    """Inputs from three values only: most rows hold ties; TFLM, numpy and the kernel agree."""
    path = OPS_DIR / f"{name}.tflite"
    g = _graph(name)
    x = g.t(g.inputs[0])
    rng = np.random.default_rng(7)
    xs = rng.choice(np.array([-5, 0, 7], np.int8), size=(16, *x.shape[1:]))
    xs[0] = 0  # a row of equal values: index 0
    r = api.compare(path, inputs=[xs])
    assert r.ok, str(r)
    axis = int(g.t(g.ops[0].inputs[1]).data) % len(x.shape)
    fn = np.argmax if g.ops[0].kind == "ARG_MAX" else np.argmin
    want = fn(xs.reshape(16, *x.shape[1:]), axis=axis).astype(np.int32)  # first occurrence
    assert np.array_equal(r.result.outputs[0].reshape(want.shape), want)
    assert not np.any(r.result.outputs[0][0])


def test_lowers_to_the_kernel() -> None:
    low = lower(_arg_graph("ARG_MIN", (2, 3, 4, 5), 1, (2, 4, 5)))
    assert low.ops[0].stmt.startswith("tc_argminmax_s8(")
    assert low.ops[0].macs == 120


@pytest.mark.parametrize(
    "kw,msg",
    [
        ({"out_dtype": "int64"}, "int64 output is not supported"),
        ({"axis_dtype": "int64"}, "constant int32"),
        ({"axis_const": False}, "constant int32"),
        ({"axis": 3}, "out of range"),
        ({"out_shape": (1, 5)}, r"output shape \[1, 5\] is not \[1, 4\]"),
        ({"in_dtype": "int16"}, "int16"),
    ],
)
def test_refusals(kw: dict, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(_arg_graph(**kw))


def test_int32_is_allowed_as_a_graph_output_only() -> None:
    assert not problems(_arg_graph())
    g = _arg_graph(out_dtype="int64")
    assert any("int64" in str(e) for e in problems(g))
    g = _arg_graph()
    g.inputs = [0, 2]  # an int32 graph input (and a tensor written twice)
    assert any("is int32" in str(e) for e in problems(g))
