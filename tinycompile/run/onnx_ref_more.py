"""More node handlers of the ONNX reference (``onnx_reference``; registered in
``onnx_ref_nodes.HANDLERS`` when imported): the data movement PyTorch graphs carry (Split,
Slice, Gather, Squeeze, Unsqueeze, GlobalMaxPool) on any element type, and the elementwise float
functions the quantizer leaves between a DequantizeLinear and a QuantizeLinear (LeakyRelu,
HardSigmoid, HardSwish) with QLinearLeakyRelu, their contrib twin. Each is what the ONNX
specification defines, with onnxruntime's float32 order of operations: LeakyRelu
``x >= 0 ? x : alpha * x``; HardSigmoid ``max(0, min(1, alpha * x + beta))`` (a multiply, then
an add, each rounded); HardSwish its function body, ``x * HardSigmoid(x)`` with alpha 1/6 and
beta 0.5."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx_ref_ops as K
from .onnx_ref_nodes import MS, _op, _pad, _unary_q

F32 = np.float32


def _ints(v: np.ndarray | None) -> list[int] | None:
    return None if v is None else [int(d) for d in np.asarray(v).reshape(-1)]


@_op("Split")
def _split(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, split = _pad(v, 2)[:2]
    axis = int(a.get("axis", 0)) % x.ndim
    sizes = _ints(split) if split is not None else a.get("split")
    k = len(n.output)
    if sizes is None:  # even, the last one smaller (opset 18's num_outputs)
        step = -(-x.shape[axis] // k)
        sizes = [step] * (k - 1) + [x.shape[axis] - step * (k - 1)]
    if len(sizes) != k or sum(sizes) != x.shape[axis] or min(sizes) < 0:
        raise ValueError(f"split sizes {sizes} do not cut an axis of {x.shape[axis]}")
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


@_op("Slice")
def _slice(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x = v[0]
    if s.opset < 10:
        starts, ends = list(a["starts"]), list(a["ends"])
        axes, steps = list(a.get("axes", range(len(starts)))), [1] * len(starts)
    else:
        x, st, en, ax, sp = _pad(v, 5)
        starts, ends = _ints(st), _ints(en)
        axes = _ints(ax) if ax is not None else list(range(len(starts)))
        steps = _ints(sp) if sp is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for b, e, axis, step in zip(starts, ends, axes, steps, strict=True):
        if step == 0:
            raise ValueError("a step is 0")
        # ONNX clamps as Python's slices do (starts/ends beyond the axis, negative ones); the
        # clamped stop of a negative step may be -1, which a slice would read as the last index
        start, stop, step = slice(b, e, step).indices(x.shape[axis % x.ndim])
        index[axis % x.ndim] = slice(start, None if stop < 0 else stop, step)
    return [x[tuple(index)]]


@_op("Gather")
def _gather(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, idx = v[0], np.asarray(v[1]).astype(np.int64)
    axis = int(a.get("axis", 0)) % x.ndim
    if idx.size and (idx.min() < -x.shape[axis] or idx.max() >= x.shape[axis]):
        raise ValueError(f"an index is outside the axis of {x.shape[axis]}")
    return [np.take(x, idx % x.shape[axis] if idx.size else idx, axis=axis)]


def _axes(v: list, a: dict, opset: int) -> list[int] | None:
    return _ints(_pad(v, 2)[1]) if opset >= 13 else a.get("axes")


@_op("Squeeze")
def _squeeze(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    axes = _axes(v, a, s.opset)
    x = v[0]
    return [np.squeeze(x, axis=None if not axes else tuple(d % x.ndim for d in axes))]


@_op("Unsqueeze")
def _unsqueeze(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    axes = _axes(v, a, s.opset) or []
    rank = v[0].ndim + len(axes)
    return [np.expand_dims(v[0], tuple(sorted(d % rank for d in axes)))]


@_op("GlobalMaxPool")
def _global_maxpool(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x = v[0]
    if x.ndim != 4:
        raise ValueError("only 2-D pooling (rank-4 NCHW input) is supported")
    return [x.max(axis=(2, 3), keepdims=True)]


def leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    x = np.asarray(x, F32)
    return np.where(x >= F32(0), x, F32(alpha) * x).astype(F32)


def hard_sigmoid(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    y = (F32(alpha) * np.asarray(x, F32)).astype(F32) + F32(beta)
    return np.maximum(np.minimum(y, F32(1)), F32(0)).astype(F32)


def _float(x: np.ndarray, what: str) -> np.ndarray:
    if x.dtype != np.float32:
        raise ValueError(f"{what} on a quantized tensor (onnxruntime has no such kernel)")
    return x


@_op("LeakyRelu")
def _leaky_relu(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return [leaky_relu(_float(v[0], "LeakyRelu"), a.get("alpha", 0.01))]


@_op("HardSigmoid")
def _hard_sigmoid(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return [hard_sigmoid(_float(v[0], "HardSigmoid"), a.get("alpha", 0.2), a.get("beta", 0.5))]


@_op("HardSwish")
def _hard_swish(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x = _float(v[0], "HardSwish")
    return [(x * hard_sigmoid(x, F32(1.0 / 6.0), 0.5)).astype(F32)]


@_op("QLinearLeakyRelu", MS)
def _qleaky_relu(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    """The table onnxruntime builds: dequantize in float32, the function, MlasQuantizeLinear."""
    x, xs, xz, ys, yz, dt = _unary_q(v)
    table = K.all_values(x.dtype.type)
    f = leaky_relu(K.dequantize(table, xs, xz), a.get("alpha", 0.01))
    out = K.quantize(f, ys, yz, dt)
    return [K.lookup(x, out)]
