"""The few-input-channel CONV_2D kernel (tc_conv_few_s8: firmware/kernels/tc_conv2d_few.c,
its DSP path tc_conv2d_few_dsp.c and ARMv6-M path tc_conv2d_few_m0.c) and the one-channel
depthwise pass feeding it (passes/dw_one_channel.py), bit-exact with TFLM layer by layer on the
host and in QEMU on the Cortex-M7, Cortex-M4 and Cortex-M0+ mappings (each core runs its own
path; the host the portable one, which reads the same weight copy ``wfew``).

Models (tests/modelgen/few_channel.py, random weights): in_c 1, 2 and 3; odd widths; filters
10x8, 3x3, 2x7, 3x5, 1x9, 3x2, 1x5, 2x2, 5x1 and 5x3 (the windows ``few.worth_it`` takes);
strides 1, 2 and (2, 1); SAME (borders: rows skipped,
columns through the stack window) and VALID (the last pixels of the last row kept from reading
past the input); depth multipliers 1, 4 and 8 through the pass; out_c 4, 6, 8, 10, 12, 16, 20
(blocks of four with a partial last one, and more than one chunk of 16), 38 (past where a
window per pixel would be cheaper on ARMv6-M); a 230-wide input (the ARMv6-M band in runs);
per-tensor and per-channel weights; RELU, RELU6 and none; input zero points -3 and -128; a
second layer after the first (the ordinary kernels on its output).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.few_channel import Net, speech

from tinycompile import api
from tinycompile.ops.conv_common import Window
from tinycompile.ops.few import takes, weights_few

BOARDS = ["host", "stm32f746", "stm32f407", "samd21"]  # host, Cortex-M7, M4, M0+


def _nets() -> dict[str, Net]:
    return {
        # the speech layer: depthwise, depth multiplier 8 on one channel, 10x8 stride 2
        "speech_same": speech("SAME"),
        "speech_valid": speech("VALID", seed=3),
        # depth multipliers 1 and 4 through the pass (out_c 1 stays off the few kernel)
        "dw_dm4": Net((1, 13, 11, 1), 4).dw(4, 3, 1, "SAME", "RELU6", per_channel=True),
        "dw_dm1_then_conv": Net((1, 12, 9, 1), 5).dw(1, 3, 2, "VALID").conv(6, 3),
        # first layers over one channel: 3x3 stride 2, odd sizes; 2x7 (two words a row), 3x5,
        # 1x9 (three words); DS-CNN's 10x4 and larger windows stay on the column GEMM
        # (``few.worth_it``)
        "c1_3x3_s2": Net((1, 21, 17, 1), 6).conv(8, 3, 2, "SAME", "RELU6", per_channel=True),
        "c1_2x7_s2": Net((1, 25, 10, 1), 7, zp=-128).conv(20, (2, 7), 2, "SAME", "RELU"),
        "c1_3x5_s2": Net((1, 23, 19, 1), 8).conv(6, (3, 5), 2, "SAME", per_channel=True).conv(5, 3),
        "c1_1x9_s1_valid": Net((1, 11, 13, 1), 9).conv(10, (1, 9), 1, "VALID", "RELU"),
        # two and three channels (windows under 16 values): 3x2 VALID stride 2; 1x5 stride 1
        # (15 values: four words a row); 2x2 stride 2 odd; 5x1 at stride (2, 1)
        "c2_3x2": Net((1, 19, 11, 2), 10).conv(6, (3, 2), 2, "VALID", "RELU"),
        "c3_1x5_s1": Net((1, 15, 13, 3), 11).conv(12, (1, 5), 1, "SAME", "RELU6", per_channel=True),
        "c3_2x2_s2_odd": Net((1, 17, 15, 3), 12, zp=-128).conv(16, 2, 2, "SAME", "NONE"),
        "c3_5x1_s21": Net((1, 12, 9, 3), 13)
        .conv(4, (5, 1), (2, 1), "SAME", "RELU", True)
        .conv(7, 1),
        "c1_oc20_chunks": Net((1, 9, 11, 1), 14).conv(20, (5, 3), 1, "SAME", per_channel=True),
        # ARMv6-M: a band too wide for the stack taken in runs of pixels (115 outputs: 83 + 32);
        # 38 output channels (16 + 16 + 4 + 2) through the band all the same
        "c1_wide_runs": Net((1, 7, 230, 1), 15).conv(8, 3, 2, "SAME", "RELU"),
        "c2_oc38": Net((1, 11, 9, 2), 16, zp=-128).conv(38, (3, 2), 1, "SAME", per_channel=True),
    }


# layers (in schedule order) the few-channel kernel runs: every first layer here, but the
# depth multiplier 1 layer (out_c 1: tc_conv_s8) whose successor (6 over 1 channel) is one
FEW = {name: [0] for name in _nets()} | {"dw_dm1_then_conv": [1]}


def test_the_models_reach_the_kernel(tmp_path: Path) -> None:
    for name, net in _nets().items():
        p = api.plan(net.save(tmp_path / f"{name}.tflite"))
        stmts = [p.lowering.ops[i].stmt for i in p.order]
        got = [k for k, s in enumerate(stmts) if s.startswith("tc_conv_few_s8")]
        assert got == FEW[name], (name, stmts)
        for o in p.graph.ops:  # the pass left no one-channel depthwise layer
            assert o.kind != "DEPTHWISE_CONV_2D" or p.graph.t(o.inputs[0]).shape[3] != 1


@pytest.mark.parametrize(
    "board", [b if b == "host" else pytest.param(b, marks=pytest.mark.qemu) for b in BOARDS]
)
@pytest.mark.parametrize("name", sorted(_nets()))
def test_few_channel_kernel_matches_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board=board, n=3, layers=True)
    assert r.ok, str(r)


def test_weight_layout() -> None:
    """wfew as tc_conv2d.h describes it: blocks of four channels, per row and word the four
    channels' [w0 w2 w1 w3], zeros past the row and past out_c."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (6, 2, 3, 1)).astype(np.int8)  # out_c 6, 2x3, one channel
    f = weights_few(w)
    assert f.dtype == np.int16 and f.size == 2 * 2 * 1 * 16  # 2 blocks, 2 rows, 1 word
    for b in range(2):
        for ky in range(2):
            for k in range(4):
                oc = 4 * b + k
                got = f[(b * 2 + ky) * 16 + 4 * k : (b * 2 + ky) * 16 + 4 * k + 4]
                row = list(w[oc, ky, :, 0]) + [0] if oc < 6 else [0] * 4
                assert list(got) == [row[0], row[2], row[1], row[3]]


