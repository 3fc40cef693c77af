"""DEPTHWISE_CONV_2D's other fast paths, bit-exact with TFLM on the host and in QEMU (Cortex-M7
stm32f746, Cortex-M4 stm32f407, Cortex-M0+ samd21):

- 1x1 windows (firmware/kernels/tc_depthwise_1x1.c, every core): tabulated per channel up to
  ``depthwise.LUT_CHANNELS`` channels, computed beyond; strides 1 and 2, depth multipliers,
  in place;
- the DSP whole-layer path for windows up to 7x7 (tc_depthwise_kxk_dsp.c, M4/M7): 5x5 and 7x7,
  3x3 layers the 3x3 path hands back (channels not a multiple of 4, depth multipliers 2-4 with
  several input channels, in place over lines longer than its tile), non-square windows, tall
  layers (lines down the columns), strides 1 and 2 (and 3, handed back), SAME / VALID, a
  channel with shift -22, RELU / RELU6 / none, in place.

Models: ``dw_model`` below (tests/modelgen/tflite_writer.py, no TensorFlow), one layer or a
chain of two to run the second in place.
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


def _out(padding: str, n: int, k: int, s: int) -> int:
    return -(-n // s) if padding == "SAME" else (n - k) // s + 1


def _options(padding: str, stride: tuple[int, int], dm: int, act: str):
    def write_options(b):
        tflite.DepthwiseConv2DOptionsStart(b)
        tflite.DepthwiseConv2DOptionsAddPadding(b, PAD[padding])
        tflite.DepthwiseConv2DOptionsAddStrideW(b, stride[1])
        tflite.DepthwiseConv2DOptionsAddStrideH(b, stride[0])
        tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, dm)
        tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
        tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, 1)
        tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, 1)
        return tflite.DepthwiseConv2DOptionsEnd(b)

    return write_options


def dw_model(
    path: Path,
    hwc: tuple[int, int, int],
    k: tuple[int, int] = (3, 3),
    *,
    stride: tuple[int, int] = (1, 1),
    padding: str = "SAME",
    dm: int = 1,
    act: str = "relu",
    layers: int = 1,
    out_scale: float = 0.08,
    shift22: bool = False,
    seed: int = 0,
) -> Path:
    """A chain of ``layers`` k_h x k_w DEPTHWISE_CONV_2D ops on a 1 x H x W x C int8 input
    (the depth multiplier on the first); ``shift22``: one channel requantizes with shift -22."""
    rng = np.random.default_rng(seed)
    h, w, c = hwc
    kh, kw = k
    tensors = [T("x", (1, h, w, c), quant=(0.05, -128 if act != "none" else 3))]
    nodes = []
    cur, cur_scale, cur_shape = 0, 0.05, (h, w, c)
    for i in range(layers):
        ih, iw, ic = cur_shape
        m = dm if i == 0 else 1
        oc = ic * m
        oh, ow = _out(padding, ih, kh, stride[0]), _out(padding, iw, kw, stride[1])
        # weight scales that keep the accumulator's requantized range busy: about 1 / taps
        ws = rng.uniform(0.01, 0.04, oc) * 9 / (kh * kw)
        if shift22:
            ws[oc // 2] = 1e-6 / 4  # shift -22 with these input / output scales
        wq = rng.integers(-127, 128, (1, kh, kw, oc), dtype=np.int64).astype(np.int8)
        bias = rng.integers(-3000, 3000, oc).astype(np.int32)
        tensors.append(
            T(f"w{i}", (1, kh, kw, oc), quant=(list(ws), [0] * oc), data=wq, quant_axis=3)
        )
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
                _options(padding, stride, m, act),
            )
        )
        cur, cur_scale, cur_shape = n - 1, out_scale, (oh, ow, oc)
    path.write_bytes(write(tensors, nodes, [0], [cur]))
    return path


# name: (hwc, window, options)
CASES = {
    # 1x1: tabulated (<= 64 channels) or computed, strides 1 / 2, depth multipliers
    "k1_s1_c32": ((16, 16, 32), (1, 1), {}),
    "k1_s1_c20_relu6": ((9, 9, 20), (1, 1), {"act": "relu6", "out_scale": 0.02}),
    "k1_s2_c12": ((11, 11, 12), (1, 1), {"stride": (2, 2), "act": "none"}),
    "k1_s2_valid": ((10, 7, 5), (1, 1), {"stride": (2, 2), "padding": "VALID"}),
    "k1_dm3_c5": ((6, 7, 5), (1, 1), {"dm": 3}),
    "k1_c80_calc": ((5, 6, 80), (1, 1), {"act": "relu6", "out_scale": 0.02}),
    "k1_c72_calc_s2": ((7, 5, 72), (1, 1), {"stride": (2, 1), "act": "none"}),
    "k1_shift22": ((6, 6, 8), (1, 1), {"shift22": True}),
    # k x k DSP path
    "k5_s1_c7_none": ((9, 9, 7), (5, 5), {"act": "none"}),
    "k5_s1_c40_relu6": ((14, 14, 40), (5, 5), {"act": "relu6", "out_scale": 0.02}),
    "k5_s2_c30": ((14, 14, 30), (5, 5), {"stride": (2, 2)}),
    "k5_s2_odd": ((13, 11, 9), (5, 5), {"stride": (2, 2), "act": "none"}),
    "k7_s1_c20": ((10, 10, 20), (7, 7), {}),
    "k7_s2_valid": ((15, 13, 8), (7, 7), {"stride": (2, 2), "padding": "VALID"}),
    "k7_s1_long": ((5, 40, 4), (7, 7), {}),  # lines longer than a buffer tile
    "k5_tall": ((20, 6, 4), (5, 5), {}),  # lines down the columns
    "k5_tall_s12": ((21, 9, 8), (5, 5), {"stride": (1, 2)}),
    "k3x5": ((9, 12, 8), (3, 5), {"act": "none"}),
    "k5x2": ((8, 9, 4), (5, 2), {"padding": "VALID"}),
    "k4_s2": ((12, 12, 8), (4, 4), {"stride": (2, 2)}),
    "k3_c6_relu6": ((10, 10, 6), (3, 3), {"act": "relu6", "out_scale": 0.02}),
    "k3_c5_s2": ((11, 11, 5), (3, 3), {"stride": (2, 2), "act": "none"}),
    "k3_s21": ((12, 10, 4), (3, 3), {"stride": (2, 1)}),
    "k5_shift22": ((9, 10, 8), (5, 5), {"shift22": True}),
    "k3_c5_shift22": ((8, 9, 5), (3, 3), {"shift22": True}),
    # depth multipliers > 1 with several input channels
    "dm2_c3_k3": ((12, 12, 3), (3, 3), {"dm": 2}),
    "dm2_c8_k3_s2": ((16, 16, 8), (3, 3), {"dm": 2, "stride": (2, 2)}),
    "dm3_c5_k5": ((9, 8, 5), (5, 5), {"dm": 3, "act": "none"}),
    "dm4_c4_k5": ((10, 10, 4), (5, 5), {"dm": 4}),
    "dm2_c5_k3_valid": ((9, 7, 5), (3, 3), {"dm": 2, "padding": "VALID", "act": "relu6"}),
    # handed back to the portable kernel: stride 3 along the lines
    "back_k5_s3": ((13, 13, 8), (5, 5), {"stride": (3, 3)}),
}

BOARDS = ["host", "stm32f746", "stm32f407", "samd21"]


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_depthwise_fast_paths_bit_exact(name: str, board: str, tmp_path: Path) -> None:
    hwc, k, opts = CASES[name]
    model = dw_model(tmp_path / f"{name}.tflite", hwc, k, **opts)
    r = api.compare(model, board=board, n=2, layers=True)
    assert r.ok, str(r)


# name: (hwc, window): two stride-1 layers, the second forced in place over its input
IN_PLACE = {
    "k1_in_place": ((9, 10, 12), (1, 1)),
    "k5_in_place": ((9, 11, 8), (5, 5)),
    "k3_c6_in_place_long": ((6, 40, 6), (3, 3)),  # 3x3 path: no (channels); k x k: one tile
    "k3_in_place_40": ((40, 40, 4), (3, 3)),  # longer than the 3x3 path's tile
    "k7_in_place_long": ((4, 60, 4), (7, 7)),  # longer than the k x k tile: portable ring
}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_depthwise_fast_paths_in_place(name: str, board: str, tmp_path: Path) -> None:
    hwc, k = IN_PLACE[name]
    model = dw_model(tmp_path / f"{name}.tflite", hwc, k, layers=2)
    g = load_model(model)
    cands = [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]
    p = make_plan(g, choices={op.index: Choice(in_place=True) for op in cands}, search=False)
    second = [op for op in cands if op.index == 1]
    assert second and p.storage[second[0].inputs[0]] == p.storage[second[0].outputs[0]]
    r = api.compare_plan(p, model, board=board, n=2, layers=True)
    assert r.ok, str(r)


def test_1x1_table_is_tflm_arithmetic() -> None:
    """The 1x1 table against the scalar reference formula (qmath's per-value functions)."""
    from tinycompile.ops.conv_common import Requant
    from tinycompile.ops.depthwise import table_1x1
    from tinycompile.quant.qmath import rounding_divide_by_pot, srdhm

    rng = np.random.default_rng(1)
    oc = 6
    w = rng.integers(-127, 128, oc).astype(np.int8)
    bias = rng.integers(-50000, 50000, oc).astype(np.int64)
    mult = rng.integers(1 << 30, (1 << 31) - 1, oc).astype(np.int64)
    shift = np.array([-1, -8, -22, 0, 2, -31], np.int64)
    rq = Requant(7, -3, -128, 90, bias, np.zeros(oc, np.int32), mult, shift)
    tab = table_1x1(w, rq)
    for c in range(oc):
        for x in range(-128, 128):
            acc = int(bias[c]) + int(w[c]) * (x + 7)
            s = int(shift[c])
            y = rounding_divide_by_pot(srdhm(acc * (1 << max(s, 0)), int(mult[c])), max(-s, 0))
            assert tab[c, x + 128] == min(max(y - 3, -128), 90), (c, x)
