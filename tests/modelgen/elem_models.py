"""Builders of single-layer ADD, MUL and pooling models (written with ``tflite_writer``, no
TensorFlow) shared by the elementwise and pooling kernel tests (tests/test_kernels_fast_elem.py,
tests/test_kernels_fast_mul.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tflite

from .tflite_writer import Node, T, write

ACT = {"none": 0, "relu": 1, "relu6": 3}


def opts(kind: str, **fields: int):
    """A writer of options table ``kind`` (e.g. "AddOptions") with ``fields`` set."""

    def w(b) -> int:
        getattr(tflite, f"{kind}Start")(b)
        for k, v in fields.items():
            getattr(tflite, f"{kind}Add{k}")(b, v)
        return getattr(tflite, f"{kind}End")(b)

    return w


def clamp(act: str, so: float, zo: int) -> tuple[int, int]:
    """TFLite's int8 clamp range of a fused activation at output scale ``so``, zero point ``zo``."""
    if act == "none":
        return -128, 127
    hi = 127 if act == "relu" else min(127, zo + round(6.0 / so))
    return max(-128, zo), hi


def binary(path: Path, op: str, a, b, act: str, qa, qb, qo) -> Path:
    """``op`` ("ADD" or "MUL") of inputs of shapes ``a`` and ``b`` (broadcast), written to
    ``path``."""
    out = tuple(np.broadcast_shapes(a, b))
    name = "AddOptions" if op == "ADD" else "MulOptions"
    o = opts(name, FusedActivationFunction=ACT[act])
    tensors = [T("a", a, quant=qa), T("b", b, quant=qb), T("y", out, quant=qo)]
    path.write_bytes(write(tensors, [Node(op, [0, 1], [2], name, o)], [0, 1], [2]))
    return path


def pool(path: Path, kind: str, hwc, k: int, s: int, pad: str, act: str) -> Path:
    """A ``kind`` pooling layer (k x k window, stride s, "same" or "valid") over ``hwc``."""
    h, w, c = hwc

    def size(n: int) -> int:
        return (n - k) // s + 1 if pad == "valid" else -(-n // s)

    o = opts(
        "Pool2DOptions", Padding=0 if pad == "same" else 1, StrideW=s, StrideH=s,
        FilterWidth=k, FilterHeight=k, FusedActivationFunction=ACT[act],
    )  # fmt: skip
    q = (0.04, -7)
    tensors = [T("x", (1, h, w, c), quant=q), T("y", (1, size(h), size(w), c), quant=q)]
    path.write_bytes(write(tensors, [Node(kind, [0], [1], "Pool2DOptions", o)], [0], [1]))
    return path
