"""Float ONNX test models built with onnx.helper, quantized with onnxruntime.quantization in both
forms (QOperator and QDQ). Deterministic: fixed seeds for weights and calibration data.

``python -m tests.onnxgen.models OUT_DIR`` writes every model; the tests call ``build_all``
into a session-scoped temporary folder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _init(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr, np.float32), name)


class _Builder:
    """A tiny graph builder: float nodes, initializers with seeded random weights."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.n = 0

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def const(self, base: str, arr: np.ndarray) -> str:
        nm = self.name(base)
        self.inits.append(_init(nm, arr))
        return nm

    def const_i64(self, base: str, values: list[int]) -> str:
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.array(values, np.int64), nm))
        return nm

    def node(self, op: str, ins: list[str], **attrs) -> str:
        out = self.name(op.lower() + "_out")
        self.nodes.append(helper.make_node(op, ins, [out], name=self.name(op), **attrs))
        return out

    def conv(self, x: str, cin: int, cout: int, k: int, *, group: int = 1, stride: int = 1,
             pad: int | None = None, bias: bool = True) -> str:  # fmt: skip
        fan = cin // group * k * k
        w = self.rng.normal(0, 1.0 / np.sqrt(fan), (cout, cin // group, k, k))
        ins = [x, self.const("w", w)]
        if bias:
            ins.append(self.const("b", self.rng.normal(0, 0.2, cout)))
        p = k // 2 if pad is None else pad
        return self.node(
            "Conv", ins, kernel_shape=[k, k], pads=[p] * 4, strides=[stride] * 2, group=group
        )

    def gemm(self, x: str, n_in: int, n_out: int, *, trans_b: int = 1) -> str:
        w = self.rng.normal(0, 1.0 / np.sqrt(n_in), (n_out, n_in))
        if not trans_b:
            w = w.T
        b = self.rng.normal(0, 0.2, n_out)
        return self.node("Gemm", [x, self.const("w", w), self.const("b", b)], transB=trans_b)

    def model(self, x_shape: list[int], x: str, y: str, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)],
            self.inits,
        )
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m)
        onnx.checker.check_model(m)
        return m


def cnn() -> tuple[onnx.ModelProto, list[int]]:
    """Conv+Relu, depthwise Conv+Relu, 1x1 Conv, residual Add, MaxPool, GlobalAveragePool,
    Flatten, Gemm."""
    b = _Builder(1)
    x = "input"
    a = b.node("Relu", [b.conv(x, 3, 8, 3)])
    d = b.node("Relu", [b.conv(a, 8, 8, 3, group=8)])
    p = b.conv(d, 8, 8, 1)
    r = b.node("Add", [a, p])
    m = b.node("MaxPool", [r], kernel_shape=[2, 2], strides=[2, 2])
    c = b.node("Relu", [b.conv(m, 8, 16, 3, stride=2, pad=1)])
    gp = b.node("GlobalAveragePool", [c])
    f = b.node("Flatten", [gp], axis=1)
    y = b.gemm(f, 16, 5)
    return b.model([1, 3, 12, 12], x, y, "cnn"), [1, 3, 12, 12]


def mlp() -> tuple[onnx.ModelProto, list[int]]:
    """An MLP in PyTorch layout (Gemm transB=1, weights [out, in]), a transB=0 Gemm and a
    MatMul + Add."""
    b = _Builder(2)
    x = "input"
    h = b.node("Relu", [b.gemm(x, 20, 32, trans_b=1)])
    h = b.node("Relu", [b.gemm(h, 32, 24, trans_b=0)])
    w = b.const("w", b.rng.normal(0, 0.2, (24, 16)))
    mm = b.node("MatMul", [h, w])
    y = b.node("Add", [mm, b.const("b", b.rng.normal(0, 0.2, 16))])
    y = b.gemm(y, 16, 6, trans_b=1)
    return b.model([1, 20], x, y, "mlp"), [1, 20]


def grouped() -> tuple[onnx.ModelProto, list[int]]:
    """Grouped Conv (2 groups), strided Conv without bias, depthwise with multiplier 2."""
    b = _Builder(3)
    x = "input"
    g = b.conv(x, 4, 8, 3, group=2)
    s = b.conv(g, 8, 6, 3, stride=2, pad=0, bias=False)
    d = b.conv(s, 6, 12, 3, group=6, pad=1)
    return b.model([1, 4, 11, 9], x, d, "grouped"), [1, 4, 11, 9]


