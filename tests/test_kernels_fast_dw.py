"""The DSP fast path of DEPTHWISE_CONV_2D (firmware/kernels/tc_depthwise_dsp.c), which only runs
on cores with the DSP extension: every shape class it handles, and every one it hands back to the
portable kernel, bit-exact with TFLM in QEMU on the Cortex-M7 and Cortex-M4 mappings.

The models are written here with tests/modelgen/tflite_writer.py (per-channel weights, no
TensorFlow needed): one DEPTHWISE_CONV_2D (or a chain of two, to run in place), random weights
and biases, scales that give the usual negative requantization shifts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from tests.modelgen.tflite_writer import Node, T, write
from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.ops import Choice
from tinycompile.pipeline import compile_graph as make_plan
from tinycompile.pipeline import prepare_graph

ACT = {"none": 0, "relu": 1, "relu6": 3}
PAD = {"SAME": 0, "VALID": 1}


def _out_size(padding: str, n: int, s: int) -> int:
    return -(-n // s) if padding == "SAME" else (n - 3) // s + 1


def _dw_options(padding: str, sh: int, sw: int, dm: int, act: str):
    def write_options(b):
        tflite.DepthwiseConv2DOptionsStart(b)
        tflite.DepthwiseConv2DOptionsAddPadding(b, PAD[padding])
        tflite.DepthwiseConv2DOptionsAddStrideW(b, sw)
        tflite.DepthwiseConv2DOptionsAddStrideH(b, sh)
        tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, dm)
        tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
        tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, 1)
        tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, 1)
        return tflite.DepthwiseConv2DOptionsEnd(b)

    return write_options


def dw_model(
    path: Path,
    hwc: tuple[int, int, int],
    *,
    stride: tuple[int, int] = (1, 1),
    padding: str = "SAME",
    dm: int = 1,
    act: str = "relu",
    layers: int = 1,
    out_scale: float = 0.08,
    big_bias: bool = False,
    small_channel: float | None = None,
    seed: int = 0,
) -> Path:
    """A chain of ``layers`` 3x3 DEPTHWISE_CONV_2D ops on a 1 x H x W x C int8 input."""
    rng = np.random.default_rng(seed)
    h, w, c = hwc
    tensors = [T("x", (1, h, w, c), quant=(0.05, -128 if act != "none" else 3))]
    nodes = []
    cur, cur_scale, cur_shape = 0, 0.05, (h, w, c)
    for i in range(layers):
        ih, iw, ic = cur_shape
        oc = ic * dm
        oh, ow = _out_size(padding, ih, stride[0]), _out_size(padding, iw, stride[1])
        ws = rng.uniform(0.005, 0.03, oc)
        if small_channel is not None:
            ws[oc // 2] = small_channel  # one channel with a very negative shift
        wq = rng.integers(-127, 128, (1, 3, 3, oc), dtype=np.int64).astype(np.int8)
        bias = rng.integers(-3000, 3000, oc).astype(np.int32)
        if big_bias:
            bias[oc // 2] = 700_000_000  # 2 * bias_eff leaves int32: the portable kernel runs
        tensors.append(T(f"w{i}", (1, 3, 3, oc), quant=(list(ws), [0] * oc), data=wq, quant_axis=3))
        tensors.append(
            T(f"b{i}", (oc,), "int32", quant=(list(cur_scale * ws), [0] * oc), data=bias)
        )
        oz = -128 if act != "none" else -5
        tensors.append(T(f"y{i}", (1, oh, ow, oc), quant=(out_scale, oz)))
        n = len(tensors)
        nodes.append(
            Node(
                "DEPTHWISE_CONV_2D",
                [cur, n - 3, n - 2],
                [n - 1],
                "DepthwiseConv2DOptions",
                _dw_options(padding, stride[0], stride[1], dm, act),
            )
        )
        cur, cur_scale, cur_shape = n - 1, out_scale, (oh, ow, oc)
    path.write_bytes(write(tensors, nodes, [0], [cur]))
    return path


# weight scales of one channel giving shift -r with the input (0.05) and output (0.08) scales
SHIFT = {r: {"small_channel": 1e-6 / 2 ** (r - 20)} for r in (22, 23, 24)}

# (name, shape, options): the fast path (3x3, depth multiplier 1, any channel count: over
# channels not in fours tc_dwconv3x3n_dsp, whose last block holds one to three; horizontal
# stride 1 or 2 along the line) and what it hands back to the portable kernel
CASES = {
    # lines along the width (out_h <= out_w)
    "s1_same_wide": ((7, 12, 12), {}),
    "s1_same_odd": ((9, 11, 8), {"act": "none"}),
    "s1_valid": ((9, 10, 4), {"padding": "VALID"}),
    "s2_same_even": ((12, 16, 4), {"stride": (2, 2)}),
    "s2_same_odd": ((11, 13, 8), {"stride": (2, 2), "act": "none"}),
    "s2_valid": ((9, 11, 8), {"stride": (2, 2), "padding": "VALID"}),
    "s12_rows": ((9, 14, 4), {"stride": (2, 1)}),  # stride 2 across lines
    # lines along the height (out_h > out_w): taps and strides swap roles
    "tall_s1": ((25, 5, 8), {}),
    "tall_s2": ((15, 6, 4), {"stride": (2, 2)}),
    "tall_s21": ((9, 8, 8), {"stride": (1, 2)}),
    # lines longer than one buffer tile (in place, the portable kernel: see the in-place test)
    "tiles_s1": ((4, 50, 4), {"in_place": False}),
    "tiles_s2": ((5, 90, 4), {"stride": (2, 2)}),
    "tiles_tall": ((45, 3, 4), {"in_place": False}),
    "tiles_in_place": ((4, 50, 4), {"in_place": True}),
    # tiny images: every output a border output
    "tiny_3x3": ((3, 3, 16), {}),
    "tiny_1x2": ((1, 2, 4), {"act": "none"}),
    # the fused activation narrower than int8 (RELU6, output scale beyond 6 / 255)
    "clamp_relu6": ((8, 9, 8), {"act": "relu6", "out_scale": 0.05}),
    # channels not in fours: a last block of two, one (stride 2, 6x6 outputs), three (lines
    # along the height), a single block of three over several tiles, one channel on a 3x3
    # image, the clamp over a last block; every case reads the tensor's last pixel
    "c6_last2": ((8, 7, 6), {}),
    "c5_s2_last1": ((11, 11, 5), {"stride": (2, 2), "act": "none"}),
    "c7_tall_last3": ((13, 5, 7), {}),
    "c3_tiles": ((5, 70, 3), {"stride": (2, 2)}),
    "c1_tiny": ((3, 3, 1), {"act": "none"}),
    "c6_clamp": ((8, 9, 6), {"act": "relu6", "out_scale": 0.05}),
    "c3_in_place": ((4, 20, 3), {"in_place": True}),
    # handed back: depth multiplier 2, stride 3, huge bias, a requantization shift >= 0
    "back_dm2": ((7, 8, 4), {"dm": 2}),
    "back_s3": ((10, 10, 4), {"stride": (3, 3)}),
    "back_bias": ((6, 7, 8), {"big_bias": True}),
    "back_shift": ((6, 7, 8), {"out_scale": 0.0004}),
    # one channel's shift far below the others' (-22, as in a VWW model; -23, the path's limit)
    # stays on the fast path; -24 hands the layer back
    "shift22_one": ((8, 9, 8), SHIFT[22]),
    "shift23_one": ((8, 9, 8), SHIFT[23]),
    "back_shift24_one": ((8, 9, 8), SHIFT[24]),
}

BOARDS = ["stm32f746", "stm32f407"]  # Cortex-M7, Cortex-M4: the DSP path


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_depthwise_bit_exact(name: str, board: str, tmp_path: Path) -> None:
    hwc, opts = CASES[name]
    opts = dict(opts)
    in_place = opts.pop("in_place", None)
    model = dw_model(tmp_path / f"{name}.tflite", hwc, **opts)
    if in_place is None:  # the planner's choice
        r = api.compare(model, board=board, n=3, layers=True)
    else:
        g = load_model(model)
        p = make_plan(g, choices={0: Choice(in_place=in_place)}, search=False)
        x, y = g.ops[0].inputs[0], g.ops[0].outputs[0]
        assert (p.storage[x] == p.storage[y]) == in_place
        r = api.compare_plan(p, model, board=board, n=3, layers=True)
    assert r.ok, str(r)


@pytest.mark.parametrize(
    "name,hwc",
    [("inplace_wide", (6, 10, 8)), ("inplace_tall", (20, 5, 8)), ("inplace_c6", (6, 10, 6))],
    ids=str,
)
@pytest.mark.parametrize("board", BOARDS)
def test_fast_depthwise_in_place(name: str, hwc: tuple, board: str, tmp_path: Path) -> None:
    """Two stride-1 layers, every in-place candidate forced in place: the second writes its
    output over its dying input (the fast path needs no ring: it buffers the lines it reads)."""
    model = dw_model(tmp_path / f"{name}.tflite", hwc, layers=2, act="relu")
    g = load_model(model)
    cands = [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]
    assert cands
    p = make_plan(g, choices={op.index: Choice(in_place=True) for op in cands}, search=False)
    second = [op for op in cands if op.index == 1]
    assert second and p.storage[second[0].inputs[0]] == p.storage[second[0].outputs[0]]
    r = api.compare_plan(p, model, board=board, n=3, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
def test_one_channels_shift_keeps_the_layer_fast(tmp_path: Path) -> None:
    """A channel with shift -22 or -23 does not send the whole layer to the portable kernel:
    its fast build's instructions stay the ordinary layer's fraction of the portable build's,
    while a -24 channel (beyond what SMMLAR's constant can hold) hands the layer back."""

    def ratio(opts: dict) -> float:
        model = dw_model(
            tmp_path / f"m{len(opts)}_{sorted(opts.items())}.tflite", (8, 9, 8), **opts
        )
        fast, slow = (
            api.compare(model, board="qemu-m7", n=1, layers=False, portable=portable)
            for portable in (False, True)
        )
        assert fast.ok and slow.ok, (str(fast), str(slow))
        return fast.profile["instructions"] / slow.profile["instructions"]

    plain = ratio({})
    assert plain < 0.6  # the fast path pays off on this layer at all
    for r in (22, 23):
        assert ratio(SHIFT[r]) < plain * 1.05, (r, plain)
    assert ratio(SHIFT[24]) > plain * 1.3  # handed back: clearly slower


@pytest.mark.qemu
@pytest.mark.parametrize(
    "hwc,stride,limit", [((11, 11, 5), (2, 2), 0.5), ((8, 7, 6), (1, 1), 0.32)], ids=str
)
def test_channels_not_in_fours_stay_fast(
    hwc: tuple, stride: tuple, limit: float, tmp_path: Path
) -> None:
    """A 3x3 layer over channels not in fours runs the 3x3 DSP path (tc_dwconv3x3n_dsp): its
    fast build's instructions are a smaller share of the portable build's than the any-window
    path gave them (0.40 and 0.25 here against that path's 0.58 and 0.39, whole inference)."""
    model = dw_model(tmp_path / "m.tflite", hwc, stride=stride, act="none")
    fast, slow = (
        api.compare(model, board="qemu-m7", n=1, layers=False, portable=portable)
        for portable in (False, True)
    )
    assert fast.ok and slow.ok, (str(fast), str(slow))
    assert fast.profile["instructions"] < limit * slow.profile["instructions"]
