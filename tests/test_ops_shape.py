"""PAD / PADV2, CONCATENATION and the alias ops (RESHAPE, SQUEEZE, EXPAND_DIMS).

Bit-exact against TFLM through the whole pipeline for the models from
``python -m tests.modelgen.ops_shape``; IR-level checks for what the converter cannot produce.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import OPS, decode
from tinycompile.ops.pad import pad_loops
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
KIND = {"pad": {"PAD", "PADV2"}, "concat": {"CONCATENATION"}, "reshape": {"RESHAPE"}}
REFUSED = {"concat_qdiff"}  # TFLM refuses it too (see test_concat_requantization_refused)
MODELS = sorted(p for fam in KIND for p in OPS_DIR.glob(f"{fam}_*.tflite") if p.stem not in REFUSED)


def _graph(path: Path) -> Graph:
    g = read_tflite(path.read_bytes(), source=str(path))
    decode(g)  # typed attrs, as every stage after the frontend sees them
    return g


def test_models_present() -> None:
    names = {p.stem for p in MODELS}
    for want in ("pad_zero2d", "pad_v2", "pad_qdiff", "concat_c3", "reshape_chain"):
        assert want in names, f"run python -m tests.modelgen.ops_shape ({want} missing)"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_carries_its_kind(path: Path) -> None:
    """(Compared with TFLM in test_ops_registry.py, with every op model.)"""
    kinds = {op.kind for op in _graph(path).ops}
    assert kinds & KIND[path.stem.split("_")[0]]


def test_models_cover_the_paths() -> None:
    g = _graph(OPS_DIR / "pad_v2.tflite")
    assert g.ops[0].kind == "PADV2" and g.t(g.ops[0].inputs[2]).is_const
    g = _graph(OPS_DIR / "pad_qdiff.tflite")
    a, o = g.t(g.ops[0].inputs[0]).quant, g.t(g.ops[0].outputs[0]).quant
    assert (a.s, a.zp) != (o.s, o.zp)  # PAD copies bytes whatever the quantization
    g = _graph(OPS_DIR / "concat_axis_neg2.tflite")
    assert g.ops[0].attrs["axis"] < 0
    g = _graph(OPS_DIR / "concat_const_axis1.tflite")
    assert any(g.t(t).is_const for t in g.ops[0].inputs)


def test_chain_runs_in_place() -> None:
    """reshape_chain's compare covers in-place ADD/MUL (output over input 0) and aliasing."""
    from tinycompile.api import plan

    p = plan(OPS_DIR / "reshape_chain.tflite")
    steps = [p.lowering.ops[i] for i in p.order]
    reshape = [lo for lo in steps if lo.op.kind == "RESHAPE"]
    assert reshape and all(
        p.storage[lo.op.inputs[0]] == p.storage[lo.op.outputs[0]] for lo in reshape
    )
    inplace = [
        lo
        for lo in steps
        if lo.op.kind in ("ADD", "MUL")
        and p.storage[lo.op.inputs[0]] == p.storage[lo.op.outputs[0]]
    ]
    assert inplace


def test_concat_requantization_refused() -> None:
    """Inputs quantized unlike the output: TFLM refuses the model, and so does the compiler."""
    from tinycompile.run.reference import run_tflm

    path = OPS_DIR / "concat_qdiff.tflite"
    g = _graph(path)
    qs = {(g.t(t).quant.s, g.t(t).quant.zp) for t in g.ops[0].inputs}
    assert len(qs) == 3
    with pytest.raises(CompileError, match="quantized differently"):
        lower(g)
    x = [np.zeros((1, *g.t(t).shape[1:]), np.int8) for t in g.inputs]
    with pytest.raises(Exception):  # noqa: B017 - TFLM raises a bare RuntimeError
        run_tflm(path, x)


# ------------------------------------------------------------------ PAD loop merging


@pytest.mark.parametrize(
    "shape,pads",
    [
        ((1, 5, 5, 4), [(0, 0), (1, 2), (2, 1), (0, 0)]),
        ((1, 4, 4, 3), [(0, 0), (1, 2), (2, 1), (0, 1)]),
        ((1, 3, 3, 5), [(0, 0), (0, 0), (0, 0), (2, 3)]),
        ((2, 3, 4), [(1, 0), (0, 0), (0, 2)]),
        ((1, 7, 5), [(0, 0), (0, 0), (0, 0)]),
        ((3, 1, 2, 1, 2, 2), [(0, 1), (1, 0), (0, 0), (0, 0), (2, 0), (0, 0)]),
    ],
)
def test_pad_loops_match_numpy(shape: tuple[int, ...], pads: list[tuple[int, int]]) -> None:
    x = np.random.default_rng(1).integers(-128, 128, size=shape)
    loops = pad_loops(shape, pads)
    assert 1 <= len(loops) <= 6
    merged = np.pad(
        x.reshape([lp[0] for lp in loops]), [(lp[1], lp[2]) for lp in loops], constant_values=-7
    )
    assert np.array_equal(merged.reshape(-1), np.pad(x, pads, constant_values=-7).reshape(-1))


# ------------------------------------------------------------------ IR-level graphs


