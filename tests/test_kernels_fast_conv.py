"""The CONV_2D fast paths of the Cortex-M4/M7 builds (issue 11), bit-exact
with TFLM in every layer under QEMU: they are only compiled for cores with the DSP extension,
so the host tests never run them.

Paths and the models that reach them (written here with the flatbuffer writer, per-tensor
quantization, random weights; shapes chosen for the edge cases: channel counts not a multiple
of 4, odd widths and pixel counts, padding, strides 1 and 2, depths not a multiple of 8):

- the int16 column GEMM (tc_conv2d_dsp.c, windows of at least 16 values): with the column the
  planner grants (``col16``'s stride-2 layer, ``first_c3``'s second layer with a lone last
  channel), in the output's tail at the SRAM peak (``col16``'s and ``col16_c3``'s first
  layers, the latter staging windows over 3 channels and ending on a lone pixel), beside the
  in-place ring (``col16``) and in place for pointwise layers forwards and backwards
  (``pointwise``, ``col16_c3``);
- ``tc_dot22_s8``'s assembly loop (two pixels x two channels sharing one offset): pointwise
  pairs;
- ``tc_dot14_s8`` (one pixel x four channels): lone im2col pixels, lone pixels of the k x k
  in-place ring without a column, in-place pointwise pixels through the temp;
- ``tc_conv_pw_run`` (pointwise, stride 1, windows under 16 values); ``tc_conv_pw_strided_row``
  (pointwise, strides 2 and 3), both in tc_conv2d_pw_dsp.c;
- the int16 column in the output's tail when the planner refuses the scratch, whatever the
  channel counts (first layers over 5 and 7 channels, at the SRAM peak, windows staged as int8),
  with the last pixels by the direct loops (the int8 im2col of the other cores is not built on
  these);
- border pixels over >= 8 channels: only their taps inside the image, read in place with the
  input offset added as they are unpacked (``ring*``, ``edge_dil`` with a dilation down the
  rows, ``edge_k5_s2``); over fewer: the whole window on the stack (``first_c5``);
- interior pixels of the direct loops and of the in-place ring in pairs: two pixels x two
  channels over the window's rows (``tc_dot22r_s8``: ``ring``, ``pw_plain``, ``edge_k5_s2_c18``).

Since layers whose every pixel can go through the column GEMM call ``tc_conv_s8_col`` (k x k
ones over in_c % 4 == 0 channels without a column take it in chunks on the stack, for all their
pixels or those past the output's tail: tests/test_kernels_fast_chunk.py), the direct loops and
the ring are reached here by windows over other channel counts (``ring``, ``edge_dil13``,
``edge_k5_s2_c18``, ``dil_w11``); their twins over multiples of 4 check the chunks on the same
shapes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.ops import DEFAULT_CHOICE

BOARDS = ["stm32f407", "stm32f746"]  # Cortex-M4, Cortex-M7
ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}


def _conv_opts(stride: int, padding: str, act: str, dil_h: int = 1, dil_w: int = 1):
    def w(b) -> int:
        tflite.Conv2DOptionsStart(b)
        tflite.Conv2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
        tflite.Conv2DOptionsAddStrideW(b, stride)
        tflite.Conv2DOptionsAddStrideH(b, stride)
        tflite.Conv2DOptionsAddDilationWFactor(b, dil_w)
        tflite.Conv2DOptionsAddDilationHFactor(b, dil_h)
        tflite.Conv2DOptionsAddFusedActivationFunction(b, ACT[act])
        return tflite.Conv2DOptionsEnd(b)

    return w


def _fc_opts(act: str):
    def w(b) -> int:
        tflite.FullyConnectedOptionsStart(b)
        tflite.FullyConnectedOptionsAddFusedActivationFunction(b, ACT[act])
        return tflite.FullyConnectedOptionsEnd(b)

    return w


class _Net:
    """A chain of CONV_2D / FULLY_CONNECTED layers with per-tensor int8 quantization; output
    scales follow the accumulators' spread so outputs use the int8 range."""

    def __init__(self, shape: tuple[int, ...], seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.tensors = [T("x", shape, quant=(0.05, -3))]
        self.nodes: list[Node] = []
        self.cur = 0
        self.saved: list[int] = []

    def _layer(self, kind, wshape, out_shape, opts_name, opts, k: int) -> None:
        in_s, in_zp = self.tensors[self.cur].quant
        w_s = 0.02
        w = self.rng.integers(-127, 128, wshape).astype(np.int8)
        oc = wshape[0]
        b_s = float(np.float32(np.float32(in_s) * np.float32(w_s)))
        bias = self.rng.integers(-3000, 3000, oc).astype(np.int32)
        acc_std = np.sqrt(k) * 60.0 * 73.0
        out_q = (float(np.float32(in_s * w_s * acc_std / 45.0)), int(self.rng.integers(-20, 20)))
        n = len(self.tensors)
        self.tensors += [
            T(f"w{n}", wshape, quant=(w_s, 0), data=w),
            T(f"b{n}", (oc,), "int32", quant=(b_s, 0), data=bias),
            T(f"y{n}", out_shape, quant=out_q),
        ]
        self.nodes.append(Node(kind, [self.cur, n, n + 1], [n + 2], opts_name, opts))
        self.cur = n + 2

    def conv(self, oc: int, k, stride=1, padding="SAME", act="NONE", dil_h=1, dil_w=1):
        _, h, w, c = self.tensors[self.cur].shape
        kh, kw = (k, k) if isinstance(k, int) else k
        if padding == "SAME":
            oh, ow = -(-h // stride), -(-w // stride)
        else:
            oh = (h - (kh - 1) * dil_h - 1) // stride + 1
            ow = (w - (kw - 1) * dil_w - 1) // stride + 1
        self._layer(
            "CONV_2D", (oc, kh, kw, c), (1, oh, ow, oc), "Conv2DOptions",
            _conv_opts(stride, padding, act, dil_h, dil_w), kh * kw * c,
        )  # fmt: skip
        return self

    def fc(self, oc: int, act: str = "NONE"):
        shape = self.tensors[self.cur].shape
        depth = shape[-1]
        rows = int(np.prod(shape[:-1]))
        out = (rows, oc) if rows > 1 else (1, oc)
        self._layer(
            "FULLY_CONNECTED", (oc, depth), out, "FullyConnectedOptions", _fc_opts(act), depth
        )
        return self

    def save(self, path: Path) -> Path:
        path.write_bytes(write(self.tensors, self.nodes, [0], [self.cur]))
        return path


def _nets() -> dict[str, _Net]:
    return {
        # first layers over 1 channel (a 5x3 window: the few-channel kernel, tc_conv2d_few*.c,
        # tests/test_kernels_fast_few.py) and 3 channels (27 values: the column kernel), then
        # k x k convolutions whose im2col scratch is kept (pairs and lone pixels, 6 and 7
        # channels)
        "first_c1": _Net((1, 21, 9, 1), 1).conv(10, (5, 3), 2, act="RELU").conv(6, 3, 2),
        "first_c3": _Net((1, 15, 13, 3), 2).conv(8, 3, 1, act="RELU6").conv(7, 2, 2, "VALID"),
        # their twins over 5 and 7 channels at the SRAM peak (im2col scratch refused: windows
        # copied into the output's tail; channels not a multiple of 4), odd widths, stride 2
        # and 1, SAME and VALID
        "first_c5": _Net((1, 21, 9, 5), 1).conv(10, 3, 2, act="RELU").conv(6, 3, 2),
        "first_c7": _Net((1, 15, 13, 7), 2).conv(8, 3, 1, act="RELU6").conv(7, 2, 2, "VALID"),
        # pointwise in place with columns: growing (its buffer grows downwards: forwards),
        # shrinking in that grown buffer (backwards), equal; then stride 2 (direct loops) and
        # stride 1 out of place (13 values: pairs); odd pixel counts, channels 8, 18, 14, 13,
        # 11 (in_c 1..7 and 9..12 take tc_conv_pw_s8 instead: tests/test_kernels_fast_pw.py)
        "pointwise": _Net((1, 5, 7, 8), 3)
        .conv(18, 1, act="RELU")
        .conv(14, 1)
        .conv(14, 1, act="RELU6")
        .conv(13, 1, 2)
        .conv(11, 1),
        # pointwise in place without columns (at the peak): shrinking forwards and equal, one
        # pixel x four channels through the temp
        "pw_shrink": _Net((1, 5, 7, 17), 11).conv(13, 1).conv(13, 1, act="RELU").conv(3, 3, 2),
        # pointwise stride 1 growing in place without a column (downwards, forwards, through
        # the temp: one pixel x four channels), then a k x k stride-2 layer at the peak (99
        # values over 11 channels into 6: direct loops, borders through the stack window)
        "pw_plain": _Net((1, 3, 5, 13), 7).conv(15, 1, act="RELU").conv(6, 3, 2),
        # pointwise strides 2 and 3: pixel pairs x channel pairs (oc, oc + s), a lone last
        # pixel (width 5), channels beyond the last block of 2s (10 = 8 + 2, 7 = 6 + 1); over
        # 14 and 16 channels (10 takes tc_conv_pw_s8)
        "pw_strided": _Net((1, 5, 9, 14), 8).conv(10, 1, 2, act="RELU").conv(16, 1).conv(7, 1, 3),
        # k x k in place (stride 1, SAME, out_c <= in_c) without a column, over channel counts
        # that are not multiples of 4 (those take the column in chunks on the stack:
        # tests/test_kernels_fast_chunk.py): the output ring, interior pixels in pairs (their
        # outputs on the stack), borders and lone pixels one at a time
        "ring": _Net((1, 7, 9, 10), 4).conv(10, 3, act="RELU").conv(9, 3).conv(5, (3, 5)),
        # the ring over wide windows, each layer alone (at the peak: no column): 5x5 over 22
        # channels (K = 550), 7x7 (K = 1176), borders over their taps inside the image
        "ring_k5": _Net((1, 7, 6, 22), 12).conv(22, 5, act="RELU6"),
        "ring_k7": _Net((1, 7, 6, 24), 13).conv(20, 7),
        # ... and window rows of 360 values (5 x 72)
        "ring_k5_wide": _Net((1, 5, 4, 72), 14).conv(16, 5, act="RELU"),
        # borders read only their taps inside the image (tc_conv_edge / tc_conv_rows_dsp: the
        # input offset added as it is unpacked, tails of 4 values with 12 channels, the last
        # block of four over channels again, a whole window row above the image with a
        # dilation of 3 down the rows); interior pixels in pairs (tc_conv_pair_dsp) at stride
        # 2, a lone last channel
        # (over 12 and 16 channels the first layers take the chunks; their twins over 13 and
        # 18 the direct loops)
        "edge_dil": _Net((1, 9, 7, 12), 15).conv(9, 3, act="RELU", dil_h=3).conv(7, 3, 2),
        "edge_dil13": _Net((1, 9, 7, 13), 15).conv(9, 3, act="RELU", dil_h=3).conv(7, 3, 2),
        "edge_k5_s2": _Net((1, 11, 13, 16), 16).conv(13, 5, 2, act="RELU6").conv(8, 3),
        "edge_k5_s2_c18": _Net((1, 11, 13, 18), 16).conv(13, 5, 2, act="RELU6").conv(8, 3),
        # dilation across (window rows not contiguous): one pixel at a time, four channels per
        # pass over tap segments then up to three lone channels; borders by the reference loops
        # VALID, at the peak: the column in the output's tail, its last pixels (a lone one at
        # the end of each pair of rows) by the direct loops from bias_eff (no raw bias is
        # emitted without borders); 7 channels: the last block of four overlaps the first
        "valid_tail": _Net((1, 9, 11, 8), 18).conv(7, 3, 1, "VALID"),
        # a window under 16 values (1x3 over 4 channels) with a column granted (not at the
        # peak): the M4/M7 builds skip the column there, so the borders need the raw bias
        # (a random differential run found it missing)
        "small_k_col": _Net((1, 13, 12, 4), 1010)
        .conv(10, (1, 3), 1, "SAME", "RELU6")
        .conv(24, (2, 1), 2, "VALID", "RELU6"),
        "dil_w": _Net((1, 7, 12, 12), 17).conv(7, 3, dil_w=2).conv(6, (1, 3), dil_w=3),
        "dil_w11": _Net((1, 7, 12, 11), 17).conv(7, 3, dil_w=2).conv(6, (1, 3), dil_w=3),
        # FULLY_CONNECTED (its own paths: tests/test_kernels_fast_fc.py): one row, three rows,
        # depths 37 and 9
        # the int16 column GEMM (tc_conv2d_dsp.c): a first layer at the peak through a column
        # in its output's tail (K = 108: 432 B, past the stack's 320), an in-place ring beside
        # a granted column (pairs of pixels, 144 of them), then a stride-2 SAME layer with its
        # column (12 channels)
        "col16": _Net((1, 12, 12, 12), 9).conv(16, 3, act="RELU").conv(16, 3).conv(12, 3, 2),
        # windows over 3 (and 7) channels staged as int8 (K = 27, 63: a zero-padded last
        # group), at the peak with the column on the stack (140, 320 B); then an in-place
        # pointwise layer with a column (forwards, a lone last pixel, a lone last channel of 9)
        "col16_c3": _Net((1, 9, 9, 3), 10).conv(16, 3, act="RELU").conv(9, 1),
        "col16_c7": _Net((1, 9, 9, 7), 10).conv(16, 3, act="RELU").conv(9, 1),
        # staged windows (13 channels, K = 117: 600 B) through the output's tail, which leaves
        # a lone pixel (81 pixels) to the direct loops
        "col16_c13_tail": _Net((1, 9, 9, 13), 19).conv(16, 3, act="RELU"),
        # 5 channels at the peak: the column on the stack (240 B), every pixel through the
        # GEMM, a lone last output channel of 7 (the sweep's 3x3 layer over 5 channels)
        "col16_c5_stack": _Net((1, 14, 14, 5), 20).conv(7, 3),
        # expanding pointwise layers whose tensors are not multiples of 8 bytes (a random
        # differential run found the second one sharing its buffer with no safe walk)
        "pw_grow_odd": _Net((1, 3, 10, 2), 2032).conv(6, 1, 1, "VALID").conv(8, 1),
        "fc_row": _Net((1, 37), 5).fc(11, "RELU").fc(9).fc(7),
        "fc_rows": _Net((3, 37), 6).fc(10, "RELU6").fc(9),
    }


@pytest.mark.qemu
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(_nets()))
def test_fast_paths_match_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board=board, n=6, layers=True)
    assert r.ok, str(r)


