"""Models for the few-input-channel CONV_2D path (tc_conv_few_s8) and the one-channel
depthwise pass: chains of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED layers written with
tflite_writer (no TensorFlow), random int8 weights, per-tensor or per-channel quantization,
output scales following the accumulators' spread so that outputs use the int8 range.

Used by tests/test_kernels_fast_few.py and benchmarks/bench_few_channel.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tflite

from .tflite_writer import Node, T, write

ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}
PAD = {"SAME": 0, "VALID": 1}


def _conv_opts(stride: tuple[int, int], padding: str, act: str):
    def w(b) -> int:
        tflite.Conv2DOptionsStart(b)
        tflite.Conv2DOptionsAddPadding(b, PAD[padding])
        tflite.Conv2DOptionsAddStrideW(b, stride[1])
        tflite.Conv2DOptionsAddStrideH(b, stride[0])
        tflite.Conv2DOptionsAddDilationWFactor(b, 1)
        tflite.Conv2DOptionsAddDilationHFactor(b, 1)
        tflite.Conv2DOptionsAddFusedActivationFunction(b, ACT[act])
        return tflite.Conv2DOptionsEnd(b)

    return w


def _dw_opts(stride: tuple[int, int], padding: str, dm: int, act: str):
    def w(b) -> int:
        tflite.DepthwiseConv2DOptionsStart(b)
        tflite.DepthwiseConv2DOptionsAddPadding(b, PAD[padding])
        tflite.DepthwiseConv2DOptionsAddStrideW(b, stride[1])
        tflite.DepthwiseConv2DOptionsAddStrideH(b, stride[0])
        tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, dm)
        tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
        tflite.DepthwiseConv2DOptionsAddDilationWFactor(b, 1)
        tflite.DepthwiseConv2DOptionsAddDilationHFactor(b, 1)
        return tflite.DepthwiseConv2DOptionsEnd(b)

    return w


def _fc_opts(act: str):
    def w(b) -> int:
        tflite.FullyConnectedOptionsStart(b)
        tflite.FullyConnectedOptionsAddFusedActivationFunction(b, ACT[act])
        return tflite.FullyConnectedOptionsEnd(b)

    return w


def _out_hw(h: int, w: int, k: tuple[int, int], s: tuple[int, int], padding: str):
    if padding == "SAME":
        return -(-h // s[0]), -(-w // s[1])
    return (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1


class Net:
    """A chain of layers on a 1 x H x W x C int8 input (scale 0.05, zero point ``zp``)."""

    def __init__(self, shape: tuple[int, ...], seed: int, zp: int = -3) -> None:
        self.rng = np.random.default_rng(seed)
        self.tensors = [T("x", shape, quant=(0.05, zp))]
        self.nodes: list[Node] = []
        self.cur = 0

    def _add(self, kind, wshape, axis, out_shape, opts_name, opts, k, per_channel, oc):
        in_s = self.tensors[self.cur].quant[0]
        w = self.rng.integers(-127, 128, wshape).astype(np.int8)
        if per_channel:
            ws = [float(v) for v in self.rng.uniform(0.01, 0.03, oc)]
            wq = (ws, [0] * oc)
            bq = ([float(np.float32(in_s) * np.float32(s)) for s in ws], [0] * oc)
        else:
            ws = [0.02]
            wq = (0.02, 0)
            bq = (float(np.float32(np.float32(in_s) * np.float32(0.02))), 0)
        bias = self.rng.integers(-3000, 3000, oc).astype(np.int32)
        acc_std = np.sqrt(k) * 60.0 * 73.0
        out_q = (
            float(np.float32(in_s * max(ws) * acc_std / 45.0)),
            int(self.rng.integers(-20, 20)),
        )
        n = len(self.tensors)
        self.tensors += [
            T(f"w{n}", wshape, quant=wq, data=w, quant_axis=axis),
            T(f"b{n}", (oc,), "int32", quant=bq, data=bias),
            T(f"y{n}", out_shape, quant=out_q),
        ]
        self.nodes.append(Node(kind, [self.cur, n, n + 1], [n + 2], opts_name, opts))
        self.cur = n + 2
        return self

    def conv(self, oc: int, k, stride=1, padding="SAME", act="NONE", per_channel=False):
        _, h, w, c = self.tensors[self.cur].shape
        k = (k, k) if isinstance(k, int) else tuple(k)
        s = (stride, stride) if isinstance(stride, int) else tuple(stride)
        oh, ow = _out_hw(h, w, k, s, padding)
        return self._add(
            "CONV_2D", (oc, *k, c), 0, (1, oh, ow, oc), "Conv2DOptions",
            _conv_opts(s, padding, act), k[0] * k[1] * c, per_channel, oc,
        )  # fmt: skip

    def dw(self, dm: int, k, stride=1, padding="SAME", act="NONE", per_channel=False):
        _, h, w, c = self.tensors[self.cur].shape
        k = (k, k) if isinstance(k, int) else tuple(k)
        s = (stride, stride) if isinstance(stride, int) else tuple(stride)
        oh, ow = _out_hw(h, w, k, s, padding)
        oc = c * dm
        return self._add(
            "DEPTHWISE_CONV_2D", (1, *k, oc), 3, (1, oh, ow, oc), "DepthwiseConv2DOptions",
            _dw_opts(s, padding, dm, act), k[0] * k[1], per_channel, oc,
        )  # fmt: skip

    def fc(self, oc: int, act: str = "NONE"):
        shape = self.tensors[self.cur].shape
        depth = int(np.prod(shape[1:]))
        if len(shape) != 2:  # FULLY_CONNECTED flattens its input (keep_num_dims false)
            depth = int(np.prod(shape)) // shape[0]
        return self._add(
            "FULLY_CONNECTED", (oc, depth), 0, (shape[0], oc), "FullyConnectedOptions",
            _fc_opts(act), depth, False, oc,
        )  # fmt: skip

    def save(self, path: Path) -> Path:
        path.write_bytes(write(self.tensors, self.nodes, [0], [self.cur]))
        return path


def speech(padding: str = "SAME", dm: int = 8, seed: int = 21) -> Net:
    """The speech model's front: DEPTHWISE_CONV_2D with depth multiplier ``dm`` on 49x40x1,
    10x8 filter, stride 2, per-channel weights, RELU, then FULLY_CONNECTED."""
    net = Net((1, 49, 40, 1), seed)
    return net.dw(dm, (10, 8), 2, padding, "RELU", per_channel=True).fc(12)


def first_layer(hwc: tuple[int, int, int], oc: int, k, stride: int = 2, seed: int = 1) -> Net:
    """A first CONV_2D over few channels (per-channel weights, RELU6)."""
    return Net((1, *hwc), seed).conv(oc, k, stride, "SAME", "RELU6", per_channel=True)
