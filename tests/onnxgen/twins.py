"""The benchmark's twins: one small CNN as a quantized ONNX model and as a TFLite model with the
same integer weights, biases and quantization parameters, so that the two compiled models differ
only in their requantization (onnxruntime's float32 scale, TFLite's fixed-point multiplier).

The float network is built with onnx.helper from seeded numpy weights (a MobileNet-like stack:
3x3 convolution stride 2, three depthwise 3x3 + pointwise 1x1 pairs, global average pooling,
Gemm; ReLUs), quantized by onnxruntime's ``quantize_static`` (QDQ, per-channel int8 weights,
int8 activations). The TFLite twin is written from the ONNX model's IR (tinycompile's frontend:
NHWC tensors, the integer weights and every tensor's scale and zero point) with
tests/modelgen/tflite_writer.py: CONV_2D, DEPTHWISE_CONV_2D, MEAN (the pooling), RESHAPE,
FULLY_CONNECTED, no fused activation (the ReLUs live in the output ranges, as in the ONNX
model). Strided convolutions use TFLite's SAME padding (pads top/left 0, bottom/right 1 in the
ONNX model). No TensorFlow needed.

``python -m tests.onnxgen.twins [OUT_DIR]`` (default tests/models/onnx) writes ``cnn_twin.onnx``
and ``cnn_twin.tflite``; the files are committed, used by benchmarks/bench_emulator.py and
tests/test_onnx_fast.py.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import tflite

from tests.modelgen.tflite_writer import Node, T, write
from tests.onnxgen.models import _Builder, quantize

OUT = Path(__file__).resolve().parent.parent / "models" / "onnx"
SHAPE = [1, 3, 32, 32]
STREAM_SHAPE = [1, 3, 48, 48]


def float_cnn() -> onnx.ModelProto:
    b = _Builder(21)

    def conv(x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        fan = cin // group * k * k
        w = b.rng.normal(0, 1.4 / np.sqrt(fan), (cout, cin // group, k, k))
        ins = [x, b.const("w", w), b.const("b", b.rng.normal(0, 0.1, cout))]
        pads = [k // 2] * 4 if stride == 1 else [0, 0, 1, 1]  # TFLite's SAME
        y = b.node("Conv", ins, kernel_shape=[k, k], pads=pads, strides=[stride] * 2, group=group)
        return b.node("Relu", [y])

    x = conv("input", 3, 16, 3, stride=2)  # 16 x 16 x 16
    for cin, cout, stride in ((16, 32, 1), (32, 64, 2), (64, 64, 1)):
        x = conv(x, cin, cin, 3, stride=stride, group=cin)
        x = conv(x, cin, cout, 1)
    gp = b.node("GlobalAveragePool", [x])
    f = b.node("Flatten", [gp], axis=1)
    y = b.gemm(f, 64, 10)
    return b.model(SHAPE, "input", y, "cnn_twin")


def stream_cnn() -> onnx.ModelProto:
    """A CNN whose first layers hold more than the samd21's 32 KB (48 x 48 x 12 after a 3x3
    convolution): the planner streams them there (``--stream auto``). Depthwise with multiplier 2
    and TFLite-SAME asymmetric pads (top/left 0, bottom/right 1) on the strided layers."""
    b = _Builder(22)

    def conv(x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        w = b.rng.normal(0, 1.4 / np.sqrt(cin // group * k * k), (cout, cin // group, k, k))
        ins = [x, b.const("w", w), b.const("b", b.rng.normal(0, 0.1, cout))]
        pads = [k // 2] * 4 if stride == 1 else [0, 0, 1, 1]
        y = b.node("Conv", ins, kernel_shape=[k, k], pads=pads, strides=[stride] * 2, group=group)
        return b.node("Relu", [y])

    x = conv("input", 3, 12, 3)  # 48 x 48 x 12
    x = conv(x, 12, 24, 3, stride=2, group=12)  # depthwise, multiplier 2: 24 x 24 x 24
    x = conv(x, 24, 16, 1)
    x = conv(x, 16, 16, 3, stride=2)  # 12 x 12 x 16
    f = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    return b.model(STREAM_SHAPE, "input", b.gemm(f, 16, 10), "stream_cnn")


def quantized(model: onnx.ModelProto, shape: list[int], dst: Path) -> Path:
    """``model`` quantized as the twins are (QDQ, per-channel int8 weights, int8 activations)."""
    with tempfile.TemporaryDirectory() as tmp:
        fp = Path(tmp) / "float.onnx"
        onnx.save(model, fp)
        quantize(fp, dst, shape, qdq=True, per_channel=True)
    return dst


def _q(t) -> tuple:
    s, z = t.quant.scale, t.quant.zero_point
    if s.size > 1:
        return [float(v) for v in s], [int(v) for v in z]
    return float(s[0]), int(z[0])


def _opts(kind: str, **fields: int):
    """A writer of TFLite options table ``kind`` with ``fields`` (e.g. Padding=0)."""

    def write_options(b):
        getattr(tflite, f"{kind}Start")(b)
        for k, v in fields.items():
            getattr(tflite, f"{kind}Add{k}")(b, v)
        return getattr(tflite, f"{kind}End")(b)

    return write_options


def tflite_twin(onnx_path: Path) -> bytes:
    """The TFLite model with ``onnx_path``'s integer parameters (see the module doc)."""
    from tinycompile.frontend import load_model

    g = load_model(onnx_path)
    tensors: list[T] = []
    index: dict[int, int] = {}

    def act(tid: int) -> int:
        """The twin of IR tensor ``tid`` (activations, weights as they are)."""
        if tid not in index:
            t = g.t(tid)
            q = _q(t) if t.quant is not None else None
            tensors.append(T(t.name, tuple(t.shape), t.dtype, q, t.data))
            index[tid] = len(tensors) - 1
        return index[tid]

    def const(name: str, arr: np.ndarray, dtype: str, quant=None, axis: int = 0) -> int:
        tensors.append(T(name, tuple(arr.shape), dtype, quant, arr, quant_axis=axis))
        return len(tensors) - 1

    def bias(op, x, w) -> int:
        b = g.t(op.inputs[2])
        q = ([float(np.float32(x.quant.s) * s) for s in w.quant.scale], [0] * w.shape[0])
        return const(b.name, np.asarray(b.data, np.int32), "int32", q)

    nodes = []
    for op in g.ops:
        x, y = g.t(op.inputs[0]), g.t(op.outputs[0])
        if op.kind == "ONNX_CONV":
            w = g.t(op.inputs[1])
            sh, sw = op.attrs["stride"]
            pt, pl, pb, pr = op.attrs["pads"]
            kh, kw = w.shape[1:3]
            if (pt, pl, pb, pr) != ((kh - sh) // 2, (kw - sw) // 2, kh - sh - (kh - sh) // 2,
                                    kw - sw - (kw - sw) // 2):  # fmt: skip
                raise ValueError(f"pads {op.attrs['pads']} are not TFLite's SAME")
            if op.attrs["groups"] == 1:
                ins = [act(x.id), act(w.id), bias(op, x, w)]
                opts = _opts("Conv2DOptions", Padding=0, StrideW=sw, StrideH=sh)
                nodes.append(Node("CONV_2D", ins, [act(y.id)], "Conv2DOptions", opts))
            else:
                w4 = np.ascontiguousarray(w.data[..., 0].transpose(1, 2, 0)[None])
                ins = [act(x.id), const(w.name, w4, "int8", _q(w), 3), bias(op, x, w)]
                opts = _opts("DepthwiseConv2DOptions", Padding=0, StrideW=sw, StrideH=sh,
                             DepthMultiplier=1)  # fmt: skip
                node = Node("DEPTHWISE_CONV_2D", ins, [act(y.id)], "DepthwiseConv2DOptions", opts)
                nodes.append(node)
        elif op.kind == "ONNX_GLOBAL_AVG_POOL":  # (AVERAGE_POOL_2D keeps the scale)
            axes = const(y.name + "/axes", np.array([1, 2], np.int32), "int32")
            opts = _opts("ReducerOptions", KeepDims=True)
            nodes.append(Node("MEAN", [act(x.id), axes], [act(y.id)], "ReducerOptions", opts))
        elif op.kind == "RESHAPE":
            shape = const(y.name + "/shape", np.array(y.shape, np.int32), "int32")
            nodes.append(Node("RESHAPE", [act(x.id), shape], [act(y.id)]))
        elif op.kind == "ONNX_GEMM":
            w = g.t(op.inputs[1])
            ins = [act(x.id), act(w.id), bias(op, x, w)]
            opts = _opts("FullyConnectedOptions")
            nodes.append(Node("FULLY_CONNECTED", ins, [act(y.id)], "FullyConnectedOptions", opts))
        else:
            raise ValueError(f"no TFLite twin for {op.kind}")
    return write(tensors, nodes, [act(g.inputs[0])], [act(g.outputs[0])])


def build(out: Path = OUT) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    q = quantized(float_cnn(), SHAPE, out / "cnn_twin.onnx")
    m = onnx.load(q)
    m.producer_name, m.doc_string = "tests/onnxgen/twins.py", ""
    onnx.save(m, q)
    t = out / "cnn_twin.tflite"
    t.write_bytes(tflite_twin(q))
    return {"onnx": q, "tflite": t}


if __name__ == "__main__":
    for k, v in build(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT).items():
        print(k, v)
