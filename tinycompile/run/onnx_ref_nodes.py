"""The node handlers of the ONNX reference (``onnx_reference``): inputs and attributes of each
supported ONNX node read as the ONNX and onnxruntime contrib specs define them, handed to the
kernels of ``onnx_ref_ops``. A handler gets the session, the node, its input values (None for an
omitted optional input) and its attributes, and returns its outputs; a ValueError names what it
does not support."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import onnx_ref_ops as K

F32 = np.float32
MS = "com.microsoft"
TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64}

Handler = Callable[[Any, Any, list, dict], list[np.ndarray]]
HANDLERS: dict[tuple[str, str], Handler] = {}


def _op(op_type: str, *domains: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for d in domains or ("",):
            HANDLERS[(d, op_type)] = fn
        return fn

    return register


def attrs_of(n: Any) -> dict[str, Any]:
    """A node's attributes as Python values (strings decoded)."""
    from onnx import helper

    out = {}
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def out_type(attrs: dict[str, Any]) -> type:
    """A QuantizeLinear's output type without a zero point: ``output_dtype``, else uint8."""
    t = TYPES.get(int(attrs.get("output_dtype", 2)))
    if t not in (np.int8, np.uint8):
        raise ValueError("only int8 and uint8 quantization is supported")
    return t  # type: ignore[return-value]


def _s(v: np.ndarray) -> np.float32:
    """A per-tensor scale."""
    a = np.asarray(v, F32).reshape(-1)
    if a.size != 1:
        raise ValueError("per-axis quantization of an activation is not supported")
    return a[0]


def _z(v: np.ndarray | None, default: type) -> tuple[int, type]:
    """A per-tensor zero point (0 of ``default`` type when omitted) and its type."""
    if v is None:
        return 0, default
    a = np.asarray(v).reshape(-1)
    if a.size != 1:
        raise ValueError("per-axis zero points of an activation are not supported")
    if a.dtype.type not in (np.int8, np.uint8):
        raise ValueError(f"{a.dtype} quantization is not supported (int8 or uint8)")
    return int(a[0]), a.dtype.type


