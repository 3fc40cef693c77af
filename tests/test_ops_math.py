"""SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, RSQRT, LOG_SOFTMAX, L2_NORMALIZATION,
ARG_MAX, ARG_MIN: the models hold what the generator meant, and IR-level refusals.

Models come from ``python -m tests.modelgen.ops_math``; every one is compared with TFLM, layer
by layer, in test_ops_registry.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"


def _graph(name: str) -> Graph:
    path = OPS_DIR / f"{name}.tflite"
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)
    return g


def _models(prefix: str) -> list[str]:
    return sorted(p.stem for p in OPS_DIR.glob(f"{prefix}_*.tflite"))


def _t(tid: int, shape: tuple[int, ...], dtype: str = "int8", q=(0.05, 3), data=None) -> Tensor:
    quant = None if q is None else Quant(np.array([q[0]], np.float32), np.array([q[1]], np.int64))
    return Tensor(tid, f"t{tid}", shape, dtype, quant, data)


def _binary_graph(kind: str, sa, sb, so, *, dtype: str = "int8", act: str = "NONE") -> Graph:
    ts = [_t(0, sa, dtype), _t(1, sb, dtype), _t(2, so, dtype)]
    op = Op(0, kind, [0, 1], [2], {"activation": act})
    return Graph("g", ts, [op], [0, 1], [2])


# ------------------------------------------------------------------ SUB


def test_sub_models_cover_the_paths() -> None:
    names = _models("sub")
    assert {"sub_same", "sub_first_bcast", "sub_rank5", "sub_const_relu"} <= set(names)
    acts = set()
    for n in names:
        g = _graph(n)
        assert [op.kind for op in g.ops] == ["SUB"]
        acts.add(g.ops[0].attrs["activation"])
    assert {"NONE", "RELU", "RELU6"} <= acts
    g = _graph("sub_first_bcast")
    a, b = (g.t(t) for t in g.ops[0].inputs)
    assert a.size < b.size


@pytest.mark.parametrize(
    "sa,sb,so,dtype,act,msg",
    [
        ((1, 2, 3), (1, 4, 3), (1, 4, 3), "int8", "NONE", "broadcast"),
        ((1, 2, 3), (1, 2, 3), (1, 2, 3), "int16", "NONE", "int16"),
        ((1, 2, 3), (1, 2, 3), (1, 2, 3), "int8", "TANH", "TANH"),
    ],
)
def test_sub_refuses(sa, sb, so, dtype: str, act: str, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(_binary_graph("SUB", sa, sb, so, dtype=dtype, act=act))


def test_sub_refuses_out_of_range_rescale() -> None:
    g = _binary_graph("SUB", (1, 4), (1, 4), (1, 4))
    g.t(2).quant = Quant(np.array([1e-9], np.float32), np.array([0], np.int64))
    with pytest.raises(CompileError, match="rescale"):
        lower(g)


def test_sub_lowers_to_its_kernel() -> None:
    low = lower(_binary_graph("SUB", (1, 2, 3), (3,), (1, 2, 3)))
    assert low.ops[0].stmt.startswith("tc_sub_s8(")


# ------------------------------------------------ MAXIMUM, MINIMUM, SQUARED_DIFFERENCE


def test_minmax_sqdiff_models_present() -> None:
    for prefix, kind in (
        ("maximum", "MAXIMUM"),
        ("minimum", "MINIMUM"),
        ("sqdiff", "SQUARED_DIFFERENCE"),
    ):
        names = _models(prefix)
        assert len(names) >= 3, f"run python -m tests.modelgen.ops_math ({prefix}_* missing)"
        for n in names:
            assert [op.kind for op in _graph(n).ops] == [kind]
    g = _graph("maximum_const")
    assert any(g.t(t).is_const for t in g.ops[0].inputs)
    assert len(_graph("minimum_rank5").t(0).shape) == 5


@pytest.mark.parametrize(
    "kind,fn",
    [
        ("MAXIMUM", "tc_maximum_s8("),
        ("MINIMUM", "tc_minimum_s8("),
        ("SQUARED_DIFFERENCE", "tc_squared_difference_s8("),
    ],
)
def test_binary_lowers_to_its_kernel(kind: str, fn: str) -> None:
    low = lower(_binary_graph(kind, (1, 2, 3), (3,), (1, 2, 3)))
    assert low.ops[0].stmt.startswith(fn)
    assert low.ops[0].macs == 6


@pytest.mark.parametrize(
    "kind,sa,sb,msg",
    [
        ("MAXIMUM", (2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2), "above rank 5"),
        ("MINIMUM", (1, 2, 3), (1, 4, 3), "broadcast"),
        ("SQUARED_DIFFERENCE", (2, 1, 2, 1, 2), (1, 2, 1, 2, 1), "above rank 4"),
    ],
)
def test_binary_refuses(kind: str, sa, sb, msg: str) -> None:
    so = tuple(np.broadcast_shapes(sa, sb)) if msg != "broadcast" else sb
    with pytest.raises(CompileError, match=msg):
        lower(_binary_graph(kind, sa, sb, so))


def test_same_shape_rank6_is_not_broadcast() -> None:
    s = (1, 2, 1, 2, 1, 2)
    assert lower(_binary_graph("MAXIMUM", s, s, s)).ops[0].macs == 8


@pytest.mark.parametrize("kind", ["MAXIMUM", "SQUARED_DIFFERENCE"])
def test_binary_refuses_int16(kind: str) -> None:
    with pytest.raises(CompileError, match="int16"):
        lower(_binary_graph(kind, (1, 3), (1, 3), (1, 3), dtype="int16"))


# ------------------------------------------------------------------ PRELU


def test_prelu_models_cover_the_paths() -> None:
    shapes = {}
    for n in _models("prelu"):
        g = _graph(n)
        assert [op.kind for op in g.ops] == ["PRELU"]
        x, alpha = (g.t(t) for t in g.ops[0].inputs)
        assert alpha.is_const
        shapes[n] = (x.size, alpha.size)
    assert shapes["prelu_channel"][1] < shapes["prelu_channel"][0]  # broadcast alpha
    assert shapes["prelu_full"][1] == shapes["prelu_full"][0]
    g = _graph("prelu_full")
    assert (g.t(g.ops[0].inputs[1]).data < 0).any()  # some negative slopes


def test_prelu_lowers_and_refuses_rank5() -> None:
    low = lower(_binary_graph("PRELU", (1, 2, 3), (3,), (1, 2, 3)))
    assert low.ops[0].stmt.startswith("tc_prelu_s8(")
    with pytest.raises(CompileError, match="rank above 4"):
        lower(_binary_graph("PRELU", (1, 1, 2, 2, 3), (3,), (1, 1, 2, 2, 3)))


def test_prelu_refuses_per_channel_alpha() -> None:
    g = _binary_graph("PRELU", (1, 2, 3), (3,), (1, 2, 3))
    g.t(1).quant = Quant(np.array([0.1, 0.2, 0.3], np.float32), np.zeros(3, np.int64))
    with pytest.raises(CompileError, match="per channel"):
        lower(g)


# ------------------------------------------------------------------ RSQRT


def _tflm_on_all_int8(name: str) -> tuple[Graph, np.ndarray, np.ndarray]:
    """Run TFLM on every int8 input value of a one-input model: (graph, inputs, outputs)."""
    from tflite_micro.python.tflite_micro import runtime

    g = _graph(name)
    t = g.t(g.inputs[0])
    vals = np.arange(-128, 128, dtype=np.int8)
    xs, ys = [], []
    for k in range(0, 256, t.size):
        x = np.resize(np.roll(vals, -k), t.size).astype(np.int8)
        it = runtime.Interpreter.from_file(str(OPS_DIR / f"{name}.tflite"))
        it.set_input(x.reshape(t.shape), 0)
        it.invoke()
        xs.append(x)
        ys.append(it.get_output(0).ravel())
    return g, np.concatenate(xs), np.concatenate(ys)


@pytest.mark.parametrize("name", ["rsqrt_a", "rsqrt_b"])
def test_rsqrt_table_matches_tflm_on_every_input(name: str) -> None:
    from tinycompile.ops.rsqrt import rsqrt_lut

    g, x, y = _tflm_on_all_int8(name)
    i, o = g.t(g.ops[0].inputs[0]), g.t(g.ops[0].outputs[0])
    assert i.quant.zp == -128  # every input is >= 0 in real terms: TFLM accepts all of them
    lut = rsqrt_lut(i.quant.s, i.quant.zp, o.quant.s, o.quant.zp)
    assert np.array_equal(lut[x.view(np.uint8)], y)
    assert len(np.unique(lut)) > 60  # alive


def test_rsqrt_lowers_to_the_lut_kernel() -> None:
    ts = [_t(0, (1, 5), q=(0.05, -128)), _t(1, (1, 5), q=(0.02, -128))]
    g = Graph("g", ts, [Op(0, "RSQRT", [0], [1], {})], [0], [1])
    lo = lower(g).ops[0]
    assert lo.stmt.startswith("tc_lut_s8(") and lo.refusal is None  # no input is negative
    g.t(0).quant = Quant(np.array([0.05], np.float32), np.array([3], np.int64))
    lo = lower(g).ops[0]  # inputs below 3 are negative: TFLM fails Invoke on them
    assert lo.stmt.startswith("tc_lut_checked_s8(") and lo.refusal == "negative value"
    g.t(1).dtype = "int16"
    with pytest.raises(CompileError, match="int16"):
        lower(g)


# ------------------------------------------------------------------ L2_NORMALIZATION


def _unary_graph(kind: str, shape, out_q=(1 / 128, 0), act: str = "NONE") -> Graph:
    ts = [_t(0, shape), _t(1, shape, q=out_q)]
    return Graph("g", ts, [Op(0, kind, [0], [1], {"activation": act})], [0], [1])


def test_l2norm_models_present() -> None:
    depths = set()
    for n in _models("l2norm"):
        g = _graph(n)
        assert [op.kind for op in g.ops] == ["L2_NORMALIZATION"]
        depths.add(g.t(g.inputs[0]).shape[-1])
    assert {3, 13, 40} <= depths


def test_l2norm_lowers_and_refuses() -> None:
    assert lower(_unary_graph("L2_NORMALIZATION", (1, 7))).ops[0].stmt.startswith("tc_l2norm_s8(")
    with pytest.raises(CompileError, match="scale 1/128"):
        lower(_unary_graph("L2_NORMALIZATION", (1, 7), out_q=(0.01, 0)))
    with pytest.raises(CompileError, match="rank 1 to 4"):
        lower(_unary_graph("L2_NORMALIZATION", (1, 1, 1, 2, 7)))
    with pytest.raises(CompileError, match="RELU"):
        lower(_unary_graph("L2_NORMALIZATION", (1, 7), act="RELU"))


def test_inv_sqrt_is_close_to_the_real_thing() -> None:
    from tinycompile.quant.fixedpoint import inv_sqrt_multiplier_exp

    for x in (2, 3, 17, 1000, 65025, 2**29 + 5, 2**31 - 1):
        m, s = inv_sqrt_multiplier_exp(x, -1)
        assert abs(m * 2.0 ** (s - 31) * np.sqrt(x) - 1.0) < 1e-5
