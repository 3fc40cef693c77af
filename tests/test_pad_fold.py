"""The pad pass (tinycompile/passes/pad_fold.py): an explicit zero-point PAD in front of a
convolution becomes the convolution's own (possibly asymmetric) padding.

- On made-up graphs: what folds (PAD and PADV2, VALID / SAME / already folded, CONV_2D and
  DEPTHWISE_CONV_2D) and what keeps its PAD, the given graph unchanged.
- ``conv_common.window`` with EXPLICIT padding: its geometry and its refusals.
- On the padfold_* models (tests/modelgen/ops_padfold.py; tests/test_ops_registry.py compares
  each with TFLM on the host): no PAD left where one folds, the arena of PAD + VALID layers equal
  to their SAME twin's and below the unfolded one's, bit-exact in QEMU on the Cortex-M7 and
  M0+ (their DSP and ARMv6-M paths: borders, im2col, the 3x3 depthwise lines, in-place rings
  with one-sided padding) and streamed by rows, which the PAD prevented.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS

from tinycompile import api, pipeline
from tinycompile.frontend import load_model
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import Choice
from tinycompile.passes import PASSES, fold_pads
from tinycompile.pipeline import check_graph, compile_graph, prepare_graph
from tinycompile.planner.streams import streamed_ops

OPS = MODELS / "ops"
FOLDS = ["padfold_dw_s2", "padfold_conv_asym", "padfold_first_v2", "padfold_same_fold",
         "padfold_chain", "padfold_ring_asym", "padfold_s1"]  # fmt: skip
KEEPS = ["padfold_not_zp", "padfold_two_readers", "padfold_pointwise"]
QEMU = ["qemu-m7", "samd21"]  # Cortex-M7 (DSP paths), Cortex-M0+ (ARMv6-M paths)


# ------------------------------------------------------------------ made-up graphs


def _q(scale: float, zp: int) -> Quant:
    return Quant(np.array([scale], np.float32), np.array([zp], np.int64))


def _graph(
    pads: tuple[int, int, int, int] = (1, 1, 1, 1),
    *,
    kind: str = "CONV_2D",
    k: int = 3,
    padding: str = "VALID",
    stride: int = 1,
    v2: int | None = None,
    out_q: Quant | None = None,
    nc: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> Graph:
    """x (1, 6, 7, 4) -> PAD / PADV2 (``v2``: its value) -> conv k x k -> z."""
    t, b, le, r = pads
    n0, n1, c0, c1 = nc
    h, w, c = 6 + t + b, 7 + le + r, 4 + c0 + c1
    xq = _q(0.05, 3)
    wshape = (5, k, k, c) if kind == "CONV_2D" else (1, k, k, c)
    oc = wshape[0] if kind == "CONV_2D" else c
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
    else:
        oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    axis = 0 if kind == "CONV_2D" else 3
    wq = Quant(np.full(oc, 0.02, np.float32), np.zeros(oc, np.int64), axis)
    p = np.array([[n0, n1], [t, b], [le, r], [c0, c1]], np.int32)
    ts = [
        Tensor(0, "x", (1, 6, 7, 4), "int8", xq),
        Tensor(1, "paddings", (4, 2), "int32", None, p),
        Tensor(2, "y", (1 + n0 + n1, h, w, c), "int8", out_q or xq),
        Tensor(3, "w", wshape, "int8", wq, np.ones(wshape, np.int8)),
        Tensor(4, "b", (oc,), "int32", None, np.zeros(oc, np.int32)),
        Tensor(5, "z", (1, oh, ow, oc), "int8", _q(0.1, -2)),
        Tensor(6, "v", (), "int8", out_q or xq, np.array(v2 if v2 is not None else 0, np.int8)),
    ]
    attrs = {
        "padding": padding,
        "stride": (stride, stride),
        "dilation": (1, 1),
        "activation": "NONE",
    }
    if kind == "DEPTHWISE_CONV_2D":
        attrs["depth_multiplier"] = 1
    pad = Op(0, "PADV2" if v2 is not None else "PAD", [0, 1, 6] if v2 is not None else [0, 1], [2])
    ops = [pad, Op(1, kind, [2, 3, 4], [5], attrs=attrs)]
    return Graph("g", ts, ops, [0], [5])


def _snapshot(g: Graph) -> list:
    return [(op.index, op.kind, list(op.inputs), list(op.outputs), dict(op.attrs)) for op in g.ops]


def _folded(g: Graph) -> Op | None:
    """The convolution of ``fold_pads(g)`` when the PAD folded (checking the given graph is
    unchanged either way), else None."""
    before = _snapshot(g)
    out = fold_pads(g)
    assert out is not g and _snapshot(g) == before
    if [op.kind for op in out.ops] == [op.kind for op in g.ops]:
        assert out.ops == g.ops
        return None
    assert len(out.ops) == 1 and out.ops[0].index == 1
    return out.ops[0]


@pytest.mark.parametrize("kind", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_a_zero_point_pad_becomes_the_convolutions_padding(kind: str) -> None:
    g = _graph((2, 0, 1, 2), kind=kind)
    conv = _folded(g)
    assert conv is not None and conv.kind == kind and conv.inputs == [0, 3, 4]
    assert conv.attrs["padding"] == "EXPLICIT" and conv.attrs["pads"] == (2, 0, 1, 2)
    assert g.ops[1].attrs["padding"] == "VALID" and g.ops[1].inputs[0] == 2
    # the window the convolution now computes: the PAD's offsets, the same output
    geo = prepare_graph(fold_pads(g))[0].data.geo
    assert (geo.in_h, geo.in_w, geo.pad_h, geo.pad_w) == (6, 7, 2, 1)
    assert (geo.out_h, geo.out_w) == g.t(5).shape[1:3] and geo.border


def test_padv2_folds_only_when_its_value_is_the_zero_point() -> None:
    assert _folded(_graph(v2=3)) is not None  # x's zero point is 3
    assert _folded(_graph(v2=4)) is None
    g = _graph(v2=3)
    g.tensors[6] = replace(g.t(6), data=None)  # a value known only at run time
    assert _folded(g) is None


def test_same_padding_adds_to_the_pads() -> None:
    """PAD (0, 1, 0, 1) then SAME 3x3 stride 1 over the padded 7 x 8: SAME pads one row and
    column each side there, so the convolution sees 1 above, 2 below, 1 left, 2 right."""
    conv = _folded(_graph((0, 1, 0, 1), padding="SAME"))
    assert conv is not None and conv.attrs["pads"] == (1, 2, 1, 2)
    # stride 2 over 7 x 8: 4 x 4 outputs reach 3 * 2 + 3 = 9 rows (two more: 1 above, 1
    # below) and 9 columns (one more: after)
    conv = _folded(_graph((0, 1, 0, 1), padding="SAME", stride=2))
    assert conv is not None and conv.attrs["pads"] == (1, 2, 0, 2)


def test_pads_in_a_row_fold_into_one() -> None:
    """x (1, 5, 6, 4) -> PAD (0, 1, 1, 0) -> PAD (1, 0, 0, 1) -> conv: one padding of 1 all
    round, the convolution reading x."""
    g = _graph((1, 0, 0, 1))
    p2 = np.array([[0, 0], [0, 1], [1, 0], [0, 0]], np.int32)
    g.tensors += [Tensor(7, "p2", (4, 2), "int32", None, p2),
                  Tensor(8, "x2", g.t(0).shape, "int8", g.t(0).quant)]  # fmt: skip
    g.tensors[0] = replace(g.t(0), shape=(1, 5, 6, 4))
    g.ops = [Op(7, "PAD", [0, 7], [8]), replace(g.ops[0], inputs=[8, 1]), g.ops[1]]
    out = fold_pads(g)
    assert [op.index for op in out.ops] == [1] and len(g.ops) == 3
    assert out.ops[0].inputs[0] == 0 and out.ops[0].attrs["pads"] == (1, 1, 1, 1)


def test_what_keeps_its_pad() -> None:
    assert _folded(_graph(out_q=_q(0.05, 4))) is None  # output zero point differs
    assert _folded(_graph(out_q=_q(0.06, 3))) is None  # output scale differs
    assert _folded(_graph(nc=(0, 0, 1, 0))) is None  # channels padded
    assert _folded(_graph((1, 1, 1, 1), k=1)) is None  # 1x1: border outputs see no input
    assert _folded(_graph((3, 0, 0, 0))) is None  # a 3x3 window wholly in the padding
    assert _folded(_graph((2, 2, 2, 2))) is not None  # every window still reaches the image
    g = _graph()
    g.outputs = [5, 2]  # the padded tensor is a graph output
    assert _folded(g) is None
    g = _graph()
    g.ops[1].inputs = [2, 3, 2]  # read twice by the convolution
    assert _folded(g) is None
    g = _graph()
    g.ops.append(Op(2, "RELU", [2], [6]))  # read by another op too
    assert _folded(g) is None
    g = _graph()
    g.tensors[1] = replace(g.t(1), data=None)  # paddings known at run time
    assert _folded(g) is None
    g = _graph()
    g.tensors[0] = replace(g.t(0), dtype="int16")
    assert _folded(g) is None
    g = _graph()
    g.ops[1] = replace(g.ops[1], kind="AVERAGE_POOL_2D")  # pooling: padding is not counted
    assert _folded(g) is None
    g = _graph()
    g.ops[1] = replace(g.ops[1], attrs={}, options={"padding": 1})  # options refused
    assert _folded(g) is None


def test_the_pass_is_in_the_pipeline() -> None:
    assert fold_pads in PASSES
    g = _graph()
    before = _snapshot(g)
    plan = compile_graph(g)
    assert [la.kind for la in plan.layers] == ["CONV_2D"] and _snapshot(g) == before


# ------------------------------------------------------------------ EXPLICIT windows


def _explicit(pads, shape=None) -> list[str]:
    g = _graph((0, 0, 0, 0))
    g.ops[1].attrs.update(padding="EXPLICIT", pads=pads)
    if shape is not None:
        g.tensors[5] = replace(g.t(5), shape=shape)
    return [e.reason for e in check_graph(g)]


def test_explicit_padding_is_checked() -> None:
    assert _explicit((1, 1, 1, 1)) and "does not match" in _explicit((1, 1, 1, 1))[0]
    assert _explicit((1, 1, 1, 1), (1, 6, 7, 5)) == []
    assert "not 4 non-negative" in _explicit((1, 1, -1, 1), (1, 6, 5, 5))[0]
    assert "not 4 non-negative" in _explicit((1, 1, 1))[0]
    assert "wholly in the padding" in _explicit((3, 0, 0, 0), (1, 7, 5, 5))[0]
    assert "wholly in the padding" in _explicit((0, 3, 0, 0), (1, 7, 5, 5))[0]


# ------------------------------------------------------------------ the padfold models


def _model(name: str) -> Path:
    return OPS / f"{name}.tflite"


def _unfolded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plans made after this keep every PAD (the passes without ``fold_pads``)."""
    passes = tuple(p for p in PASSES if p is not fold_pads)
    run = pipeline.run_passes
    monkeypatch.setattr(pipeline, "run_passes", lambda g: run(g, passes))