def test_which_layers_take_it() -> None:
    def geo(c: int, kh: int, kw: int, oc: int, dil_w: int = 1) -> Window:
        return Window(1, 20, 20, c, 10, 10, oc, kh, kw, 2, 2, 1, dil_w, 1, 1, True)

    assert takes(geo(1, 3, 3, 8), [-5] * 8)
    assert takes(geo(3, 1, 5, 16), [-5] * 16)  # 15 values: 4 words
    assert takes(geo(1, 10, 8, 8), [-5] * 8)  # the speech layer
    assert not takes(geo(1, 10, 4, 64), [-5] * 64)  # DS-CNN's: the column GEMM is close
    assert not takes(geo(3, 3, 3, 8), [-5] * 8)  # an RGB stem likewise
    assert not takes(geo(3, 1, 7, 16), [-5] * 16)  # 21 values: 6 words
    assert not takes(geo(4, 3, 3, 16), [-5] * 16)  # four channels: the column GEMM
    assert not takes(geo(1, 1, 1, 8), [-5] * 8)  # pointwise
    assert not takes(geo(1, 3, 3, 3), [-5] * 3)  # out_c < 4
    assert not takes(geo(1, 3, 3, 8, dil_w=2), [-5] * 8)
    assert not takes(geo(1, 3, 3, 8), [-5] * 7 + [40])  # an ONNX layer's requantization
