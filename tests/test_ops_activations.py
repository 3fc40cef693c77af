"""Activations, softmax, quantize/dequantize: bit-exact against TensorFlow Lite Micro.

- every committed model of the family through the whole pipeline (``api.compare``: generated C
  built for the host vs TFLM, final outputs and every layer), with inputs chosen to hit every
  table entry (unary ops), ties and near-ties (softmax rows, float rounding);
- the compile-time tables and the Python softmax model directly against TFLM (no C involved),
  which localizes a failure to Python or C;
- the C kernels called directly (ctypes) on float rounding edge cases;
- ``check`` refusing what the kernels do not implement.
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tflite
from conftest import MODELS, ROOT

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import OPS, decode
from tinycompile.ops import tables as A
from tinycompile.run.reference import run_tflm

OPS_DIR = MODELS / "ops"
UNARY = sorted(p for p in OPS_DIR.glob("act_*.tflite") if p.stem != "act_chain")
UNARY.append(OPS_DIR / "quant_requant.tflite")
SOFTMAX = sorted(OPS_DIR.glob("softmax_*.tflite"))
FLOAT_IO = sorted(OPS_DIR.glob("quant_f32_*.tflite"))
ALL_INT8 = np.arange(-128, 128, dtype=np.int8)


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _leaky_alpha(path: Path) -> float:
    """LeakyReluOptions.alpha read straight from the flatbuffer (independent of the frontend)."""
    m = tflite.Model.GetRootAs(path.read_bytes(), 0)
    table = m.Subgraphs(0).Operators(0).BuiltinOptions()
    o = tflite.LeakyReluOptions()
    o.Init(table.Bytes, table.Pos)
    return float(o.Alpha())


def _table(path: Path, op: Op, g: Graph) -> np.ndarray:
    i, o = g.t(op.inputs[0]), g.t(op.outputs[0])
    a, b = (i.quant.s, i.quant.zp), (o.quant.s, o.quant.zp)
    if op.kind == "LOGISTIC":
        return A.logistic_lut(*a)
    if op.kind == "TANH":
        return A.tanh_lut(*a)
    if op.kind == "HARD_SWISH":
        return A.hard_swish_lut(*a, *b)
    if op.kind == "RELU":
        return A.relu_lut(*a, *b)
    if op.kind == "RELU6":
        return A.relu6_lut(*a)
    if op.kind == "LEAKY_RELU":
        return A.leaky_relu_lut(*a, *b, _leaky_alpha(path))
    assert op.kind == "QUANTIZE"
    return A.requantize_lut(*a, *b)


def _all_values(g: Graph) -> np.ndarray:
    """Two samples holding every int8 value (forward and reversed)."""
    shape = g.t(g.inputs[0]).shape
    assert int(np.prod(shape)) == 256
    return np.stack([ALL_INT8, ALL_INT8[::-1]]).reshape(2, *shape[1:])


def _softmax_inputs(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Rows of wide random values, narrow clusters (many exp terms count), ties, one-hots."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    rows = [rng.integers(-128, 128, size) for _ in range(6)]
    rows += [rng.integers(-6, 7, size) + int(rng.integers(-100, 100)) for _ in range(8)]
    rows += [rng.integers(-40, 1, size) + 127 for _ in range(2)]
    rows += [np.full(size, v) for v in (-128, 0, 127)]
    onehot = np.full(size, -128)
    onehot[size // 3] = 127
    rows.append(onehot)
    x = np.clip(np.stack(rows), -128, 127).astype(np.int8)
    return x.reshape(len(rows) * shape[0], *shape[1:])  # an IR batch of len(rows) samples


def _float_inputs(g: Graph, seed: int = 0) -> np.ndarray:
    """Floats at, next to and between rounding ties of the QUANTIZE scale, and out of range."""
    t = g.t(g.inputs[0])
    (q,) = [op for op in g.ops if op.kind == "QUANTIZE" and op.inputs[0] == t.id]
    s = np.float32(g.t(q.outputs[0]).quant.s)
    k = np.arange(-140, 141, dtype=np.float32)
    offsets = np.array([0.5, -0.5, 0.49999997, -0.49999997, 0.3, -0.7, 0.0], np.float32)
    vals = np.concatenate([(k + o) * s for o in offsets] + [np.float32([1e4, -1e4, -0.0, 0.0])])
    rng = np.random.default_rng(seed)
    n = -(-vals.size // t.size)
    pad = rng.uniform(-130 * s, 130 * s, n * t.size - vals.size).astype(np.float32)
    x = np.concatenate([vals.astype(np.float32), pad])
    return rng.permutation(x).reshape(n, *t.shape[1:])


# ------------------------------------------------------------------ the pipeline vs TFLM


@pytest.mark.parametrize("path", UNARY, ids=_ids(UNARY))
def test_compare_unary_all_values(path: Path) -> None:
    r = api.compare(path, inputs=[_all_values(load_model(path))])
    assert r.ok, str(r)


@pytest.mark.parametrize("path", SOFTMAX, ids=_ids(SOFTMAX))
def test_compare_softmax(path: Path) -> None:
    g = load_model(path)
    r = api.compare(path, inputs=[_softmax_inputs(g.t(g.inputs[0]).shape)])
    assert r.ok, str(r)


@pytest.mark.parametrize("path", FLOAT_IO, ids=_ids(FLOAT_IO))
def test_compare_float_quantize_dequantize(path: Path) -> None:
    r = api.compare(path, inputs=[_float_inputs(load_model(path))])
    assert r.ok, str(r)
    r = api.compare(path, n=10, seed=3)  # the API's own random floats
    assert r.ok, str(r)


def test_compare_chain_in_place() -> None:
    path = OPS_DIR / "act_chain.tflite"
    r = api.compare(path, n=20)
    assert r.ok, str(r)
    p = api.plan(path)
    assert any(p.offset(op.outputs[0]) == p.offset(op.inputs[0]) for op in p.graph.ops), (
        "no op of the chain ran in place, so in-place operation went untested"
    )


# ------------------------------------------------------------------ tables vs TFLM (no C)


@pytest.mark.parametrize("path", UNARY, ids=_ids(UNARY))
def test_tables_match_tflm(path: Path) -> None:
    g = load_model(path)
    (op,) = g.ops
    x = _all_values(g)
    ref = run_tflm(path, [x], n_outputs=1).outputs[0]
    lut = _table(path, op, g)
    mine = lut[x.view(np.uint8)]
    bad = np.nonzero(mine.reshape(-1) != ref.reshape(-1))[0]
    assert bad.size == 0, f"{op.kind}: {bad.size} entries differ, first at input {x.flat[bad[0]]}"


@pytest.mark.parametrize("path", SOFTMAX, ids=_ids(SOFTMAX))
def test_softmax_python_model_matches_tflm(path: Path) -> None:
    g = load_model(path)
    decode(g)
    (op,) = g.ops
    x = _softmax_inputs(g.t(op.inputs[0]).shape, seed=1)
    ref = run_tflm(path, [x], n_outputs=1).outputs[0]
    table = A.softmax_exp_table(g.t(op.inputs[0]).quant.s, op.attrs["beta"])
    bits = 16 if g.t(op.outputs[0]).dtype == "int16" else 8  # int8 -> int16 (keyword models)
    assert np.array_equal(A.softmax_rows(x, table, bits).reshape(ref.shape), ref)


# ------------------------------------------------------------------ C kernels directly


class _SoftmaxParams(ctypes.Structure):
    _fields_ = [
        ("rows", ctypes.c_uint32),
        ("depth", ctypes.c_uint32),
        ("exp_lut", ctypes.POINTER(ctypes.c_int32)),
    ]


class _QuantizeParams(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint32),
        ("scale_bits", ctypes.c_uint32),
        ("zero_point", ctypes.c_int32),
    ]


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    so = tmp_path_factory.mktemp("act") / "libtc_act.so"
    fw = ROOT / "firmware"
    cmd = ["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"]
    cmd += ["-I", str(fw / "include"), str(fw / "kernels" / "tc_activations.c"), "-o", str(so)]
    subprocess.run(cmd, check=True, capture_output=True)
    return ctypes.CDLL(str(so))


def _ptr(a: np.ndarray, ctype) -> ctypes.POINTER:
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def test_c_softmax_in_place_matches_tflm(kernels: ctypes.CDLL) -> None:
    path = OPS_DIR / "softmax_b.tflite"
    g = load_model(path)
    (op,) = g.ops
    shape = g.t(op.inputs[0]).shape
    x = _softmax_inputs(shape, seed=2)
    ref = run_tflm(path, [x], n_outputs=1).outputs[0]
    table = np.ascontiguousarray(A.softmax_exp_table(g.t(op.inputs[0]).quant.s, 1.0))
    depth = shape[-1]
    buf = np.ascontiguousarray(x.copy())
    p = _SoftmaxParams(buf.size // depth, depth, _ptr(table, ctypes.c_int32))
    kernels.tc_softmax_s8(ctypes.byref(p), _ptr(buf, ctypes.c_int8), _ptr(buf, ctypes.c_int8))
    assert np.array_equal(buf, ref)


def test_c_quantize_rounds_like_tflite(kernels: ctypes.CDLL) -> None:
    scale, zp = np.float32(0.0371), -7
    k = np.arange(-200, 200, dtype=np.float32)
    x = np.concatenate(
        [(k + o) * scale for o in np.float32([0.5, -0.5, 0.49999997, -0.49999997, 0.25])]
        + [np.float32([1e6, -1e6, 0.0, -0.0])]
    ).astype(np.float32)
    # TFLite: zero_point + std::round(x / scale) with a float32 division, then saturate.
    q = (x / scale).astype(np.float64)
    expect = np.clip(np.sign(q) * np.floor(np.abs(q) + 0.5) + zp, -128, 127).astype(np.int8)
    bits = int(np.float32(scale).view(np.uint32))
    p = _QuantizeParams(x.size, bits, zp)
    out = np.zeros(x.size, np.int8)
    kernels.tc_quantize_f32_s8(ctypes.byref(p), _ptr(x, ctypes.c_float), _ptr(out, ctypes.c_int8))
    assert np.array_equal(out, expect)


# ------------------------------------------------------------------ checks


def _graph(
    kind: str,
    *,
    in_dtype: str = "int8",
    out_dtype: str = "int8",
    in_q: tuple[float, int] | None = (0.05, 3),
    out_q: tuple[float, int] | None = (1 / 256, -128),
    channels: int = 1,
    attrs: dict | None = None,
) -> tuple[Op, Graph]:
    def quant(q: tuple[float, int] | None, n: int = 1) -> Quant | None:
        if q is None:
            return None
        return Quant(np.full(n, q[0], np.float32), np.full(n, q[1], np.int64), axis=1)

    x = Tensor(0, "x", (1, 10), in_dtype, quant(in_q, channels))
    y = Tensor(1, "y", (1, 10), out_dtype, quant(out_q))
    op = Op(0, kind, [0], [1], dict(attrs or {}))
    return op, Graph("t", [x, y], [op], [0], [1])


REJECTED = {
    "int16 logistic": _graph("LOGISTIC", in_dtype="int16", out_dtype="int16"),
    "uint8 tanh": _graph("TANH", in_dtype="uint8", out_dtype="uint8"),
    "per-channel relu": _graph("RELU", channels=10),
    "unquantized relu6": _graph("RELU6", in_q=None),
    "zero scale relu": _graph("RELU", in_q=(0.0, 0)),
    "zero scale quantize": _graph("QUANTIZE", in_dtype="float32", in_q=None, out_q=(0.0, 0)),
    "logistic output zp": _graph("LOGISTIC", out_q=(1 / 256, 0)),
    "softmax output scale": _graph("SOFTMAX", out_q=(1 / 128, -128), attrs={"beta": 1.0}),
    "softmax tiny beta": _graph("SOFTMAX", in_q=(1e-9, 0), attrs={"beta": 1.0}),
    "softmax int16 out": _graph("SOFTMAX", out_dtype="int16", attrs={"beta": 1.0}),
    "hard swish ratio": _graph("HARD_SWISH", in_q=(1.0, 0), out_q=(1e-4, 0)),
    "leaky relu no alpha": _graph("LEAKY_RELU", out_q=(0.05, 3)),
    "quantize int32 -> int32": _graph("QUANTIZE", in_dtype="int32", out_dtype="int32"),
    "quantize float -> int32": _graph("QUANTIZE", in_q=None, in_dtype="float32", out_dtype="int32"),
    "hard swish int16": _graph("HARD_SWISH", in_dtype="int16", out_dtype="int16", in_q=(1e-3, 0)),
    "dequantize int16 -> int32": _graph("DEQUANTIZE", in_dtype="int16", out_dtype="int32"),
    "quantize float out": _graph("QUANTIZE", in_q=None, in_dtype="float32", out_dtype="float32"),
    "dequantize int32 out": _graph("DEQUANTIZE", out_dtype="int32"),
    "dequantize uint8 in": _graph("DEQUANTIZE", in_dtype="uint8", out_dtype="float32"),
}

ACCEPTED = {
    "softmax": _graph("SOFTMAX", attrs={"beta": 1.0}),
    "quantize float": _graph("QUANTIZE", in_dtype="float32", in_q=None),
    "quantize requant": _graph("QUANTIZE"),
    "quantize int16 -> int8": _graph("QUANTIZE", in_dtype="int16"),
    "quantize int8 -> int16": _graph("QUANTIZE", out_dtype="int16"),
    "dequantize": _graph("DEQUANTIZE", out_dtype="float32", out_q=None),
    "quantize float -> int16": _graph("QUANTIZE", in_q=None, in_dtype="float32", out_dtype="int16"),
    "dequantize int16": _graph("DEQUANTIZE", in_dtype="int16", out_dtype="float32", out_q=None),
    "leaky relu": _graph("LEAKY_RELU", out_q=(0.05, 3), attrs={"alpha": 0.1}),
    "tanh": _graph("TANH", out_q=(1 / 128, 0)),
    "quantize int32 -> int8": _graph("QUANTIZE", in_dtype="int32"),
    "quantize int32 -> int16": _graph("QUANTIZE", in_dtype="int32", out_dtype="int16"),
    "quantize int8 -> int32": _graph("QUANTIZE", out_dtype="int32"),
    "softmax int8 -> int16": _graph(
        "SOFTMAX", out_dtype="int16", out_q=(1 / 65536, -32768), attrs={"beta": 1.0}
    ),
    "logistic int16": _graph(
        "LOGISTIC", in_dtype="int16", out_dtype="int16", in_q=(2**-12, 0), out_q=(2**-15, 0)
    ),
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_check_rejects(case: str) -> None:
    op, g = REJECTED[case]
    with pytest.raises(CompileError) as e:
        OPS[op.kind].prepare(op, g)
    assert e.value.op_kind == op.kind


@pytest.mark.parametrize("case", list(ACCEPTED))
def test_check_accepts(case: str) -> None:
    op, g = ACCEPTED[case]
    OPS[op.kind].prepare(op, g)