def test_models_are_present() -> None:
    missing = [n for n in FOLDS + KEEPS + ["padfold_s1_twin"] if not _model(n).exists()]
    assert not missing, f"run python -m tests.modelgen.ops_padfold ({missing} missing)"


@pytest.mark.parametrize("name", FOLDS + KEEPS)
def test_plans_run_no_pad_where_one_folds(name: str) -> None:
    kinds = [op.kind for op in load_model(_model(name)).ops]
    assert {"PAD", "PADV2"} & set(kinds)
    if name in FOLDS:
        kinds = [k for k in kinds if k not in ("PAD", "PADV2")]
    assert sorted(la.kind for la in api.plan(_model(name), stream="off").layers) == sorted(kinds)


def test_folded_pads_cost_what_same_padding_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    """PAD (1, 1, 1, 1) + VALID 3x3 stride 1 is SAME: the folded model gets the twin's
    geometry and arena, well below what it took with its PADs."""
    folded, twin = api.plan(_model("padfold_s1")), api.plan(_model("padfold_s1_twin"))
    assert folded.arena_bytes == twin.arena_bytes
    geo = [p.data.geo for p in folded.prepared]
    assert geo == [p.data.geo for p in twin.prepared]
    _unfolded(monkeypatch)
    assert api.plan(_model("padfold_s1")).arena_bytes > folded.arena_bytes


