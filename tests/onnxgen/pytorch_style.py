"""ONNX models made the way a PyTorch user makes them: a float graph of PyTorch-style blocks
(what ``torch.onnx.export`` writes for Conv2d/BatchNorm folded/ReLU/ReLU6/Linear, a token MLP
whose Linear layers export as 3-D MatMul + Add), saved at a current opset (23 or newer, through
``onnx.version_converter``), then ``quant_pre_process`` and ``quantize_static`` as
onnxruntime's documentation shows, in QDQ and QOperator forms, with int8 or uint8 weights
(symmetric, or asymmetric: nonzero weight zero points) and int8 or uint8 activations. One more
variant removes the input's QuantizeLinear (a raw int8/uint8 graph input, as exporters and users
do to save the float buffer).

``python -m tests.onnxgen.pytorch_style OUT_DIR`` writes every model; the tests call
``build_pytorch_style`` into a session-scoped temporary folder. Deterministic (fixed seeds).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import version_converter

from .models import _Builder, _Reader

OPSET = 23


def pt_cnn() -> tuple[onnx.ModelProto, list[int]]:
    """Conv+ReLU, a depthwise stride-2 Conv+ReLU6 (Clip), a 1x1 Conv+ReLU, a 1x1 Conv with a
    residual Add, GlobalAveragePool, Flatten and a Linear (Gemm transB=1): a MobileNet block as
    torch exports it (BatchNorm folded into the Conv)."""
    b = _Builder(21)
    x = "input"
    a = b.node("Relu", [b.conv(x, 3, 8, 3)])
    lo, hi = b.const("lo", np.array(0.0)), b.const("hi", np.array(6.0))
    d = b.node("Clip", [b.conv(a, 8, 8, 3, group=8, stride=2, pad=1), lo, hi])
    e = b.node("Relu", [b.conv(d, 8, 16, 1)])
    r = b.node("Add", [e, b.conv(e, 16, 16, 1)])
    f = b.node("Flatten", [b.node("GlobalAveragePool", [r])], axis=1)
    y = b.gemm(f, 16, 10, trans_b=1)
    return b.model([1, 3, 16, 16], x, y, "pt_cnn"), [1, 3, 16, 16]


def pt_mlp() -> tuple[onnx.ModelProto, list[int]]:
    """A token MLP on [2, 6, 12] (two sequences of six tokens of 12 features: a first dimension
    that is no batch of 1): Linear layers on a 3-D tensor export as MatMul + Add (a batched
    3-D MatMul; ``quant_pre_process`` turns them into Reshape -> Gemm -> Reshape), ReLU
    between them."""
    b = _Builder(22)
    x = "input"
    w1 = b.const("w", b.rng.normal(0, 1 / np.sqrt(12), (12, 16)))
    h = b.node("Add", [b.node("MatMul", [x, w1]), b.const("b", b.rng.normal(0, 0.2, 16))])
    h = b.node("Relu", [h])
    w2 = b.const("w", b.rng.normal(0, 1 / np.sqrt(16), (16, 5)))
    y = b.node("Add", [b.node("MatMul", [h, w2]), b.const("b", b.rng.normal(0, 0.2, 5))])
    return b.model([2, 6, 12], x, y, "pt_mlp"), [2, 6, 12]


FLOATS = {"pt_cnn": pt_cnn, "pt_mlp": pt_mlp}

# variant: (QDQ form, activations uint8, weights uint8, weights symmetric, per channel);
# onnxruntime's quantizer takes uint8 weights only with uint8 activations, and makes per-channel
# uint8 weights symmetric whatever it is told
VARIANTS = {
    "qdq_u8w": (True, True, True, True, True),  # uint8 weights (zero point 128: folded)
    "qdq_u8w_asym": (True, True, True, False, False),  # asymmetric uint8 weights per tensor
    "qop_u8w": (False, True, True, True, True),
    "qop_i8w_asym": (False, False, False, False, True),  # int8 weights, nonzero zero points
    "qdq_i8": (True, False, False, True, True),
}


def quantize(src: Path, dst: Path, name: str, shape: list[int], variant: str) -> None:
    """``quant_pre_process`` then ``quantize_static``, as onnxruntime's documentation shows."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    qdq, u8a, u8w, sym, per_channel = VARIANTS[variant]
    pre = dst.with_name(dst.stem + "_pre.onnx")
    quant_pre_process(str(src), str(pre))
    quantize_static(
        str(pre),
        str(dst),
        _Reader(name, shape),
        quant_format=QuantFormat.QDQ if qdq else QuantFormat.QOperator,
        activation_type=QuantType.QUInt8 if u8a else QuantType.QInt8,
        weight_type=QuantType.QUInt8 if u8w else QuantType.QInt8,
        per_channel=per_channel,
        extra_options={"WeightSymmetric": sym},
    )
    pre.unlink()


