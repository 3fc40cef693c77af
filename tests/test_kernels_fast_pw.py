"""The pointwise few-input-channel CONV_2D kernel (tc_conv_pw_s8: firmware/kernels/
tc_conv2d_pwf.c, its parameter stream from tinycompile/ops/pwf.py), bit-exact with TFLM layer by
layer on the host (portable C) and in QEMU on the Cortex-M7, Cortex-M4 (SXTB16 + SMLAD +
SMMLAR) and Cortex-M0+ (tc_mulacc16) mappings.

Chains of 1x1 layers (tests/modelgen/few_channel.py, random weights), so that few
firmware builds cover: in_c 1 to 12 on the kernel (7 NW variants: 1, 2, 3, 4, 5, 6 words,
in_c % 4 of 0 to 3) and 8, 13, 16 staying on tc_conv_s8; odd pixel counts (35, 99) and a last
pixel whose words would pass the input's end (copied to the stack); out_c not a multiple of 4;
strides 1 and 2 (odd sizes); in place forwards (equal and shrinking) and backwards (a growing
layer in a buffer growing upwards) without a temp; RELU, RELU6 and none; per-tensor and
per-channel weights, one channel with a shift of -22; input zero points -3 and -128. And the
in-place pointwise paths of tc_conv_s8 without a column buffer (tc_conv2d.c's blocks of pixels,
tc_conv2d_dsp.c's column on the stack) for wider layers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.few_channel import Net

from tinycompile import api
from tinycompile.ops import DEFAULT_CHOICE
from tinycompile.ops.conv_common import Requant
from tinycompile.ops.pwf import stream, takes, words

BOARDS = ["host", "stm32f746", "stm32f407", "samd21"]  # host, Cortex-M7, M4, M0+


def _shift22(net: Net) -> Net:
    """The last layer's channel 0 rescaled so that its requantization shift is -22."""
    w, b, y = net.tensors[-3], net.tensors[-2], net.tensors[-1]
    in_s = net.tensors[net.nodes[-1].inputs[0]].quant[0]
    ws, bs = list(w.quant[0]), list(b.quant[0])
    ws[0] = float(y.quant[0] / in_s * 2.0**-22.4)
    bs[0] = float(np.float32(in_s) * np.float32(ws[0]))
    w.quant, b.quant = (ws, w.quant[1]), (bs, b.quant[1])
    return net


def _nets() -> dict[str, Net]:
    return {
        # stride 1, 5x7 pixels: 3 -> 5 -> 7 -> 7 -> 2 -> 1 -> 11 -> 4 channels, every layer in
        # place: forwards (5 -> 7, 7 -> 7, 1 -> 11 growing downwards) and backwards (7 -> 2 and
        # 11 -> 4 shrinking in a grown buffer)
        "chain_s1": Net((1, 5, 7, 3), 21)
        .conv(5, 1, act="RELU")
        .conv(7, 1)
        .conv(7, 1, act="RELU6")
        .conv(2, 1)
        .conv(1, 1, act="RELU")
        .conv(11, 1)
        .conv(4, 1, act="RELU6"),
        # per-channel weights, zero point -128, 9x11 pixels: 6 -> 9 (stride 2, a channel with
        # shift -22) -> 10 -> 12 -> 6 (stride 2) -> 13 channels
        "chain_pc": _shift22(Net((1, 9, 11, 6), 22, zp=-128).conv(9, 1, 2, per_channel=True))
        .conv(10, 1, act="RELU", per_channel=True)
        .conv(12, 1, per_channel=True)
        .conv(6, 1, 2, act="RELU6", per_channel=True)
        .conv(13, 1, per_channel=True),
        # tc_conv_s8's in-place pointwise paths without a granted column (at the SRAM peak), on
        # M4/M7 the column on the stack (16 -> 24 forwards, 24 -> 18 backwards, 18 -> 19 over
        # a staged window: in_c % 4 != 0), elsewhere through the temp
        "chain_stack": Net((1, 7, 9, 16), 24)
        .conv(24, 1, act="RELU")
        .conv(18, 1)
        .conv(19, 1)
        .conv(3, 3, 2),
        # in_c 13, 16 and 8 stay on tc_conv_s8; 4 and 12 on the kernel between them
        "chain_wide": Net((1, 7, 5, 13), 23)
        .conv(16, 1, act="RELU")
        .conv(4, 1)
        .conv(8, 1, act="RELU6")
        .conv(12, 1, 2)
        .conv(3, 1),
    }


