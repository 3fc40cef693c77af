"""DEPTHWISE_CONV_2D's depth-multiplier and small-layer paths, bit-exact with TFLM on the host and
in QEMU (Cortex-M7 stm32f746, Cortex-M4 stm32f407, Cortex-M0+ samd21):

- the ARMv6-M path for depth multipliers in fours (tc_depthwise_m0.c's tc_dwconv_dm4_m0: a
  zero-point-padded band per output row, four output channels per input byte): 3x3 / 5x5,
  strides 1 / 2, SAME / VALID, windows larger than the image, 1x1 outputs, input channels not in
  fours, a channel with shift -22; depth multipliers 2 and 6 beside it (the other paths);
- the DSP any-window path (tc_depthwise_kxk_dsp.c) on small layers, its last block of fewer
  than four channels;
- the ARMv6-M 3x3 border windows copied a word per tap (channels in fours), in place.

Few firmware builds: each model chains several layers (every layer's output is compared).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_kernels_fast_dw2 import _options, _out

from tests.modelgen.tflite_writer import Node, T, write
from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.ops import Choice
from tinycompile.pipeline import compile_graph as make_plan
from tinycompile.pipeline import prepare_graph

# a layer: (k, stride, padding, depth multiplier, activation, shift -22 on one channel)
Layer = tuple[int, int, str, int, str, bool]


def chain_model(path: Path, hwc: tuple[int, int, int], layers: list[Layer], seed: int) -> Path:
    """A chain of k x k DEPTHWISE_CONV_2D layers on a 1 x H x W x C int8 input."""
    rng = np.random.default_rng(seed)
    h, w, c = hwc
    tensors = [T("x", (1, h, w, c), quant=(0.05, -7))]
    nodes = []
    cur, scale, (ih, iw, ic) = 0, 0.05, hwc
    for i, (k, s, padding, dm, act, shift22) in enumerate(layers):
        oc = ic * dm
        oh, ow = _out(padding, ih, k, s), _out(padding, iw, k, s)
        ws = rng.uniform(0.01, 0.04, oc) * 9 / (k * k)
        if shift22:
            ws[oc // 2] = 1e-6 / 4  # shift -22 with these input / output scales
        wq = rng.integers(-128, 128, (1, k, k, oc), dtype=np.int64).astype(np.int8)
        bias = rng.integers(-3000, 3000, oc).astype(np.int32)
        tensors.append(T(f"w{i}", (1, k, k, oc), quant=(list(ws), [0] * oc), data=wq, quant_axis=3))
        tensors.append(T(f"b{i}", (oc,), "int32", quant=(list(scale * ws), [0] * oc), data=bias))
        oz = -128 if act != "none" else 5
        out_scale = 0.02 if act == "relu6" else 0.08
        tensors.append(T(f"y{i}", (1, oh, ow, oc), quant=(out_scale, oz)))
        n = len(tensors)
        nodes.append(
            Node(
                "DEPTHWISE_CONV_2D",
                [cur, n - 3, n - 2],
                [n - 1],
                "DepthwiseConv2DOptions",
                _options(padding, (s, s), dm, act),
            )
        )
        cur, scale, (ih, iw, ic) = n - 1, out_scale, (oh, ow, oc)
    path.write_bytes(write(tensors, nodes, [0], [cur]))
    return path


MODELS: dict[str, tuple[tuple[int, int, int], list[Layer]]] = {
    # depth multipliers in fours: input channels not in fours, 5x5 / 3x3, strides 1 / 2,
    # SAME / VALID, shift -22, then a window larger than the image
    "dm_chain": (
        (9, 10, 3),
        [
            (5, 1, "SAME", 4, "relu", False),
            (3, 2, "VALID", 8, "none", True),
            (5, 2, "SAME", 1, "relu6", False),
        ],
    ),
    # tiny spatial sizes: a 3x3 input, dm 4, then dm 8 at stride 2, then dm 2 to a 1x1 output
    "dm_tiny": (
        (3, 3, 2),
        [
            (3, 1, "SAME", 4, "none", False),
            (5, 2, "SAME", 8, "relu", True),
            (3, 2, "SAME", 2, "none", False),
        ],
    ),
    # dm 6 at stride 2, then dm 4 with a 7x7 window over lines wider than the ARMv6-M band's
    # column tile (two tiles)
    "dm_6_wide": (
        (5, 40, 2),
        [(3, 2, "SAME", 6, "relu6", False), (7, 1, "SAME", 4, "none", False)],
    ),
    # the small DSP-path layer (5 channels: a last block of one), then dm 4, 5x5 VALID
    "small_s2": (
        (11, 11, 5),
        [(3, 2, "SAME", 1, "none", False), (5, 1, "VALID", 4, "relu", True)],
    ),
}

BOARDS = ["host", "stm32f746", "stm32f407", "samd21"]


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_depthwise_dm_paths_bit_exact(name: str, board: str, tmp_path: Path) -> None:
    hwc, layers = MODELS[name]
    model = chain_model(tmp_path / f"{name}.tflite", hwc, layers, seed=len(name))
    r = api.compare(model, board=board, n=2, layers=True)
    assert r.ok, str(r)


# two stride-1 3x3 layers over channels in fours, the second forced in place: 3x3 and 6x9
# images (every / most pixels a border; the ARMv6-M windows copied a word per tap)
IN_PLACE = {"border_3x3x16": (3, 3, 16), "border_6x9x8": (6, 9, 8)}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_depthwise_borders_in_place(name: str, board: str, tmp_path: Path) -> None:
    layers: list[Layer] = [(3, 1, "SAME", 1, "none", False), (3, 1, "SAME", 1, "relu", True)]
    model = chain_model(tmp_path / f"{name}.tflite", IN_PLACE[name], layers, seed=3)
    g = load_model(model)
    cands = [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]
    p = make_plan(g, choices={op.index: Choice(in_place=True) for op in cands}, search=False)
    second = [op for op in cands if op.index == 1]
    assert second and p.storage[second[0].inputs[0]] == p.storage[second[0].outputs[0]]
    r = api.compare_plan(p, model, board=board, n=2, layers=True)
    assert r.ok, str(r)