def _t(tid: int, shape: tuple[int, ...], dtype: str = "int8", data=None, zp: int = 3) -> Tensor:
    q = Quant(np.array([0.05], np.float32), np.array([zp], np.int64)) if dtype == "int8" else None
    return Tensor(tid, f"t{tid}", shape, dtype, q, data)


def _alias_graph(kind: str, si: tuple[int, ...], so: tuple[int, ...]) -> Graph:
    ts = [_t(0, si), _t(1, (1, 1, 2), "int8"), _t(2, so), _t(3, so)]
    ts[1].data = np.ones((1, 1, 2), np.int8)
    ops = [Op(0, kind, [0], [2]), Op(1, "ADD", [2, 1], [3], {"activation": "NONE"})]
    return Graph("g", ts, ops, [0], [3])


@pytest.mark.parametrize(
    "kind,si,so", [("SQUEEZE", (1, 4, 1, 2), (1, 4, 2)), ("EXPAND_DIMS", (4, 2), (1, 4, 2))]
)
def test_alias_ops_lower_to_nothing(kind: str, si, so) -> None:
    low = lower(_alias_graph(kind, si, so))
    sq = low.ops[0]
    assert OPS[kind].alias and sq.op.kind == kind
    assert sq.stmt.strip().startswith("/*") and sq.stmt.strip().endswith("*/")
    assert sq.scratch_bytes == 0 and sq.macs == 0


def test_alias_refuses_size_change() -> None:
    with pytest.raises(CompileError, match="elements"):
        lower(_alias_graph("SQUEEZE", (1, 4, 1, 3), (1, 4, 2)))


def _pad_graph(paddings: np.ndarray, out_shape: tuple[int, ...], value: int | None = None) -> Graph:
    pt = _t(1, paddings.shape, str(paddings.dtype), paddings)
    ts = [_t(0, (1, 3, 3, 2)), pt, _t(2, out_shape)]
    ins = [0, 1]
    kind = "PAD"
    if value is not None:
        ts.append(_t(3, (), "int8", np.array(value, np.int8)))
        ins.append(3)
        kind = "PADV2"
    return Graph("g", ts, [Op(0, kind, ins, [2])], [0], [2])


def test_pad_int64_paddings_lower_like_int32() -> None:
    p32 = np.array([[0, 0], [1, 2], [0, 1], [0, 0]], np.int32)
    a = lower(_pad_graph(p32, (1, 6, 4, 2)))
    b = lower(_pad_graph(p32.astype(np.int64), (1, 6, 4, 2)))
    assert a.ops[0].stmt == b.ops[0].stmt
    for sym, arr in a.arrays.items():
        assert np.array_equal(arr.values, b.arrays[sym].values)


@pytest.mark.parametrize(
    "pads,out,msg",
    [
        ([[0, 0], [1, 2], [0, 1], [0, 0]], (1, 6, 4, 3), "does not match"),
        ([[0, 0], [-1, 0], [0, 0], [0, 0]], (1, 2, 3, 2), "negative"),
        ([[0, 0], [1, 2], [0, 1]], (1, 6, 4, 2), "padding values"),
    ],
)
def test_pad_refusals(pads, out, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(_pad_graph(np.array(pads, np.int32), out))


def test_padv2_value_must_share_output_quantization() -> None:
    g = _pad_graph(np.array([[0, 0], [1, 0], [0, 0], [0, 0]], np.int32), (1, 4, 3, 2), value=9)
    assert lower(g).ops[0].stmt.startswith("tc_pad_s8(")
    g.t(3).quant = Quant(np.array([0.07], np.float32), np.array([3], np.int64))
    with pytest.raises(CompileError, match="pad value quantization"):
        lower(g)


def test_concat_refusals() -> None:
    ts = [_t(0, (1, 2, 3)), _t(1, (1, 2, 4)), _t(2, (1, 2, 7))]
    g = Graph("g", ts, [Op(0, "CONCATENATION", [0, 1], [2], {"axis": -1})], [0, 1], [2])
    assert lower(g).ops[0].stmt.startswith("tc_concat_s8(")
    g.ops[0].attrs["activation"] = "RELU"
    with pytest.raises(CompileError, match="activation"):
        lower(g)
    g.ops[0].attrs = {"axis": 1, "activation": "NONE"}
    with pytest.raises(CompileError, match="does not fit"):
        lower(g)
    g.ops[0].attrs = {"axis": 3, "activation": "NONE"}
    with pytest.raises(CompileError, match="out of range"):
        lower(g)


# ------------------------------------------------------------------ the C kernels themselves

TOOLCHAINS = {
    "host": ["cc"],
    "m0plus": ["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb"],
    "m7": ["arm-none-eabi-gcc", "-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"],
}


@pytest.mark.parametrize("target", sorted(TOOLCHAINS))
def test_kernels_compile_without_warnings(target: str, tmp_path: Path) -> None:
    src = ROOT / "firmware" / "kernels" / "tc_shape.c"
    cmd = [*TOOLCHAINS[target], "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
    cmd += ["-I", str(ROOT / "firmware" / "include"), "-c", str(src), "-o", str(tmp_path / "k.o")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