def raw_input(m: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its input's QuantizeLinear removed: the graph input becomes int8/uint8
    (same name as before), and whatever reshaped it on the way (quant_pre_process's Reshape in
    front of a Gemm) now reshapes the integers."""
    g = m.graph
    name = g.input[0].name
    value = name
    while True:
        n = next(n for n in g.node if value in n.input)
        if n.op_type == "QuantizeLinear":
            break
        value = n.output[0]  # a Reshape on the way
    zp = next(t for t in g.initializer if t.name == n.input[2])
    shape = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    out = n.output[0]
    g.node.remove(n)
    stale = [vi for vi in g.value_info if vi.name in (value, out)]  # typed float before
    for vi in stale:
        g.value_info.remove(vi)
    for node in g.node:
        for k, v in enumerate(node.input):
            if v == out:
                node.input[k] = value
    del g.input[0]
    g.input.insert(0, onnx.helper.make_tensor_value_info(name, zp.data_type, shape))
    return m


def build_pytorch_style(out: Path) -> dict[str, Path]:
    """Write ``{model}_{variant}.onnx`` for every float model and variant, plus
    ``{model}_raw.onnx`` (``qdq_i8`` with a raw int8 input) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}
    for name, make in FLOATS.items():
        model, shape = make()
        model = version_converter.convert_version(model, OPSET)
        fp = out / f"{name}_float.onnx"
        onnx.save(model, fp)
        for var in VARIANTS:
            dst = out / f"{name}_{var}.onnx"
            quantize(fp, dst, "input", shape, var)
            made[f"{name}_{var}"] = dst
        raw = out / f"{name}_raw.onnx"
        onnx.save(raw_input(onnx.load(made[f"{name}_qdq_i8"])), raw)
        made[f"{name}_raw"] = raw
    return made


if __name__ == "__main__":
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "pt_models")
    for k, v in build_pytorch_style(out_dir).items():
        print(k, v)


def pt_moves() -> tuple[onnx.ModelProto, list[int]]:
    """Data movement PyTorch graphs carry between quantized layers: Split (torch.chunk), Slice
    with a step and a negative step, Gather of a constant index list, Squeeze / Unsqueeze,
    GlobalMaxPool (AdaptiveMaxPool2d(1); the quantizer leaves it float, so it is DQ -> op -> Q
    of the next layer's input), Concat of the pieces."""
    b = _Builder(23)
    c = b.node("Relu", [b.conv("input", 3, 8, 3)])
    b.nodes.append(onnx.helper.make_node("Split", [c, b.const_i64("sp", [3, 5])], ["s1", "s2"],
                                         axis=1, name="split"))  # fmt: skip
    st = b.node("Slice", ["s2", b.const_i64("st", [0, 7]), b.const_i64("en", [5, -100]),
                          b.const_i64("ax", [1, 3]), b.const_i64("sp", [2, -2])])  # fmt: skip
    ga = b.node("Gather", ["s1", b.const_i64("ix", [2, 0, 2])], axis=1)
    a = b.conv(st, 3, 6, 1)
    m = b.conv(b.node("GlobalMaxPool", [b.conv(ga, 3, 6, 3, stride=2)]), 6, 6, 1)
    sq = b.node("Squeeze", [m, b.const_i64("ax", [3])])
    un = b.node("Unsqueeze", [sq, b.const_i64("ax", [3])])
    g = b.node("GlobalAveragePool", [a])
    y = b.node("Concat", [g, un], axis=1)
    return b.model([1, 3, 10, 10], "input", y, "pt_moves"), [1, 3, 10, 10]


def pt_act() -> tuple[onnx.ModelProto, list[int]]:
    """The activations PyTorch blocks use that the quantizer leaves between a DequantizeLinear
    and a QuantizeLinear: LeakyReLU (fused by onnxruntime into QLinearLeakyRelu; the QOperator
    form writes that op), Hardsigmoid and Hardswish (MobileNetV3; run in float)."""
    b = _Builder(24)
    a = b.node("LeakyRelu", [b.conv("input", 3, 8, 3)], alpha=0.1)
    h = b.node("HardSigmoid", [b.conv(a, 8, 8, 3, group=8)], alpha=0.2, beta=0.5)
    w = b.node("HardSwish", [b.conv(h, 8, 12, 1)])
    y = b.gemm(b.node("Flatten", [b.node("GlobalAveragePool", [b.conv(w, 12, 12, 3)])]), 12, 7)
    return b.model([1, 3, 10, 10], "input", y, "pt_act"), [1, 3, 10, 10]


def qdq_unary(op: str, **attrs: float) -> onnx.ModelProto:
    """Q -> DQ -> ``op`` -> Q -> DQ on 256 values (a graph input of [4, 64]), written by hand at
    opset 23: the quantizer (and its pre-processing) may expand HardSwish into HardSigmoid and
    Mul, so this keeps the op itself."""
    from onnx import TensorProto, helper, numpy_helper

    def c(name: str, v: float | int, dt: type) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(v, dt), name)

    inits = [c("xs", 0.0371, np.float32), c("xz", 9, np.int8), c("ys", 0.0213, np.float32),
             c("yz", -100, np.int8)]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node(op, ["xd"], ["f"], **attrs),
        helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, f"qdq_{op.lower()}",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
                          inits)  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    return m


FLOATS["pt_moves"] = pt_moves
FLOATS["pt_act"] = pt_act
