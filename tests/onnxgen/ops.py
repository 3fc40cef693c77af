"""One small quantized ONNX model per ONNX op kind, committed in tests/models/ops/ (beside the
TFLite op models, so tests/test_ops_registry.py compares each with its reference, layer by
layer). ``python -m tests.onnxgen.ops`` rewrites them; the output is deterministic (fixed seeds,
calibration data and quantizer version pinned).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

from .models import _Builder, act, quantize

OUT = Path(__file__).resolve().parent.parent / "models" / "ops"


def conv() -> tuple[onnx.ModelProto, list[int]]:
    """ONNX_CONV: a strided conv and a depthwise conv with a multiplier of 2."""
    b = _Builder(21)
    c = b.conv("input", 3, 4, 3, stride=2)
    y = b.conv(c, 4, 8, 3, group=4)
    return b.model([1, 3, 9, 7], "input", y, "onnx_conv"), [1, 3, 9, 7]


def gemm() -> tuple[onnx.ModelProto, list[int]]:
    """ONNX_GEMM: Gemm transB=1 (PyTorch layout), Gemm transB=0 and MatMul."""
    b = _Builder(22)
    h = b.gemm("input", 12, 10, trans_b=1)
    h = b.gemm(h, 10, 8, trans_b=0)
    y = b.node("MatMul", [h, b.const("w", b.rng.normal(0, 0.3, (8, 5)))])
    return b.model([1, 12], "input", y, "onnx_gemm"), [1, 12]


def add() -> tuple[onnx.ModelProto, list[int]]:
    """ONNX_ADD (and ONNX_GLOBAL_AVG_POOL): two convs added, then a global average pool."""
    b = _Builder(23)
    a = b.conv("input", 2, 4, 3)
    c = b.conv("input", 2, 4, 1)
    s = b.node("Add", [a, c])
    y = b.node("GlobalAveragePool", [s])
    return b.model([1, 2, 6, 6], "input", y, "onnx_add_gap"), [1, 2, 6, 6]


def concat() -> tuple[onnx.ModelProto, list[int]]:
    """ONNX_REQUANT: a Concat of two convs quantized at different scales."""
    b = _Builder(24)
    a = b.conv("input", 2, 3, 3)
    c = b.node("Relu", [b.conv("input", 2, 2, 1)])
    y = b.node("Concat", [a, c], axis=1)
    return b.model([1, 2, 5, 5], "input", y, "onnx_concat"), [1, 2, 5, 5]


def resize() -> tuple[onnx.ModelProto, list[int]]:
    """ONNX_RESIZE_NEAREST: half_pixel / round_prefer_floor by scales, then align_corners /
    round_prefer_ceil and asymmetric / floor to odd sizes."""
    b = _Builder(25)
    c = b.conv("input", 2, 3, 3)
    r = b.node("Resize", [c, "", b.const("sc", np.array([1, 1, 2, 2], np.float32))])
    sz = b.const_i64("sz", [1, 3, 9, 13])
    r = b.node(
        "Resize",
        [r, "", "", sz],
        coordinate_transformation_mode="align_corners",
        nearest_mode="round_prefer_ceil",
    )
    sz = b.const_i64("sz", [1, 3, 5, 4])
    r = b.node(
        "Resize", [r, "", "", sz], coordinate_transformation_mode="asymmetric", nearest_mode="floor"
    )
    y = b.conv(r, 3, 2, 1)
    return b.model([1, 2, 5, 4], "input", y, "onnx_resize"), [1, 2, 5, 4]


# name -> (builder, QDQ form?, per channel?)
OPS: dict[str, tuple[Callable[[], tuple[onnx.ModelProto, list[int]]], bool, bool]] = {
    "onnx_conv": (conv, False, True),
    "onnx_gemm": (gemm, True, True),
    "onnx_add_gap": (add, False, False),
    "onnx_concat": (concat, True, False),
    "onnx_act": (act, False, True),
    "onnx_resize": (resize, True, False),  # ONNX_SIGMOID, ONNX_MUL, ONNX_AVG_POOL, ONNX_SOFTMAX
}


def build(out: Path = OUT) -> list[Path]:
    made = []
    with tempfile.TemporaryDirectory() as td:
        for name, (fn, qdq, pc) in OPS.items():
            model, shape = fn()
            fp = Path(td) / f"{name}_float.onnx"
            onnx.save(model, fp)
            dst = out / f"{name}.onnx"
            quantize(fp, dst, shape, qdq=qdq, per_channel=pc)
            made.append(dst)
    return made


if __name__ == "__main__":
    for p in build(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(p)