def test_models_reach_the_paths(tmp_path: Path) -> None:
    """The planner gives each model the (in place, column buffer) choices the docstring relies
    on: layers at the SRAM peak without their column, the others with it where it costs no
    arena, in place where that shrinks the arena."""
    want = {
        "first_c1": [(False, True), (False, False)],  # (the few kernel's scratch: 0 bytes)
        "first_c3": [(False, False), (False, True)],
        "first_c5": [(False, False), (False, True)],
        "first_c7": [(False, False), (False, True)],
        "pointwise": [(True, True)] * 3 + [(False, False), (False, True)],
        "pw_shrink": [(True, False)] * 2 + [(False, False)],
        "pw_plain": [(True, False), (False, False)],
        "ring": [(True, False)] * 3,
        "ring_k5": [(True, False)],
        "ring_k7": [(True, True)],  # (a column would pass IM2COL_MAX_BYTES: scratch 0)
        "ring_k5_wide": [(True, True)],
        "col16": [(False, False), (True, True), (False, True)],
        "col16_c3": [(False, False), (True, True)],
        "col16_c7": [(False, False), (True, True)],
        "col16_c13_tail": [(False, False)],
        "col16_c5_stack": [(False, False)],
        "small_k_col": [(False, True), (False, False)],
    }
    for name, net in _nets().items():
        p = api.plan(net.save(tmp_path / f"{name}.tflite"))
        got = [
            (
                p.choices.get(i, DEFAULT_CHOICE).in_place,
                p.choices.get(i, DEFAULT_CHOICE).use_scratch,
            )
            for i in p.order
        ]
        if name in want:
            assert got == want[name], (name, got)


