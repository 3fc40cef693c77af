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
from tinycompile.ops import decode
from tinycompile.pipeline import lower_graph as lower
from tinycompile.pipeline import prepare_graph

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
        d = next(p.data for p in prepare_graph(g) if p.op.index == op.index)
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


# ------------------------------------------------------------------------------ BATCH_MATMUL

BMM = {
    "bmm_act", "bmm_adj_x", "bmm_adj_y", "bmm_adj_xy", "bmm_bcast", "bmm_bcast_rank",
    "bmm_const_rhs", "bmm_const_rhs_adj",
}  # fmt: skip


def test_bmm_configurations_covered() -> None:
    """Both adjoints, ranks 2 to 5 with broadcast batch dims, constant and activation rhs (a
    constant un-adjointed rhs goes to flash transposed)."""
    seen = set()
    for name in BMM:
        assert (OPS_DIR / f"{name}.tflite").exists(), "run python -m tests.modelgen.ops_matmul bmm"
        g = _graph(name)
        op = _op(g, "BATCH_MATMUL")
        a, b = g.t(op.inputs[0]), g.t(op.inputs[1])
        d = next(p.data for p in prepare_graph(g) if p.op.index == op.index)
        seen |= {
            f"x{op.attrs['adj_x']:d}y{op.attrs['adj_y']:d}",
            f"ranks{len(a.shape)}{len(b.shape)}",
        }
        seen.add("const" if b.is_const else "act")
        seen |= {"transposed"} if d.rhs_t is not None else set()
        if len(set(d.l_off.tolist())) < d.l_off.size or len(set(d.r_off.tolist())) < d.r_off.size:
            seen.add("broadcast")
    want = {"x0y0", "x1y0", "x0y1", "x1y1", "ranks42", "ranks55", "const", "act", "transposed",
            "broadcast"}  # fmt: skip
    assert want <= seen, want - seen


def test_bmm_rejects_bad_broadcast() -> None:
    def m(g: Graph, op) -> None:
        a = g.t(op.inputs[0])
        a.shape = (1, 2, 2, 4, 6)

    _reject("bmm_bcast", "BATCH_MATMUL", m, "do not broadcast")


def test_bmm_rejects_depth_mismatch() -> None:
    def m(g: Graph, op) -> None:
        op.attrs["adj_y"] = True

    _reject("bmm_act", "BATCH_MATMUL", m, "depths 7 and 3 differ")


def test_bmm_rejects_per_channel_rhs() -> None:
    def m(g: Graph, op) -> None:
        b = g.t(op.inputs[1])
        b.quant.scale = np.full(4, b.quant.s)
        b.quant.zero_point = np.zeros(4, np.int64)
        b.quant.axis = 2

    _reject("bmm_const_rhs", "BATCH_MATMUL", m, "per channel")


def test_bmm_rejects_rank6() -> None:
    def m(g: Graph, op) -> None:
        a, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        a.shape, o.shape = (1, *a.shape), (1, *o.shape)

    _reject("bmm_bcast", "BATCH_MATMUL", m, "2 to 5 supported")


# --------------------------------------------------------------------------- RESIZE_BILINEAR

RESIZE = {
    "resize_hpc_up", "resize_hpc_down", "resize_hpc_x3", "resize_align_up", "resize_align_down",
    "resize_align_1", "resize_legacy", "resize_legacy_down",
}  # fmt: skip


def test_resize_configurations_covered() -> None:
    """half_pixel_centers, align_corners and neither, up and down, negative half-pixel border
    weights (TFLM's), an output of size 1 under align_corners."""
    seen = set()
    for name in RESIZE:
        assert (OPS_DIR / f"{name}.tflite").exists(), "run python -m tests.modelgen.ops_matmul"
        g = _graph(name)
        op = _op(g, "RESIZE_BILINEAR")
        a = op.attrs
        seen.add("align" if a["align_corners"] else "half" if a["half_pixel_centers"] else "none")
        d = next(p.data for p in prepare_graph(g) if p.op.index == op.index)
        if (d.ys[:, 2] < 0).any() or (d.xs[:, 2] < 0).any():
            seen.add("negative weight")
        x, o = g.t(op.inputs[0]), g.t(op.outputs[0])
        seen.add("up" if o.shape[1] > x.shape[1] else "down")
        if 1 in o.shape[1:3]:
            seen.add("size1")
    assert {"align", "half", "none", "negative weight", "up", "down", "size1"} <= seen


def test_resize_axis_table() -> None:
    """TFLM's arithmetic by hand: 4 -> 8 with half-pixel centers (scale 512): output 0 reads
    coordinate -256 (indices 0, 0, weight -256, C's truncating division), output 7 reads 3328
    (indices 3, 3, weight 256)."""
    from tinycompile.ops.resize_bilinear import axis_table

    t = axis_table(4, 8, align=False, half=True)
    assert t[0].tolist() == [0, 0, -256] and t[7].tolist() == [3, 3, 256]
    assert axis_table(5, 1, align=True, half=False).tolist() == [[0, 0, 0]]


def test_resize_rejects_align_and_half() -> None:
    def m(g: Graph, op) -> None:
        op.attrs["half_pixel_centers"] = True

    _reject("resize_align_up", "RESIZE_BILINEAR", m, "cannot both be set")


def test_resize_rejects_dynamic_size() -> None:
    def m(g: Graph, op) -> None:
        g.t(op.inputs[1]).data = None

    _reject("resize_hpc_up", "RESIZE_BILINEAR", m, "non-constant size")


def test_resize_rejects_size_mismatch() -> None:
    def m(g: Graph, op) -> None:
        g.t(op.inputs[1]).data = np.array([12, 9], np.int32)

    _reject("resize_hpc_up", "RESIZE_BILINEAR", m, "is not")