def mix() -> tuple[onnx.ModelProto, list[int]]:
    """Concat (along channels) of branches quantized at different scales: a Conv + Relu, a
    Conv + Clip(0, 6), and a 1x1 Conv + Sigmoid; then a 1x1 Conv."""
    b = _Builder(4)
    x = "input"
    r = b.node("Relu", [b.conv(x, 3, 4, 3)])
    lo, hi = b.const("lo", np.array(0.0)), b.const("hi", np.array(6.0))
    c = b.node("Clip", [b.conv(x, 3, 4, 3), lo, hi])
    p = b.node("Sigmoid", [b.conv(x, 3, 2, 1)])
    cat = b.node("Concat", [r, c, p], axis=1)
    y = b.conv(cat, 10, 6, 1)
    return b.model([1, 3, 8, 8], x, y, "mix"), [1, 3, 8, 8]


def act() -> tuple[onnx.ModelProto, list[int]]:
    """Sigmoid, Mul (x * sigmoid(x), and by a constant), AveragePool, Pad, a 4-D Transpose,
    Gemm and Softmax."""
    b = _Builder(5)
    c = b.conv("input", 3, 6, 3)
    s = b.node("Sigmoid", [c])
    m = b.node("Mul", [c, s])
    a = b.node("AveragePool", [m], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    p = b.node("Pad", [a, b.const_i64("pads", [0, 0, 1, 0, 0, 0, 0, 1])], mode="constant")
    k = b.node("Mul", [p, b.const("k", np.array(0.75))])
    t = b.node("Transpose", [k], perm=[0, 3, 1, 2])
    f = b.node("Flatten", [t], axis=1)
    g = b.gemm(f, 6 * 5 * 5, 7)
    y = b.node("Softmax", [g], axis=-1)
    return b.model([1, 3, 8, 8], "input", y, "act"), [1, 3, 8, 8]


MODELS: dict[str, Callable[[], tuple[onnx.ModelProto, list[int]]]] = {
    "cnn": cnn,
    "mlp": mlp,
    "grouped": grouped,
    "mix": mix,
    "act": act,
}


class _Reader:
    """Calibration data: seeded normal inputs."""

    def __init__(self, name: str, shape: list[int], n: int = 16, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.data = [{name: rng.normal(0, 1, shape).astype(np.float32)} for _ in range(n)]
        self.i = 0

    def get_next(self) -> dict | None:
        if self.i >= len(self.data):
            return None
        self.i += 1
        return self.data[self.i - 1]

    def rewind(self) -> None:
        self.i = 0


def quantize(
    src: Path, dst: Path, shape: list[int], *, qdq: bool, per_channel: bool, u8: bool = False
) -> None:
    """quantize_static with int8 (``u8``: uint8) activations and symmetric int8 weights."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    quantize_static(
        str(src),
        str(dst),
        _Reader("input", shape),
        quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator,
        activation_type=QuantType.QUInt8 if u8 else QuantType.QInt8,
        weight_type=QuantType.QInt8,
        per_channel=per_channel,
        extra_options={"WeightSymmetric": True, "ActivationSymmetric": False},
    )


VARIANTS = {
    "qop": (False, False),
    "qop_pc": (False, True),
    "qdq": (True, False),
    "qdq_pc": (True, True),
}


def build_all(out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """Write float and quantized models into ``out``: ``{name}_{variant}.onnx``."""
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    for name in names or list(MODELS):
        model, shape = MODELS[name]()
        fp = out / f"{name}_float.onnx"
        onnx.save(model, fp)
        made[f"{name}_float"] = fp
        for var, (qdq, pc) in VARIANTS.items():
            dst = out / f"{name}_{var}.onnx"
            quantize(fp, dst, shape, qdq=qdq, per_channel=pc)
            made[f"{name}_{var}"] = dst
        if name == "cnn":  # uint8 activations (int8 weights), both forms
            for tag, qdq in (("cnn_u8", False), ("cnn_u8_qdq", True)):
                dst = out / f"{tag}.onnx"
                quantize(fp, dst, shape, qdq=qdq, per_channel=True, u8=True)
                made[tag] = dst
    return made


if __name__ == "__main__":
    for k, v in build_all(Path(sys.argv[1] if len(sys.argv) > 1 else "onnx_models")).items():
        print(k, v)