def _random_stack(seed: int) -> _Net:
    """One to three CONV_2D layers of random shape: 3-14 pixels a side, 1-24 channels, windows
    1x1 to 7x5, strides 1 and 2, SAME and VALID, dilations of 2 either way, any activation
    (the plans put some at the SRAM peak, some in place, some with a column)."""
    r = np.random.default_rng(seed)
    net = _Net((1, int(r.integers(3, 15)), int(r.integers(3, 15)), int(r.choice(CHANNELS))), seed)
    for _ in range(int(r.integers(1, 4))):
        _, h, w, _ = net.tensors[net.cur].shape
        kh, kw = min(int(r.choice([1, 2, 3, 3, 5, 7])), h), min(int(r.choice([1, 2, 3, 3, 5])), w)
        stride = int(r.choice([1, 1, 2]))
        dh = 2 if stride == 1 and 2 * kh - 1 <= h and r.random() < 0.2 else 1
        dw = 2 if stride == 1 and 2 * kw - 1 <= w and r.random() < 0.2 else 1
        act = str(r.choice(["NONE", "RELU", "RELU6"]))
        oc = int(r.choice(CHANNELS))
        net.conv(oc, (kh, kw), stride, str(r.choice(["SAME", "VALID"])), act, dh, dw)
    return net


CHANNELS = [1, 3, 4, 5, 7, 8, 9, 10, 12, 16, 20, 24]


@pytest.mark.qemu
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("seed", range(8))
def test_random_stacks_match_tflm(seed: int, board: str, tmp_path: Path) -> None:
    """Random differential runs: every layer bit-exact with TFLM (one of these found the
    missing raw bias of ``small_k_col``)."""
    path = _random_stack(5000 + seed).save(tmp_path / f"r{seed}.tflite")
    r = api.compare(path, board=board, n=3, layers=True)
    assert r.ok, str(r)
