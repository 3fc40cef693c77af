"""The ONNX seeds of the fuzz corpus (tests/fuzz/corpus/onnx/), and how they were made.

``python -m tests.fuzz.onnx_seeds`` writes them again: the ONNX op models
(tests/models/ops/onnx_*.onnx), small quantized test models of both forms from tests/onnxgen
(QOperator and QDQ, int8 and uint8), a hand-made model with a Constant-fed Reshape and a
MaxPool on int8 (no other seed has them), and one float model the reader refuses (named
``refused_*``, as the test of the corpus expects).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "corpus" / "onnx"
GENERATED = ["cnn_qop", "cnn_qdq", "mlp_qdq", "mix_qop"]  # tests.onnxgen.models
HANDMADE = ["ties_u8", "binary", "qdq_act"]  # tests.onnxgen.handmade


def reshape_pool() -> onnx.ModelProto:
    """Q -> MaxPool (int8, SAME-like pads) -> Reshape (shape from a Constant node) -> DQ."""
    inits = [
        numpy_helper.from_array(np.array(0.05, np.float32), "s"),
        numpy_helper.from_array(np.array(-3, np.int8), "z"),
    ]
    shape = numpy_helper.from_array(np.array([1, -1], np.int64), "shape_value")
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        helper.make_node(
            "MaxPool", ["xq"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1]
        ),  # fmt: skip
        helper.make_node("Constant", [], ["shape"], value=shape),
        helper.make_node("Reshape", ["p", "shape"], ["r"]),
        helper.make_node("DequantizeLinear", ["r", "s", "z"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "reshape_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def write_seeds(out: Path = OUT) -> list[Path]:
    from tests.onnxgen.handmade import build_handmade
    from tests.onnxgen.models import build_all

    out.mkdir(parents=True, exist_ok=True)
    for p in sorted((ROOT / "tests" / "models" / "ops").glob("onnx_*.onnx")):
        shutil.copy(p, out / p.name)
    with tempfile.TemporaryDirectory() as tmp:
        made = {**build_all(Path(tmp), ["cnn", "mlp", "mix"]), **build_handmade(Path(tmp))}
        for name in GENERATED + HANDMADE:
            shutil.copy(made[name], out / f"{name}.onnx")
        shutil.copy(made["mix_float"], out / "refused_float.onnx")
    onnx.save(reshape_pool(), out / "reshape_pool.onnx")
    return sorted(out.glob("*.onnx"))


if __name__ == "__main__":
    for p in write_seeds(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(p.stat().st_size, p)
