"""Models of the kinds issue 21 measured in the field, written with ``tflite_writer`` (no
TensorFlow; random per-channel weights with scales that keep activations alive,
``mobilenetv2_pt.Scaled``):

- ``speech_cnn``: TFLM's micro_speech "tiny_conv": a 49x40x1 spectrogram, DEPTHWISE_CONV_2D
  with depth multiplier 8 and a 10x8 filter at stride 2 (SAME, RELU), then FULLY_CONNECTED to 4
  classes and SOFTMAX;
- ``person_detect``: TFLM's person detection network, MobileNetV1 at width 0.25 on 96x96x1
  grayscale (a first CONV_2D over one channel, 13 depthwise-separable blocks), average pool,
  FULLY_CONNECTED to 2 classes, SOFTMAX.

Run from the repository root: ``python -m tests.modelgen.field_models [OUT_DIR]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tflite

from .mobilenetv2_pt import Scaled, _opts
from .ops_padfold import ACT, _out_len

# MobileNetV1: (depthwise stride, pointwise channels at width 1)
V1_BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512), (1, 512), (1, 512),
             (1, 512), (1, 512), (1, 512), (2, 1024), (1, 1024)]  # fmt: skip


def dw_mult(n: Scaled, k: tuple[int, int], dm: int, stride: int, padding: str, act: str) -> None:
    """A DEPTHWISE_CONV_2D with depth multiplier ``dm`` on ``n``'s current tensor."""
    _, h, w, c = n.tensors[n.cur].shape
    kh, kw = k
    oh, ow = _out_len(h, kh, stride, padding, 1), _out_len(w, kw, stride, padding, 1)
    opts = _opts(tflite.DepthwiseConv2DOptionsStart, tflite.DepthwiseConv2DOptionsEnd,
                 (tflite.DepthwiseConv2DOptionsAddPadding, getattr(tflite.Padding, padding)),
                 (tflite.DepthwiseConv2DOptionsAddStrideW, stride),
                 (tflite.DepthwiseConv2DOptionsAddStrideH, stride),
                 (tflite.DepthwiseConv2DOptionsAddDepthMultiplier, dm),
                 (tflite.DepthwiseConv2DOptionsAddFusedActivationFunction, ACT[act]),
                 (tflite.DepthwiseConv2DOptionsAddDilationWFactor, 1),
                 (tflite.DepthwiseConv2DOptionsAddDilationHFactor, 1))  # fmt: skip
    n._layer("DEPTHWISE_CONV_2D", (1, kh, kw, c * dm), 3, (1, oh, ow, c * dm),
             "DepthwiseConv2DOptions", opts, kh * kw)  # fmt: skip


def speech_cnn() -> bytes:
    n = Scaled((1, 49, 40, 1), seed=49, zp=-20)
    dw_mult(n, (10, 8), 8, 2, "SAME", "RELU")
    return n.head(4, pool=False, softmax=True)


def person_detect(width: float = 0.25) -> bytes:
    n = Scaled((1, 96, 96, 1), seed=96, zp=-128)
    n.conv(int(32 * width), 3, 2, "SAME", act="RELU6")
    for stride, ch in V1_BLOCKS:
        n.dw(3, stride, "SAME", act="RELU6")
        n.conv(int(ch * width), 1, act="RELU6")
    return n.head(2, softmax=True)


MODELS = {"speech_cnn": speech_cnn, "person_detect": person_detect}


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "models" / "real"
    out.mkdir(parents=True, exist_ok=True)
    for name, make in MODELS.items():
        (out / f"{name}.tflite").write_bytes(make())
        print(f"wrote {out / name}.tflite")


if __name__ == "__main__":
    main(sys.argv[1:])