def test_a_pad_no_longer_sets_the_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    """MCUNet's block: the padded 22 x 22 x 16 copy set the peak; folded, the peak is no higher
    than any other layer of the unfolded plan needed (the depthwise now reads 20 x 20)."""
    folded = api.plan(_model("padfold_dw_s2"), stream="off")
    _unfolded(monkeypatch)
    kept = api.plan(_model("padfold_dw_s2"), stream="off")
    assert [la.kind for la in kept.peak_layers()] == ["PAD"]
    assert folded.peak_bytes <= max(la.live_bytes for la in kept.layers if la.kind != "PAD")
    assert folded.arena_bytes < kept.arena_bytes


def test_a_folded_pad_lets_the_block_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _model("padfold_dw_s2")
    dw = next(op.index for op in load_model(path).ops if op.kind == "DEPTHWISE_CONV_2D")
    small = api.plan(path, stream="min")
    assert dw in streamed_ops(small.graph)
    assert small.arena_bytes < api.plan(path, stream="off").arena_bytes
    r = api.compare(path, n=6, layers=True, stream="min")
    assert r.ok, str(r)
    _unfolded(monkeypatch)
    assert dw not in streamed_ops(api.plan(path, stream="min").graph)


@pytest.mark.qemu
@pytest.mark.parametrize("board", QEMU)
@pytest.mark.parametrize("name", [*FOLDS[:5], "padfold_not_zp"])
def test_folded_models_bit_exact_in_qemu(name: str, board: str) -> None:
    r = api.compare(_model(name), board=board, n=4, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("board", QEMU)
def test_streamed_block_bit_exact_in_qemu(board: str) -> None:
    r = api.compare(_model("padfold_dw_s2"), board=board, n=4, layers=True, stream="min")
    assert r.ok, str(r)
    assert streamed_ops(api.plan(_model("padfold_dw_s2"), stream="min").graph)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["host", *QEMU])
def test_one_sided_pads_in_place_bit_exact(board: str) -> None:
    """Every in-place candidate forced in place: the depthwise layers (2 rows above and 2
    columns right; 2 rows below and 2 columns left) and the 3x3 CONV_2D (2 rows above, 2
    columns left), each ring holding back ``pad_h * w + pad_w + 1`` pixels whatever the
    padding on the far sides (on the M7 the 3x3 depthwise lines need none)."""
    path = _model("padfold_ring_asym")
    g = load_model(path)
    cands = [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]
    explicit = [op for op in cands if op.attrs.get("padding") == "EXPLICIT"]
    assert [op.kind for op in explicit] == ["DEPTHWISE_CONV_2D"] * 2 + ["CONV_2D"]
    p = compile_graph(copy.deepcopy(g), choices={op.index: Choice(in_place=True) for op in cands},
                      search=False)  # fmt: skip
    assert all(p.storage[op.inputs[0]] == p.storage[op.outputs[0]] for op in explicit)
    r = api.compare_plan(p, path, board=board, n=4, layers=True)
    assert r.ok, str(r)
