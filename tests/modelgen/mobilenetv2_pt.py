"""A MobileNetV2 as PyTorch exporters write it, for issue 21's memory measurements.

Written with ``tflite_writer`` (no TensorFlow; random per-channel weights, output scales set from
the accumulators' spread so activations stay alive): what an exporter (ai-edge-torch, onnx2tf)
makes of torchvision's MobileNetV2 after int8 quantization with a float interface:

- input float32 NCHW ``[1, 3, H, W]``, QUANTIZE to int8, TRANSPOSE to NHWC;
- every 3x3 layer (the stem and the depthwise layers) preceded by an explicit ``PAD`` of one
  pixel on every side and run VALID: PyTorch pads symmetrically, which at stride 2 on an even
  size is not TFLite's SAME (that pads only bottom and right);
- inverted residual blocks (1x1 expand, RELU6; 3x3 depthwise, RELU6; 1x1 project; ADD where
  stride 1 keeps the channels), a 1x1 head conv, AVERAGE_POOL_2D over the last map, RESHAPE,
  FULLY_CONNECTED, DEQUANTIZE to a float32 output.

``build(size, width, classes, pads=True)``; ``pads=False`` is the twin the TFLite converter would
make of the same network (SAME padding built into the layers, no PAD op): at stride 2 its
padding differs, so the numbers differ, but every tensor has the same shape and the twin's arena
is what folding the PADs must reach. Models: ``mbv2pt_80`` (width 0.35, 80x80, 2 classes: the
MCUNet VWW class), ``mbv2pt_80_twin``, ``mbv2pt_224`` (width 0.35, 224x224, 1000 classes).

Run from the repository root: ``python -m tests.modelgen.mobilenetv2_pt [OUT_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import tflite

from .ops_padfold import ACT, Net
from .tflite_writer import Node, T, write

# torchvision's MobileNetV2 settings: expansion t, channels c, repeats n, first stride s
BLOCKS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
          (6, 160, 3, 2), (6, 320, 1, 1)]  # fmt: skip


def _div8(v: float) -> int:
    """torchvision's _make_divisible(v, 8)."""
    n = max(8, int(v + 4) // 8 * 8)
    return n + 8 if n < 0.9 * v else n


def _opts(start, end, *adds):
    def w(b) -> int:
        start(b)
        for f, v in adds:
            f(b, v)
        return end(b)

    return w


class Scaled(Net):
    """``Net`` with weight scales that keep activations alive through deep networks, the
    residual ADD and the classifier head; ``float_io``: the head ends in DEQUANTIZE."""

    float_io = False

    def w_base(self, taps: int) -> float:
        """Weight scales that keep the activations' scale steady through 50 layers."""
        return 45.0 / (1.5 * np.sqrt(taps) * 60.0 * 73.0)

    def add(self, a: int) -> PtNet:
        """ADD of tensor ``a`` and the current tensor (the residual), output scale widened."""
        x = self.tensors[self.cur]
        s = float(np.float32(max(self.tensors[a].quant[0], x.quant[0]) * 1.4))
        zp = int(self.rng.integers(-9, 9))
        y = self._add(T(f"add{len(self.tensors)}", x.shape, quant=(s, zp)))
        opts = _opts(tflite.AddOptionsStart, tflite.AddOptionsEnd)
        self.nodes.append(Node("ADD", [a, self.cur], [y], "AddOptions", opts))
        self.cur = y
        return self

    def head(self, classes: int, pool: bool = True, softmax: bool = False) -> bytes:
        """Average pool over the whole map (``pool``), RESHAPE, FULLY_CONNECTED, then SOFTMAX
        (``softmax``) or DEQUANTIZE (``float_io``) or nothing."""
        if not pool:
            return self._classifier(classes, softmax)
        _, h, w, c = self.tensors[self.cur].shape
        q = self.tensors[self.cur].quant
        pooled = self._add(T("pooled", (1, 1, 1, c), quant=q))
        opts = _opts(tflite.Pool2DOptionsStart, tflite.Pool2DOptionsEnd,
                     (tflite.Pool2DOptionsAddPadding, tflite.Padding.VALID),
                     (tflite.Pool2DOptionsAddStrideW, 1), (tflite.Pool2DOptionsAddStrideH, 1),
                     (tflite.Pool2DOptionsAddFilterWidth, w),
                     (tflite.Pool2DOptionsAddFilterHeight, h))  # fmt: skip
        self.nodes.append(Node("AVERAGE_POOL_2D", [self.cur], [pooled], "Pool2DOptions", opts))
        self.cur = pooled
        return self._classifier(classes, softmax)

    def _classifier(self, classes: int, softmax: bool) -> bytes:
        x = self.tensors[self.cur]
        c, q = int(np.prod(x.shape)), x.quant
        shape = self._add(T("shape", (2,), "int32", data=np.array([1, c], np.int32)))
        flat = self._add(T("flat", (1, c), quant=q))
        self.nodes.append(Node("RESHAPE", [self.cur, shape], [flat]))
        w_s = float(np.float32(0.004))
        wt = self._add(
            T(
                "fc_w",
                (classes, c),
                quant=(w_s, 0),
                data=self.rng.integers(-127, 128, (classes, c)).astype(np.int8),
            )
        )
        b_s = float(np.float32(np.float32(q[0]) * np.float32(w_s)))
        bt = self._add(
            T(
                "fc_b",
                (classes,),
                "int32",
                quant=(b_s, 0),
                data=self.rng.integers(-2000, 2000, classes).astype(np.int32),
            )
        )
        logits_s = float(np.float32(q[0] * w_s * np.sqrt(c) * 60 * 73 / 45))
        logits = self._add(T("logits", (1, classes), quant=(logits_s, 4)))
        opts = _opts(
            tflite.FullyConnectedOptionsStart,
            tflite.FullyConnectedOptionsEnd,
            (tflite.FullyConnectedOptionsAddFusedActivationFunction, ACT["NONE"]),
        )
        self.nodes.append(
            Node("FULLY_CONNECTED", [flat, wt, bt], [logits], "FullyConnectedOptions", opts)
        )
        if softmax:
            probs = self._add(T("probs", (1, classes), quant=(1 / 256, -128)))
            opts = _opts(tflite.SoftmaxOptionsStart, tflite.SoftmaxOptionsEnd,
                         (tflite.SoftmaxOptionsAddBeta, 1.0))  # fmt: skip
            self.nodes.append(Node("SOFTMAX", [logits], [probs], "SoftmaxOptions", opts))
            return write(self.tensors, self.nodes, [0], [probs])
        if not self.float_io:
            return write(self.tensors, self.nodes, [0], [logits])
        out = self._add(T("output", (1, classes), "float32"))
        self.nodes.append(Node("DEQUANTIZE", [logits], [out]))
        return write(self.tensors, self.nodes, [0], [out])


class PtNet(Scaled):
    """``Scaled`` with PyTorch's interface (float NCHW in, QUANTIZE, TRANSPOSE) and padding."""

    def __init__(self, size: int, seed: int, float_io: bool = True) -> None:
        super().__init__((1, 3, size, size), seed, zp=-3)
        self.float_io = float_io
        q = 0
        if float_io:
            x = self.tensors[0]
            self.tensors[0] = T("input", x.shape, "float32")
            q = self._add(T("quantized", x.shape, quant=(0.02, -3)))
            self.nodes.append(Node("QUANTIZE", [0], [q]))
        perm = self._add(T("perm", (4,), "int32", data=np.array([0, 2, 3, 1], np.int32)))
        y = self._add(T("nhwc", (1, size, size, 3), quant=(0.02, -3)))
        self.nodes.append(Node("TRANSPOSE", [q, perm], [y]))
        self.cur = y

    def k3(self, pads: bool, layer: str, stride: int, **kw) -> PtNet:
        """A 3x3 layer (``conv`` with ``oc`` or ``dw``) with PyTorch's padding of 1."""
        if pads:
            self.pad(1, 1, 1, 1)
            padding = "VALID"
        else:
            padding = "SAME"
        if layer == "dw":
            return self.dw(3, stride, padding, act="RELU6")
        return self.conv(kw["oc"], 3, stride, padding, act="RELU6")


def build(
    size: int, width: float = 0.35, classes: int = 2, pads: bool = True, float_io: bool = True
) -> bytes:
    """torchvision's MobileNetV2 at ``width`` on ``size`` x ``size`` RGB, as described above
    (``float_io=False``: int8 input and output, no QUANTIZE or DEQUANTIZE)."""
    n = PtNet(size, seed=size, float_io=float_io)
    n.k3(pads, "conv", 2, oc=_div8(32 * width))
    c = _div8(32 * width)
    for t, ch, reps, s in BLOCKS:
        oc = _div8(ch * width)
        for r in range(reps):
            stride = s if r == 0 else 1
            block_in = n.cur
            if t != 1:
                n.conv(c * t, 1, act="RELU6")
            n.k3(pads, "dw", stride)
            n.conv(oc, 1)
            if stride == 1 and oc == c:
                n.add(block_in)
            c = oc
    n.conv(1280, 1, act="RELU6")
    return n.head(classes)


MODELS = {
    "mbv2pt_80": lambda: build(80),
    "mbv2pt_80_twin": lambda: build(80, pads=False),
    "mbv2pt_224": lambda: build(224, classes=1000),
    "mbv2pt_224_int8": lambda: build(224, classes=1000, float_io=False),
}


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "models" / "real"
    out.mkdir(parents=True, exist_ok=True)
    for name, make in MODELS.items():
        data = make()
        (out / f"{name}.tflite").write_bytes(data)
        print(f"wrote {out / name}.tflite ({len(data)} bytes)")


if __name__ == "__main__":
    main(sys.argv[1:])
