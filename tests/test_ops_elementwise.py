"""ADD and MUL: bit-exact against TFLM through the whole pipeline, plus IR-level checks.

Models come from ``python -m tests.modelgen.ops_elementwise``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode
from tinycompile.ops.broadcast import broadcast_loops
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
KIND = {"add": "ADD", "mul": "MUL"}
MODELS = sorted(  # not ADD_N's add_n_* (tests/test_ops_arith.py)
    p for fam in KIND for p in OPS_DIR.glob(f"{fam}_*.tflite") if not p.stem.startswith("add_n_")
)


def _graph(path: Path) -> Graph:
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)  # typed attrs, as every stage after the frontend sees them
    return g


def test_models_present() -> None:
    names = {p.stem for p in MODELS}
    for want in ("add_same", "add_bcast_both", "add_rank5", "mul_bigmult"):
        assert want in names, f"run python -m tests.modelgen.ops_elementwise ({want} missing)"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_carries_its_kind(path: Path) -> None:
    """(Compared with TFLM in test_ops_registry.py, with every op model.)"""
    kinds = {op.kind for op in _graph(path).ops}
    assert KIND[path.stem.split("_")[0]] in kinds


def test_models_cover_the_paths() -> None:
    """The configurations the generator means to produce really are in the models."""

    def q(g: Graph, tid: int) -> tuple[float, int]:
        return g.t(tid).quant.s, g.t(tid).quant.zp

    g = _graph(OPS_DIR / "mul_bigmult.tflite")
    op = g.ops[0]
    (s1, _), (s2, _), (so, _) = q(g, op.inputs[0]), q(g, op.inputs[1]), q(g, op.outputs[0])
    assert s1 * s2 / so > 1.0  # positive output shift in MUL

    acts = {_graph(p).ops[0].attrs.get("activation") for p in MODELS if p.stem.startswith("add")}
    assert {"NONE", "RELU", "RELU6"} <= acts

    g = _graph(OPS_DIR / "add_first_bcast.tflite")
    a, b = (g.t(t) for t in g.ops[0].inputs)
    assert a.size < b.size  # the first operand is the broadcast one
    g = _graph(OPS_DIR / "add_const_relu.tflite")
    assert g.t(g.ops[0].inputs[1]).is_const


# ------------------------------------------------------------------ loop descriptions


def _walk(dims: list[int], strides: list[int]) -> np.ndarray:
    """Offsets visited by a row-major loop nest with the given extents and strides."""
    offs = np.zeros(1, np.int64)
    for ext, st in zip(dims, strides, strict=True):
        offs = (offs[:, None] + np.arange(ext, dtype=np.int64)[None, :] * st).reshape(-1)
    return offs


SHAPES = [
    ((1, 4, 4, 8), (1, 4, 4, 8)),
    ((1, 4, 4, 8), (8,)),
    ((1, 1, 1, 8), (1, 3, 3, 8)),
    ((1, 4, 1, 6), (1, 1, 5, 6)),
    ((2, 3, 4, 5, 6), (2, 1, 4, 1, 6)),
    ((3, 1, 5), (1, 4, 1)),
    ((1, 2, 1, 3, 1, 4), (2, 1, 2, 1, 3, 1)),
    ((5,), (1,)),
    ((), (2, 3)),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_broadcast_loops_match_numpy(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    o = np.broadcast_shapes(sa, sb)
    ia = np.broadcast_to(np.arange(int(np.prod(sa))).reshape(sa), o).reshape(-1)
    ib = np.broadcast_to(np.arange(int(np.prod(sb))).reshape(sb), o).reshape(-1)
    loops = broadcast_loops(sa, sb, o)
    if loops is None:
        n = int(np.prod(o))
        assert np.array_equal(ia, np.arange(n)) and np.array_equal(ib, np.arange(n))
        return
    dims, s1, s2 = loops
    assert len(dims) <= 6
    assert np.array_equal(_walk(dims, s1), ia)
    assert np.array_equal(_walk(dims, s2), ib)


# ------------------------------------------------------------------ refusals (IR level)


def _t(tid: int, shape: tuple[int, ...], dtype: str = "int8", data=None) -> Tensor:
    q = Quant(np.array([0.05], np.float32), np.array([3], np.int64))
    return Tensor(tid, f"t{tid}", shape, dtype, q, data)


def _binary_graph(kind: str, sa, sb, so, *, dtype: str = "int8", act: str = "NONE") -> Graph:
    ts = [_t(0, sa, dtype), _t(1, sb, dtype), _t(2, so, dtype)]
    op = Op(0, kind, [0, 1], [2], {"activation": act})
    return Graph("g", ts, [op], [0, 1], [2])


@pytest.mark.parametrize("kind", ["ADD", "MUL"])
def test_accepts_plain_binary(kind: str) -> None:
    low = lower(_binary_graph(kind, (1, 2, 3), (3,), (1, 2, 3)))
    assert low.ops[0].stmt.startswith(f"tc_{kind.lower()}_s8(")
    assert low.ops[0].macs == 6


@pytest.mark.parametrize("kind", ["ADD", "MUL"])
@pytest.mark.parametrize(
    "sa,sb,so,dtype,act,msg",
    [
        ((1, 2, 3), (1, 4, 3), (1, 4, 3), "int8", "NONE", "broadcast"),
        ((1, 2, 3), (1, 2, 3), (1, 2, 6), "int8", "NONE", "broadcast shape"),
        ((1, 2, 3), (1, 2, 3), (1, 2, 3), "int16", "NONE", "int16"),
        ((1, 2, 3), (1, 2, 3), (1, 2, 3), "int8", "TANH", "TANH"),
    ],
)
def test_refuses(kind: str, sa, sb, so, dtype: str, act: str, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(_binary_graph(kind, sa, sb, so, dtype=dtype, act=act))


def test_add_refuses_out_of_range_rescale() -> None:
    g = _binary_graph("ADD", (1, 4), (1, 4), (1, 4))
    g.t(2).quant = Quant(np.array([1e-9], np.float32), np.array([0], np.int64))
    with pytest.raises(CompileError, match="rescale"):
        lower(g)


def test_loops_bounded_for_all_rank6_patterns() -> None:
    """Any broadcast pattern up to rank 6 merges into at most 6 loops."""
    for pat in itertools.product([0, 1, 2], repeat=6):
        sa = tuple(1 if p == 1 else 2 for p in pat)
        sb = tuple(1 if p == 2 else 2 for p in pat)
        loops = broadcast_loops(sa, sb, np.broadcast_shapes(sa, sb))
        assert loops is None or len(loops[0]) <= 6
