"""TRANSPOSE_CONV, BATCH_MATMUL, RESIZE_BILINEAR: what the lowering accepts and refuses (IR
level). Bit-exactness against TFLM, every layer, is tests/test_ops_registry.py's.

Models come from ``python -m tests.modelgen.ops_matmul``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph
from tinycompile.ops import decode, lower, prepare_graph

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"


def _graph(name: str) -> Graph:
    p = OPS_DIR / f"{name}.tflite"
    g = read_tflite(p.read_bytes(), source=str(p))
    decode(g)
    return g


def _op(g: Graph, kind: str):
    return next(op for op in g.ops if op.kind == kind)


def _reject(name: str, kind: str, mutate: Callable, match: str) -> None:
    g = copy.deepcopy(_graph(name))
    mutate(g, _op(g, kind))
    with pytest.raises(CompileError, match=match):
        lower(g)


# ---------------------------------------------------------------------------- TRANSPOSE_CONV

TCONV = {
    "tconv_same_s2", "tconv_same_s2_odd", "tconv_valid_asym", "tconv_s1_relu", "tconv_k1_s3",
    "tconv_pertensor", "tconv_nobias", "tconv_biasdropped", "tconv_relu_patched",
}  # fmt: skip


def test_tconv_models_present() -> None:
    missing = {n for n in TCONV if not (OPS_DIR / f"{n}.tflite").exists()}
    assert not missing, f"run python -m tests.modelgen.ops_matmul tconv ({sorted(missing)})"


def test_tconv_configurations_covered() -> None:
    """The models cover SAME and VALID, strides 1, 2, 3 and asymmetric, a padding that is not
    the input's (odd output), per-channel and per-tensor weights, a bias, none (3 inputs) and
    a dropped one (-1), a fused RELU, and no scratch is claimed."""
    seen = set()
    for name in TCONV:
        g = _graph(name)
        op = _op(g, "TRANSPOSE_CONV")
        d = next(p.data for p in prepare_graph(g) if p.op is op)
        assert d.scratch == 0 and d.in_place_scratch is None
        a = op.attrs
        seen |= {a["padding"], f"s{a['stride']}", a["activation"], f"in{len(op.inputs)}"}
        seen.add("perchannel" if g.t(op.inputs[1]).quant.per_channel else "pertensor")
        if len(op.inputs) == 4 and op.inputs[3] < 0:
            seen.add("dropped")
    want = {"SAME", "VALID", "s(1, 1)", "s(2, 2)", "s(3, 3)", "s(2, 3)", "RELU", "NONE",
            "in3", "in4", "dropped", "perchannel", "pertensor"}  # fmt: skip
    assert want <= seen, want - seen


def test_tconv_rejects_int16() -> None:
    def m(g: Graph, op) -> None:
        g.t(op.inputs[2]).dtype = "int16"

    _reject("tconv_same_s2", "TRANSPOSE_CONV", m, "int16")


def test_tconv_rejects_weight_zero_point() -> None:
    def m(g: Graph, op) -> None:
        w = g.t(op.inputs[1])
        w.quant.zero_point = np.ones_like(w.quant.zero_point)

    _reject("tconv_same_s2", "TRANSPOSE_CONV", m, "zero point")


def test_tconv_rejects_bias_size() -> None:
    def m(g: Graph, op) -> None:
        b = g.t(op.inputs[3])
        b.data = b.data[:-1]
        b.shape = (b.shape[0] - 1,)

    _reject("tconv_same_s2", "TRANSPOSE_CONV", m, "bias has 5 values for 6")


def test_tconv_rejects_mismatched_shapes() -> None:
    def m(g: Graph, op) -> None:
        o = g.t(op.outputs[0])
        o.shape = (*o.shape[:3], o.shape[3] + 1)

    _reject("tconv_same_s2", "TRANSPOSE_CONV", m, "do not match")


def test_tconv_rejects_fused_tanh() -> None:
    def m(g: Graph, op) -> None:
        op.attrs["activation"] = "TANH"

    _reject("tconv_same_s2", "TRANSPOSE_CONV", m, "TANH")
