"""DEPTHWISE_CONV_2D's Helium path on the Cortex-M55 (firmware/kernels/tc_depthwise_mve.c, TC_MVE:
qemu-m55), bit-exact with TFLM in QEMU, every layer compared: every shape class it takes and
every one it hands back.

- its assembly passes: lines along rows and down columns (along the rows where columns would
  space outputs beyond the scatter's 16-bit offsets), strides 1 and 2 (and 2 across the lines
  only), SAME / VALID, RELU / RELU6 / none, 1 to 100 channels (8, 16, 24, 40, 64, 100;
  blocks of four and a last block of one to three; slices of 16 and fewer), lines longer than a
  buffer tile, line ends of one to three outputs past the passes, lines of one to three outputs,
  a channel at shift -22 or -31, a folded bias near 2^29, a RELU6 narrower than int8;
- in C with intrinsics: a left shift, the ONNX variant (an ONNX depthwise QLinearConv with
  asymmetric pads), and every layer at -O0;
- in place (chains of two stride-1 layers forced in place), and handed back: lines longer than
  a tile in place, depth multiplier 2, stride 3, dilation 2, a 5x5 window.

Each model chains layers on independent inputs, so a few firmware builds cover it all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

import tinycompile.run.board as run_board
from tests.modelgen.tflite_writer import Node, T, write
from tinycompile import api
from tinycompile.build import FirmwareBuild, build_firmware
from tinycompile.frontend import load_model
from tinycompile.ops import Choice
from tinycompile.pipeline import compile_graph as make_plan
from tinycompile.pipeline import prepare_graph

ACT = {"none": 0, "relu": 1, "relu6": 3}
PAD = {"SAME": 0, "VALID": 1}


def _out(padding: str, n: int, k: int, s: int, d: int) -> int:
    return -(-n // s) if padding == "SAME" else (n - (k - 1) * d - 1) // s + 1


def _options(padding: str, stride: tuple[int, int], dm: int, act: str, dil: tuple[int, int]):
    def write_options(b):
        tflite.DepthwiseConv2DOptionsStart(b)
        tflite.DepthwiseConv2DOptionsAddPadding(b, PAD[padding])
        tflite.DepthwiseConv2DOptionsAddStrideW(b, stride[1])
        tflite.DepthwiseConv2DOptionsAddStrideH(b, stride[0])
        tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, dm)
        tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
        tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, dil[1])
        tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, dil[0])
        return tflite.DepthwiseConv2DOptionsEnd(b)

    return write_options


def chains_model(
    path: Path, chains: list[tuple[tuple[int, int, int], list[dict]]], seed: int
) -> Path:
    """One model of independent chains of DEPTHWISE_CONV_2D layers, each from its own
    1 x H x W x C int8 input to its own output. A layer (dict): stride (sh, sw) (1, 1), padding
    SAME, act relu, out_scale 0.08, dm 1, k (3, 3), dil (1, 1); shift: one channel's weight
    scale giving that requantization shift; big_bias: one channel's bias near 2^29."""
    rng = np.random.default_rng(seed)
    tensors: list[T] = []
    nodes: list[Node] = []
    inputs, outputs = [], []
    for ci, ((h, w, c), layers) in enumerate(chains):
        tensors.append(T(f"x{ci}", (1, h, w, c), quant=(0.05, int(rng.integers(-128, 10)))))
        cur, scale, (ih, iw, ic) = len(tensors) - 1, 0.05, (h, w, c)
        inputs.append(cur)
        for li, lay in enumerate(layers):
            sh, sw = lay.get("stride", (1, 1))
            kh, kw = lay.get("k", (3, 3))
            dh, dw = lay.get("dil", (1, 1))
            padding, act = lay.get("padding", "SAME"), lay.get("act", "relu")
            dm = lay.get("dm", 1)
            oc = ic * dm
            oh, ow = _out(padding, ih, kh, sh, dh), _out(padding, iw, kw, sw, dw)
            out_scale = lay.get("out_scale", 0.08)
            ws = rng.uniform(0.005, 0.03, oc) * 9 / (kh * kw)
            if "shift" in lay:  # in_scale * w_scale / out_scale = 0.75 * 2^shift
                ws[oc // 2] = 0.75 * 2.0 ** lay["shift"] * out_scale / scale
            wq = rng.integers(-128, 128, (1, kh, kw, oc), dtype=np.int64).astype(np.int8)
            bias = rng.integers(-3000, 3000, oc).astype(np.int32)
            if lay.get("big_bias"):
                bias[oc // 3] = 500_000_000
            name = f"c{ci}l{li}"
            tensors.append(
                T(f"w{name}", (1, kh, kw, oc), quant=(list(ws), [0] * oc), data=wq, quant_axis=3)
            )
            tensors.append(
                T(f"b{name}", (oc,), "int32", quant=(list(scale * ws), [0] * oc), data=bias)
            )
            oz = -128 if act != "none" else int(rng.integers(-20, 20))
            tensors.append(T(f"y{name}", (1, oh, ow, oc), quant=(out_scale, oz)))
            n = len(tensors)
            nodes.append(
                Node(
                    "DEPTHWISE_CONV_2D",
                    [cur, n - 3, n - 2],
                    [n - 1],
                    "DepthwiseConv2DOptions",
                    _options(padding, (sh, sw), dm, act, (dh, dw)),
                )
            )
            cur, scale, (ih, iw, ic) = n - 1, out_scale, (oh, ow, oc)
        outputs.append(cur)
    path.write_bytes(write(tensors, nodes, inputs, outputs))
    return path


# Models: each a few independent chains (one firmware); every layer's output is compared.
# Lines run along the longer output axis (rows when out_h <= out_w); a tile holds 30 outputs
# at stride 1, 15 at stride 2 (12 when a line takes several), passes four.
MODELS: dict[str, list[tuple[tuple[int, int, int], list[dict]]]] = {
    # lines along rows: stride 1 / 2, SAME / VALID, line ends of 0-3 outputs past the passes,
    # several tiles, a stride of 2 across the lines or along them only
    "rows": [
        (
            (12, 30, 16),
            [
                {},
                {"stride": (2, 2), "act": "none"},
                {"padding": "VALID"},
                {"stride": (2, 2), "padding": "VALID", "act": "none"},
            ],
        ),
        ((8, 64, 24), [{"act": "none"}, {"stride": (2, 2)}, {"stride": (2, 1), "act": "none"}]),
        ((9, 10, 8), [{"stride": (1, 2)}, {"padding": "VALID", "act": "none"}]),
    ],
    # lines down the columns (out_h > out_w): taps and strides swap roles; the DS-CNN's layers;
    # a tall layer whose column lines would put outputs 3 * 2 * 10924 bytes apart (beyond the
    # scatter's 16-bit offsets): along the rows instead
    "tall": [
        (
            (29, 7, 40),
            [
                {},
                {"stride": (2, 1), "act": "none"},
                {"stride": (1, 2)},
                {"padding": "VALID", "act": "none"},
            ],
        ),
        ((25, 5, 64), [{}, {"act": "none"}]),
        ((7, 6, 100), [{"stride": (2, 2)}, {"padding": "VALID", "act": "none"}]),
        ((40, 3, 16), [{"stride": (2, 2), "act": "none"}]),
        ((5, 2, 10924), [{"act": "none"}]),
    ],
    # channels not in fours (a last block of one to three), lines of one to three outputs
    "tails": [
        ((8, 11, 6), [{}, {"stride": (2, 2), "act": "none"}]),
        ((11, 9, 5), [{"stride": (2, 2)}, {"act": "none"}]),
        ((13, 5, 7), [{}]),
        ((3, 3, 24), [{"act": "none"}, {"stride": (2, 2)}]),
        ((1, 2, 20), [{}]),
        ((5, 1, 3), [{"act": "none"}]),
        ((1, 1, 17), [{}]),
    ],
    # the requantization: RELU6 narrower than int8, a left shift (output scale 0.0004), one
    # channel at shift -22 or -31, a bias near 2^29
    "requant": [
        ((8, 9, 8), [{"act": "relu6", "out_scale": 0.05}, {"out_scale": 0.0004}, {"shift": -22}]),
        ((6, 7, 12), [{"big_bias": True, "act": "none"}, {"shift": -31}]),
    ],
    # handed back to the other kernels: depth multiplier 2, stride 3, dilation 2, a 5x5 window
    "back": [
        ((7, 8, 4), [{"dm": 2}, {"stride": (3, 3)}, {"dil": (2, 2), "act": "none"}, {"k": (5, 5)}]),
    ],
}

BOARD = "qemu-m55"


@pytest.mark.qemu
@pytest.mark.parametrize("name", sorted(MODELS))
def test_mve_depthwise_bit_exact(name: str, tmp_path: Path) -> None:
    model = chains_model(tmp_path / f"{name}.tflite", MODELS[name], seed=len(name))
    r = api.compare(model, board=BOARD, n=2, layers=True)
    assert r.ok and r.layers and all(x["compared"] for x in r.layers), str(r)


@pytest.mark.qemu
def test_mve_depthwise_in_place(tmp_path: Path) -> None:
    """Every in-place candidate (a stride-1 layer whose output is as large as its input) forced
    in place: chains of two along rows and down the columns, a last block of two channels, lines
    longer than a tile (handed back to the portable kernel's ring), and the requantization and
    tail chains (the C passes, the clamp after the assembly passes, predicated stores)."""
    chains = [
        ((6, 20, 24), [{}, {"act": "none"}]),
        ((25, 5, 64), [{}, {}]),
        ((5, 9, 6), [{}, {"act": "none"}]),
        ((4, 40, 8), [{}, {}]),
        *MODELS["requant"],
        *MODELS["tails"],
    ]
    model = chains_model(tmp_path / "inplace.tflite", chains, seed=5)
    g = load_model(model)
    cands = [p.op for p in prepare_graph(g) if p.data.in_place_scratch is not None]
    p = make_plan(g, choices={op.index: Choice(in_place=True) for op in cands}, search=False)
    assert len(cands) >= 15
    assert all(p.storage[op.inputs[0]] == p.storage[op.outputs[0]] for op in cands)
    r = api.compare_plan(p, model, board=BOARD, n=2, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
def test_mve_depthwise_o0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At -O0 (TC_ASM_LOOPS 0) every pass runs in C with the intrinsics: the row and tail
    chains, bit-exact."""
    built: list[FirmwareBuild] = []

    def at_o0(*args, **kwargs) -> FirmwareBuild:
        built.append(build_firmware(*args, **{**kwargs, "opt": "-O0"}))
        return built[-1]

    monkeypatch.setattr(run_board, "build_firmware", at_o0)
    model = chains_model(tmp_path / "o0.tflite", MODELS["rows"][:1] + MODELS["tails"], seed=7)
    r = api.compare(model, board=BOARD, n=2, layers=True, workdir=tmp_path / "w")
    assert r.ok, str(r)
    assert len(built) == 1


@pytest.mark.qemu
def test_mve_depthwise_onnx_variant(tmp_path: Path) -> None:
    """An ONNX depthwise QLinearConv (onnxruntime's requantization, shift > 31: each lane
    through tc_out_s8) with pads (3, 2, 0, 2) and strides (1, 2)."""
    pytest.importorskip("onnx")
    from tests.onnxgen.handmade import build_handmade

    path = build_handmade(tmp_path)["pads"]
    r = api.compare(path, board=BOARD, n=4, layers=True)
    assert r.ok and r.layers, str(r)


@pytest.mark.qemu
def test_mve_depthwise_instructions(tmp_path: Path) -> None:
    """The Helium path runs (not the portable loops it hands back to): the DS-CNN's 25 x 5 x 64
    layer and a stride-2 layer take about one instruction per MAC."""
    chains = [((25, 5, 64), [{}]), ((24, 24, 32), [{"stride": (2, 2)}])]
    model = chains_model(tmp_path / "perf.tflite", chains, seed=3)
    r = api.compare(model, board=BOARD, n=1, layers=True)
    assert r.ok, str(r)
    per_mac = [x["instructions"] / x["macs"] for x in r.profile["layers"]]
    assert per_mac[0] < 1.2 and per_mac[1] < 1.4, per_mac