def _along(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """Per-axis parameters shaped to broadcast along ``axis`` (one value: a scalar)."""
    a = np.asarray(v)
    if a.size == 1:
        return a.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = a.size
    return a.reshape(shape)


def _pad(v: list, k: int) -> list:
    return list(v) + [None] * (k - len(v))


def _no(attrs: dict, **unsupported: Any) -> None:
    """Refuse attributes with values other than the defaults this reference implements."""
    for name, default in unsupported.items():
        v = attrs.get(name, default)
        if v != default and not (isinstance(v, list) and all(x == default for x in v)):
            raise ValueError(f"{name}={v} is not supported")


def _pool_2d(x: np.ndarray, a: dict) -> dict[str, Any]:
    """Kernel, strides and pads of a 2-D pooling node (explicit pads, floor mode)."""
    if x.ndim != 4:
        raise ValueError("only 2-D pooling (rank-4 NCHW input) is supported")
    _no(a, auto_pad="NOTSET", ceil_mode=0, dilations=1, channels_last=0, storage_order=0)
    return dict(kernel=list(a["kernel_shape"]), strides=list(a.get("strides", [1, 1])),
                pads=list(a.get("pads", [0, 0, 0, 0])))  # fmt: skip


# ------------------------------------------------------------------ quantize / dequantize


@_op("QuantizeLinear", "", MS)
def _quantize(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, ys, yz = _pad(v, 3)[:3]
    _no(a, block_size=0)
    dt = np.asarray(yz).dtype.type if yz is not None else out_type(a)
    if dt not in (np.int8, np.uint8):
        raise ValueError(f"{np.dtype(dt)} quantization is not supported (int8 or uint8)")
    axis = int(a.get("axis", 1))
    zp = _along(yz, x.ndim, axis).astype(np.int64) if yz is not None else 0
    return [K.quantize(x, _along(ys, x.ndim, axis), zp, dt)]


@_op("DequantizeLinear", "", MS)
def _dequantize(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz = _pad(v, 3)[:3]
    _no(a, block_size=0)
    axis = int(a.get("axis", 1))
    zp = _along(xz, x.ndim, axis).astype(np.int64) if xz is not None else 0
    return [K.dequantize(x, _along(xs, x.ndim, axis), zp)]


# ------------------------------------------------------------------ QOperator compute ops


@_op("QLinearConv")
def _qconv(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz, w, ws, wz, ys, yz, b = _pad(v, 9)
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError("only 2-D convolutions (rank-4 tensors) are supported")
    _no(a, auto_pad="NOTSET")
    xzv, _ = _z(xz, x.dtype.type)
    yzv, dt = _z(yz, x.dtype.type)
    wzv = np.zeros(1, np.int64) if wz is None else np.asarray(wz).reshape(-1)
    scale = (_s(xs) * np.asarray(ws, F32).reshape(-1)) / _s(ys)
    return [K.conv(x, xzv, w, wzv, b, scale, yzv, dt, group=int(a.get("group", 1)),
                   strides=list(a.get("strides", [1, 1])),
                   dilations=list(a.get("dilations", [1, 1])),
                   pads=list(a.get("pads", [0, 0, 0, 0])))]  # fmt: skip


@_op("QGemm", MS)
def _qgemm(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz, w, ws, wz, c, ys, yz = _pad(v, 9)
    _no(a, transA=0, beta=1.0)
    if ys is None:
        raise ValueError("a QGemm with a float output is not supported")
    xzv, _ = _z(xz, x.dtype.type)
    yzv, dt = _z(yz, x.dtype.type)
    wzv = np.zeros(1, np.int64) if wz is None else np.asarray(wz)
    scale = ((F32(a.get("alpha", 1.0)) * _s(xs)) * np.asarray(ws, F32).reshape(-1)) / _s(ys)
    return [K.gemm(x, xzv, w, wzv, c, scale, yzv, dt, trans_b=bool(a.get("transB", 0)))]


@_op("QLinearMatMul")
def _qmatmul(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz, w, ws, wz, ys, yz = _pad(v, 8)
    if w.ndim != 2:
        raise ValueError("only a 2-D B is supported")
    xzv, _ = _z(xz, x.dtype.type)
    yzv, dt = _z(yz, x.dtype.type)
    wzv = np.zeros(1, np.int64) if wz is None else np.asarray(wz)
    scale = (_s(xs) * np.asarray(ws, F32).reshape(-1)) / _s(ys)
    return [K.gemm(x, xzv, w, wzv, None, scale, yzv, dt, trans_b=False)]


def _binary(kernel: Callable, v: list) -> list[np.ndarray]:
    a, as_, az, b, bs, bz, cs, cz = _pad(v, 8)
    azv, _ = _z(az, a.dtype.type)
    bzv, _ = _z(bz, b.dtype.type)
    czv, dt = _z(cz, a.dtype.type)
    return [kernel(a, (_s(as_), azv), b, (_s(bs), bzv), (_s(cs), czv), dt)]


@_op("QLinearAdd", MS)
def _qadd(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return _binary(K.add, v)


@_op("QLinearMul", MS)
def _qmul(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return _binary(K.mul, v)


def _unary_q(v: list) -> tuple[np.ndarray, np.float32, int, np.float32, int, type]:
    x, xs, xz, ys, yz = _pad(v, 5)
    xzv, _ = _z(xz, x.dtype.type)
    yzv, dt = _z(yz, x.dtype.type)
    return x, _s(xs), xzv, _s(ys), yzv, dt


@_op("QLinearGlobalAveragePool", MS)
def _qgap(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    _no(a, channels_last=0)
    return [K.global_avgpool(*_unary_q(v))]


@_op("QLinearAveragePool", MS)
def _qavgpool(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz, ys, yz, dt = _unary_q(v)
    geo = _pool_2d(x, a)
    return [K.avgpool(x, xs, xz, ys, yz, dt, **geo,
                      include_pad=bool(a.get("count_include_pad", 0)))]  # fmt: skip


@_op("QLinearSigmoid", MS)
def _qsigmoid(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, xz, ys, yz, dt = _unary_q(v)
    return [K.sigmoid(x, (xs, xz), (ys, yz), dt)]


@_op("QLinearSoftmax", MS)
def _qsoftmax(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, xs, _, ys, yz, dt = _unary_q(v)
    opset = int(a["opset"])
    axis = int(a.get("axis", 1 if opset < 13 else -1))
    return [K.softmax(x, xs, ys, yz, dt, axis=axis, opset=opset)]


@_op("QLinearConcat", MS)
def _qconcat(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    if len(v) < 5 or (len(v) - 2) % 3:
        raise ValueError("expects Y_scale, Y_zero_point, then (X, scale, zero point) triples")
    ys, (yz, dt) = _s(v[0]), _z(v[1], v[2].dtype.type)
    parts = []
    for k in range(2, len(v), 3):
        x, xs, (xz, _) = v[k], _s(v[k + 1]), _z(v[k + 2], v[k].dtype.type)
        same = xs == ys and xz == yz and x.dtype == np.dtype(dt)  # copied as they are
        parts.append(x if same else K.quantize(K.dequantize(x, xs, xz), ys, yz, dt))
    return [np.concatenate(parts, axis=int(a.get("axis", 0)))]


# ------------------------------------------------------------------ any type: moves, float ops


@_op("Constant")
def _constant(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    from onnx import numpy_helper

    for n_attr in n.attribute:
        if n_attr.name == "value":
            return [numpy_helper.to_array(n_attr.t)]
    for name, dt in (("value_float", F32), ("value_floats", F32), ("value_int", np.int64),
                     ("value_ints", np.int64)):  # fmt: skip
        if name in a:
            return [np.asarray(a[name], dt)]
    raise ValueError("a Constant without a tensor, float(s) or int(s) value is not supported")


@_op("MaxPool")
def _maxpool(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    if len(n.output) > 1 and n.output[1]:
        raise ValueError("MaxPool's Indices output is not supported")
    return [K.maxpool(v[0], **_pool_2d(v[0], a))]


@_op("Flatten")
def _flatten(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x = v[0]
    axis = int(a.get("axis", 1)) % (x.ndim + 1) if x.ndim else 0
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return [x.reshape(rows, -1 if rows else 0)]


@_op("Reshape")
def _reshape(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, shape = v[0], [int(d) for d in np.asarray(v[1]).reshape(-1)]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [x.reshape(shape)]


@_op("Transpose")
def _transpose(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return [np.transpose(v[0], a.get("perm"))]


@_op("Concat")
def _concat(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    return [np.concatenate(v, axis=int(a["axis"]))]


@_op("Pad")
def _pad_op(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, pads, value, axes = _pad(v, 4)
    _no(a, mode="constant")
    if axes is not None:
        raise ValueError("Pad with axes is not supported")
    p = [int(d) for d in np.asarray(a["pads"] if s.opset < 11 else pads).reshape(-1)]
    if len(p) != 2 * x.ndim or min(p) < 0:
        raise ValueError(f"pads {p} do not fit a rank-{x.ndim} input (or crop)")
    fill = a.get("value", 0.0) if s.opset < 11 else (0 if value is None else value.reshape(-1)[0])
    widths = [(p[d], p[d + x.ndim]) for d in range(x.ndim)]
    return [np.pad(x, widths, constant_values=np.asarray(fill).astype(x.dtype))]


@_op("Resize")
def _resize(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x = v[0]
    _no(a, mode="nearest", antialias=0, keep_aspect_ratio_policy="stretch", exclude_outside=0)
    if a.get("axes"):
        raise ValueError("Resize with axes is not supported")
    if s.opset < 11:  # Resize-10: (X, scales), asymmetric coordinates, its own rounding
        scales_in, sizes_in, coord, near = v[1], None, "asymmetric", "simple"
    else:
        scales_in, sizes_in = _pad(v, 4)[2:4]
        coord = a.get("coordinate_transformation_mode", "half_pixel")
        near = a.get("nearest_mode", "round_prefer_floor")
    if sizes_in is not None and sizes_in.size:
        sizes = [int(d) for d in sizes_in.reshape(-1)]
        scales = [F32(o) / F32(i) for o, i in zip(sizes, x.shape, strict=True)]
    elif scales_in is not None and scales_in.size:
        scales = [F32(d) for d in np.asarray(scales_in, F32).reshape(-1)]
        sizes = [int(sc * F32(d)) for sc, d in zip(scales, x.shape, strict=True)]
    else:
        raise ValueError("Resize needs scales or sizes")
    return [K.resize_nearest(x, scales, sizes, coord, near)]


@_op("Relu")
def _relu(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    if v[0].dtype != np.float32:
        raise ValueError("Relu on a quantized tensor (onnxruntime has no such kernel)")
    return [np.maximum(v[0], F32(0.0))]


@_op("Clip")
def _clip(s: Any, n: Any, v: list, a: dict) -> list[np.ndarray]:
    x, lo, hi = _pad(v, 3)[:3]
    if x.dtype != np.float32:
        raise ValueError("Clip on a quantized tensor (onnxruntime has no such kernel)")
    if s.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    if lo is not None:
        x = np.maximum(x, F32(np.asarray(lo).reshape(-1)[0]))
    if hi is not None:
        x = np.minimum(x, F32(np.asarray(hi).reshape(-1)[0]))
    return [x]
