"""Generate the explicit-PAD test models (``padfold_*``) into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_padfold`` (no TensorFlow needed:
written directly with ``tflite_writer``). PyTorch-exported and MCUNet models pad explicitly
(PAD, then a VALID convolution); the pad pass (tinycompile/passes/pad_fold.py) folds such a PAD
into the convolution where that is exact, and these models are compared with TFLM layer by
layer (tests/test_ops_registry.py) and checked fold by fold (tests/test_pad_fold.py):

- ``padfold_dw_s2``: MCUNet's stride-2 block: 1x1 expand, PAD (1, 1, 1, 1), 3x3 depthwise
  stride 2 VALID, 1x1 project (20 x 20: the padding TFLite's SAME would not give);
- ``padfold_conv_asym``: PAD (0, 1, 0, 1), 3x3 CONV_2D stride 2 VALID;
- ``padfold_first_v2``: a first layer: PADV2 whose value is the zero point, one input channel,
  a 5x3 filter at stride 2;
- ``padfold_same_fold``: PAD (0, 1, 0, 1) in front of a SAME convolution (the pads add up);
- ``padfold_chain``: two PADs in a row, then a 3x3 depthwise with dilation 2;
- ``padfold_ring_asym``: one-sided PADs that keep the size (2 rows above and 2 columns right,
  the mirror image, then 2 above and 2 left) in front of two 3x3 depthwise layers and a 3x3
  CONV_2D, each able to run in place, its ring sized by the top and left padding;
- ``padfold_s1`` and its twin ``padfold_s1_twin``: the same weights with PADs + VALID layers
  and with SAME layers (PAD (1, 1, 1, 1) + VALID 3x3 stride 1 is SAME);
- kept PADs: ``padfold_not_zp`` (a PADV2 value that is not the zero point),
  ``padfold_two_readers`` (a PAD read by two convolutions), ``padfold_pointwise`` (a PAD in
  front of a 1x1 convolution: its border outputs would see no input at all).

Weights are per-channel int8 (symmetric), biases int32, zero points nonzero so a pad byte that
is not the zero point would show.
"""

from __future__ import annotations

import numpy as np
import tflite

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}


def _conv_opts(stride: int, padding: str, act: str, dil: int):
    def w(b) -> int:
        tflite.Conv2DOptionsStart(b)
        tflite.Conv2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
        tflite.Conv2DOptionsAddStrideW(b, stride)
        tflite.Conv2DOptionsAddStrideH(b, stride)
        tflite.Conv2DOptionsAddDilationWFactor(b, dil)
        tflite.Conv2DOptionsAddDilationHFactor(b, dil)
        tflite.Conv2DOptionsAddFusedActivationFunction(b, ACT[act])
        return tflite.Conv2DOptionsEnd(b)

    return w


def _dw_opts(stride: int, padding: str, act: str, dil: int):
    def w(b) -> int:
        tflite.DepthwiseConv2DOptionsStart(b)
        tflite.DepthwiseConv2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
        tflite.DepthwiseConv2DOptionsAddStrideW(b, stride)
        tflite.DepthwiseConv2DOptionsAddStrideH(b, stride)
        tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, 1)
        tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
        tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, dil)
        tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, dil)
        return tflite.DepthwiseConv2DOptionsEnd(b)

    return w