# per model, per layer in schedule order: (runs tc_conv_pw_s8, runs in place)
WANT = {
    "chain_s1": [(True, True)] * 7,
    "chain_pc": [(True, False)] * 5,
    "chain_wide": [(False, True), (False, True), (True, True), (False, False), (True, True)],
    "chain_stack": [(False, True)] * 3 + [(False, False)],
}  # fmt: skip


def test_the_models_reach_the_kernel(tmp_path: Path) -> None:
    for name, net in _nets().items():
        p = api.plan(net.save(tmp_path / f"{name}.tflite"))
        got = [
            (
                p.lowering.ops[i].stmt.startswith("tc_conv_pw_s8"),
                p.choices.get(i, DEFAULT_CHOICE).in_place,
            )
            for i in p.order
        ]
        assert got == WANT[name], (name, got)
        if name == "chain_stack":  # no column buffer granted
            assert not any(p.choices.get(i, DEFAULT_CHOICE).use_scratch for i in p.order)


@pytest.mark.parametrize(
    "board", [b if b == "host" else pytest.param(b, marks=pytest.mark.qemu) for b in BOARDS]
)
@pytest.mark.parametrize("name", sorted(_nets()))
def test_pointwise_kernel_matches_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board=board, n=3, layers=True)
    assert r.ok, str(r)


def _rq(oc: int, shift: int = -9, bias: int = 100) -> Requant:
    return Requant(
        in_offset=3,
        out_offset=-5,
        act_min=-128,
        act_max=127,
        bias=None,
        bias_eff=np.full(oc, bias, np.int64),
        mult=np.full(oc, 1 << 30, np.int64),
        shift=np.full(oc, shift, np.int64),
    )


def test_stream_layout() -> None:
    """Per channel: 2 bias_eff, mult, q, r, then the doubled weights of values (4g, 4g + 2) and
    (4g + 1, 4g + 3) as int16 pairs, low half first; zeros past in_c."""
    w = np.arange(1, 2 * 5 + 1, dtype=np.int8).reshape(2, 1, 1, 5) * np.int8(-1)
    s = stream(w, _rq(2)).reshape(2, -1)
    assert words(5) == 3 and s.shape == (2, 4 + 3)
    assert list(s[0, :4]) == [200, 1 << 30, (1 << 8) - 5 * (1 << 9), 9]
    halves = s[:, 4:].view(np.int16).reshape(2, 3, 2)  # little-endian: (low, high)
    assert halves[1].tolist() == [[-12, -16], [-14, -18], [-20, 0]]


def test_which_layers_take_it() -> None:
    from tinycompile.ops.conv_common import Window

    def geo(c: int, oc: int = 8, k: int = 1) -> Window:
        return Window(1, 8, 8, c, 8, 8, oc, k, k, 1, 1, 1, 1, 0, 0, False)

    def w(c: int, oc: int = 8) -> np.ndarray:
        return np.full((oc, 1, 1, c), 100, np.int8)

    assert all(takes(geo(c), 1, w(c), _rq(8)) for c in (1, 2, 3, 5, 7, 9, 12))
    assert not takes(geo(8), 1, w(8), _rq(8))  # the pair loops without tails
    assert not takes(geo(13), 1, w(13), _rq(8))  # more words than registers
    assert not takes(geo(4), 2, w(2), _rq(8))  # groups
    assert not takes(geo(4), 1, w(4), _rq(8, shift=0))  # a shift >= 0 (or ONNX's)
    assert not takes(geo(4), 1, w(4), _rq(8, bias=1 << 30))  # acc2 could leave int32