def _out_len(size: int, k: int, stride: int, padding: str, dil: int) -> int:
    if padding == "SAME":
        return -(-size // stride)
    return (size - (k - 1) * dil - 1) // stride + 1


class Net:
    """A chain of layers (PAD, PADV2, CONV_2D, DEPTHWISE_CONV_2D) on one int8 activation;
    ``cur`` is the tensor the next layer reads. Output scales follow the accumulators' spread
    so that outputs use the int8 range."""

    def __init__(self, shape: tuple[int, ...], seed: int, zp: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        self.tensors = [T("x", shape, quant=(0.05, zp))]
        self.nodes: list[Node] = []
        self.cur = 0

    def _add(self, t: T) -> int:
        self.tensors.append(t)
        return len(self.tensors) - 1

    def pad(self, t: int, b: int, le: int, r: int, value: int | None = None) -> Net:
        """PAD (``value`` None) or PADV2 padding with the raw int8 ``value``."""
        x = self.tensors[self.cur]
        n, h, w, c = x.shape
        p = np.array([[0, 0], [t, b], [le, r], [0, 0]], np.int32)
        ins = [self.cur, self._add(T(f"p{len(self.tensors)}", (4, 2), "int32", data=p))]
        if value is not None:
            v = T(f"v{len(self.tensors)}", (), quant=x.quant, data=np.array(value, np.int8))
            ins.append(self._add(v))
        y = self._add(T(f"pad{len(self.tensors)}", (n, h + t + b, w + le + r, c), quant=x.quant))
        self.nodes.append(Node("PAD" if value is None else "PADV2", ins, [y]))
        self.cur = y
        return self

    def w_base(self, taps: int) -> float:
        """The smallest weight scale of a layer over ``taps`` inputs (they span [base, 2 base))."""
        return 0.01

    def _layer(self, kind, wshape, axis, out_shape, opts_name, opts, taps, read=None) -> int:
        src = self.cur if read is None else read
        in_s, _ = self.tensors[src].quant
        oc = wshape[axis]
        base = self.w_base(taps)
        w_s = [float(np.float32(base * (1.0 + self.rng.random()))) for _ in range(oc)]
        w = self.rng.integers(-127, 128, wshape).astype(np.int8)
        b_s = [float(np.float32(np.float32(in_s) * np.float32(s))) for s in w_s]
        bias = self.rng.integers(-3000, 3000, oc).astype(np.int32)
        acc_std = np.sqrt(taps) * 60.0 * 73.0
        out_s = float(np.float32(in_s * np.mean(w_s) * acc_std / 45.0))
        out_q = (out_s, int(self.rng.integers(-20, 20)))
        k = len(self.tensors)
        wt = self._add(T(f"w{k}", wshape, quant=(w_s, [0] * oc), data=w, quant_axis=axis))
        bt = self._add(T(f"b{k}", (oc,), "int32", quant=(b_s, [0] * oc), data=bias))
        y = self._add(T(f"y{k}", out_shape, quant=out_q))
        self.nodes.append(Node(kind, [src, wt, bt], [y], opts_name, opts))
        self.cur = y
        return y

    def conv(self, oc, k, stride=1, padding="VALID", act="NONE", dil=1, read=None) -> Net:
        _, h, w, c = self.tensors[self.cur if read is None else read].shape
        kh, kw = (k, k) if isinstance(k, int) else k
        oh, ow = _out_len(h, kh, stride, padding, dil), _out_len(w, kw, stride, padding, dil)
        self._layer("CONV_2D", (oc, kh, kw, c), 0, (1, oh, ow, oc), "Conv2DOptions",
                    _conv_opts(stride, padding, act, dil), kh * kw * c, read)  # fmt: skip
        return self

    def dw(self, k: int, stride=1, padding="VALID", act="NONE", dil=1) -> Net:
        _, h, w, c = self.tensors[self.cur].shape
        oh, ow = _out_len(h, k, stride, padding, dil), _out_len(w, k, stride, padding, dil)
        opts = _dw_opts(stride, padding, act, dil)
        kind, wshape, shape = "DEPTHWISE_CONV_2D", (1, k, k, c), (1, oh, ow, c)
        self._layer(kind, wshape, 3, shape, "DepthwiseConv2DOptions", opts, k * k)
        return self

    def bytes(self, outputs: list[int] | None = None) -> bytes:
        return write(self.tensors, self.nodes, [0], outputs or [self.cur])


def _s1(same: bool) -> bytes:
    """PAD (1, 1, 1, 1) + VALID 3x3 stride 1 (conv, then depthwise), or the SAME twin."""
    n = Net((1, 12, 12, 8), 6, zp=-5).conv(12, 1, act="RELU")
    if same:
        return n.conv(12, 3, padding="SAME", act="RELU").dw(3, padding="SAME", act="RELU6").bytes()
    n.pad(1, 1, 1, 1).conv(12, 3, act="RELU")
    return n.pad(1, 1, 1, 1).dw(3, act="RELU6").bytes()


def _two_readers() -> bytes:
    n = Net((1, 9, 10, 4), 8).pad(1, 1, 1, 1)
    shared = n.cur
    a = n.conv(6, 3, act="RELU").cur
    b = n.conv(5, 3, 2, read=shared).cur
    return n.bytes([a, b])


def build() -> dict[str, bytes]:
    return {
        "padfold_dw_s2": Net((1, 20, 20, 8), 1).conv(16, 1, act="RELU6").pad(1, 1, 1, 1)
        .dw(3, 2, act="RELU6").conv(8, 1).bytes(),
        "padfold_conv_asym": Net((1, 14, 14, 6), 2, zp=-3).pad(0, 1, 0, 1)
        .conv(8, 3, 2, act="RELU").bytes(),
        "padfold_first_v2": Net((1, 21, 9, 1), 3, zp=-11).pad(2, 2, 1, 1, value=-11)
        .conv(8, (5, 3), 2, act="RELU").bytes(),
        "padfold_same_fold": Net((1, 9, 11, 5), 4).pad(0, 1, 0, 1)
        .conv(6, 3, padding="SAME").bytes(),
        "padfold_chain": Net((1, 10, 9, 8), 5).pad(1, 0, 2, 0).pad(1, 2, 0, 2)
        .dw(3, dil=2, act="RELU").bytes(),
        "padfold_ring_asym": Net((1, 10, 12, 8), 10).conv(8, 1, act="RELU").pad(2, 0, 0, 2)
        .dw(3, act="RELU6").pad(0, 2, 2, 0).dw(3).pad(2, 0, 2, 0).conv(8, 3).bytes(),
        "padfold_s1": _s1(False),
        "padfold_s1_twin": _s1(True),
        "padfold_not_zp": Net((1, 8, 8, 4), 7).pad(1, 1, 1, 1, value=20).conv(6, 3).bytes(),
        "padfold_two_readers": _two_readers(),
        "padfold_pointwise": Net((1, 6, 7, 8), 9).pad(1, 1, 1, 1).conv(10, 1, act="RELU").bytes(),
    }  # fmt: skip


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (OUT / f"{name}.tflite").write_bytes(data)
        print(f"wrote {OUT / name}.tflite ({len(data)} bytes)")


if __name__ == "__main__":
    main()
