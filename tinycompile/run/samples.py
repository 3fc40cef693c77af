"""What a sample is: the one place that decides, for TFLite and ONNX models alike.

A *sample* of a graph input or output is one whole tensor: what one inference reads or writes.
Two views of a batch of samples exist:

- **The IR batch** (what runs, references and ``tc_in.bin`` / ``tc_out.bin`` work on): the
  samples' IR tensors concatenated along axis 0, so a tensor of shape ``(d0, d1, ...)`` gives
  ``(n * d0, d1, ...)`` and a scalar ``(n,)``. For the usual leading batch dimension of 1 this
  is ``(n, d1, ...)``.
- **The file's view** (what a user gives to ``run --inputs`` and gets from ``--outputs``): the
  tensor as the model file shows it (``ir.Port``: ONNX's NCHW, its float or uint8 interface),
  stacked on a new leading axis, ``(n, *shape)``; where the file's shape starts with 1 that
  dimension is the batch axis instead, ``(n, *shape[1:])``. A single sample may also be given
  in the file's own shape.
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Port, Tensor

RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),  # a quantized int32 input (QUANTIZE int32 -> int8/int16)
}
NP = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "float32": np.float32,
    "bool": np.bool_,
}


# ---------------------------------------------------------------------------- the IR batch


def batch_of(shape: tuple[int, ...], n: int) -> tuple[int, ...]:
    """The IR batch shape of ``n`` samples of a tensor of ``shape``."""
    return (n * int(shape[0]), *(int(d) for d in shape[1:])) if len(shape) else (n,)


def rows(t: Tensor) -> int:
    """Rows one sample of ``t`` adds along axis 0 of an IR batch."""
    return batch_of(t.shape, 1)[0]


def batch_shape(t: Tensor, n: int) -> tuple[int, ...]:
    """The IR batch shape of ``n`` samples of ``t``."""
    return batch_of(t.shape, n)


def count(t: Tensor, x: np.ndarray) -> int:
    """How many samples of ``t`` the IR batch ``x`` holds (a CompileError when it is no whole
    number of them)."""
    x = np.asarray(x)
    if x.ndim == 0 or x.size != x.shape[0] * (t.size // rows(t)) or x.shape[0] % rows(t):
        raise CompileError(
            f"tensor '{t.name}' {list(t.shape)}: a batch of shape {list(x.shape)} is no whole"
            " number of samples"
        )
    return x.shape[0] // rows(t)


def sample(t: Tensor, x: np.ndarray, i: int) -> np.ndarray:
    """Sample ``i`` of the IR batch ``x``, in ``t``'s shape."""
    r = rows(t)
    return np.asarray(x)[i * r : (i + 1) * r].reshape(t.shape)


def stack(t: Tensor, samples: list[np.ndarray], dtype: type | None = None) -> np.ndarray:
    """The IR batch of ``samples`` (each of ``t``'s size); none: an empty batch."""
    if not samples:
        return np.zeros(batch_shape(t, 0), dtype or NP.get(t.dtype, np.int8))
    return np.concatenate([np.asarray(s).reshape(batch_shape(t, 1)) for s in samples], axis=0)


# ---------------------------------------------------------------------------- the file's view


def port(g: Graph, tid: int) -> Port:
    """How the model file shows graph input/output ``tid`` (as the IR holds it when the
    frontend recorded nothing else)."""
    if tid in g.ports:
        return g.ports[tid]
    t = g.t(tid)
    return Port(shape=tuple(t.shape), dtype=t.dtype, qdtype=t.dtype)


def file_batch_shape(p: Port, n: int) -> tuple[int, ...]:
    """The file's view of ``n`` samples (see the module docstring)."""
    if p.shape and p.shape[0] == 1:
        return (n, *p.shape[1:])
    return (n, *p.shape)


def file_samples(p: Port, x: np.ndarray, what: str) -> np.ndarray:
    """``x`` (one sample in the file's shape, or a batch of them) as ``(n, *p.shape)``."""
    x = np.asarray(x)
    shape = tuple(p.shape)
    if x.shape == shape or (shape and shape[0] == 1 and x.shape == shape[1:]):
        return x.reshape((1, *shape))
    if x.ndim == len(shape) + 1 and x.shape[1:] == shape:
        return x
    if shape and shape[0] == 1 and x.ndim == len(shape) and x.shape[1:] == shape[1:]:
        return x.reshape((x.shape[0], *shape))
    one = list(shape[1:]) if shape and shape[0] == 1 else list(shape)
    raise CompileError(
        f"{what} wants shape {one} (one sample) or {['N', *one]} (a batch), got {list(x.shape)}"
    )


def to_ir(t: Tensor, p: Port, x: np.ndarray) -> np.ndarray:
    """Samples ``(n, *p.shape)`` in the file's quantized type (``p.qdtype``) -> the IR batch."""
    x = np.asarray(x)
    if p.view is not None:
        x = x.reshape((x.shape[0], *p.view))
    if p.perm is not None:
        x = x.transpose((0, *(a + 1 for a in p.perm)))
    v = x.astype(np.int64) + p.offset if p.offset else x
    return np.ascontiguousarray(v).astype(NP[t.dtype]).reshape(batch_shape(t, x.shape[0]))


def to_file(t: Tensor, p: Port, x: np.ndarray) -> np.ndarray:
    """An IR batch -> samples ``(n, *p.shape)`` of the file's quantized values (``p.qdtype``)."""
    n = count(t, x)
    v = np.asarray(x).reshape((n, *t.shape))
    if p.perm is not None:
        inv = np.argsort(p.perm)
        v = v.transpose((0, *(int(a) + 1 for a in inv)))
    v = v.reshape((n, *p.shape))
    if p.offset:
        v = v.astype(np.int64) - p.offset
    return np.ascontiguousarray(v).astype(NP.get(p.qdtype, v.dtype))


def to_user(g: Graph, tid: int, x: np.ndarray) -> np.ndarray:
    """An IR batch of graph output ``tid`` as a user gets it (``--outputs``): the file's layout
    and quantized type, in ``file_batch_shape``."""
    p = port(g, tid)
    v = to_file(g.t(tid), p, x)
    return v.reshape(file_batch_shape(p, v.shape[0]))


def quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str, rounding: str) -> np.ndarray:
    """float -> integer codes of ``dtype`` with the file's rounding: TFLite's QUANTIZE rounds
    half away from zero (in double), ONNX's QuantizeLinear divides in float32 and rounds half
    to even; then the zero point is added and the result saturated."""
    if rounding == "half_even":
        v = np.rint(x.astype(np.float32) / np.float32(scale)).astype(np.float64)
    else:
        d = x.astype(np.float64) / scale
        v = np.sign(d) * np.floor(np.abs(d) + 0.5)
    lo, hi = RANGES[dtype]
    return np.clip(v + zero_point, lo, hi).astype(NP[dtype])


def dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """(q - zero_point) * scale in float32 (DequantizeLinear; what QuantizeLinear maps back)."""
    return (q.astype(np.int64) - zero_point).astype(np.float32) * np.float32(scale)


# ---------------------------------------------------------------------------- references' feeds


def file_input(
    g: Graph, tid: int, x: np.ndarray, i: int, given: np.ndarray | None = None
) -> np.ndarray:
    """Sample ``i`` of graph input ``tid`` as the model file takes it (what a reference that
    reads the file is fed): the user's own float data where given (``given``: the file's view,
    ``UserInputs.model``), else the IR batch ``x``'s codes in the file's type and layout,
    dequantized where the file's input is float (QuantizeLinear maps them back exactly)."""
    p, t = port(g, tid), g.t(tid)
    if given is not None and given.dtype.kind == "f" and p.dtype == "float32":
        return np.asarray(given[i], np.float32)
    codes = to_file(t, p, sample(t, x, i).reshape(batch_shape(t, 1)))[0]
    if p.dtype == "float32" and t.dtype != "float32":
        return dequantize(codes, t.quant.s, t.quant.zp - p.offset)
    return codes


def ir_output(g: Graph, tid: int, y: np.ndarray) -> np.ndarray:
    """One sample of graph output ``tid`` as the model file gives it -> its IR sample: a float
    output (a DequantizeLinear's) is quantized back exactly (``rint(y / scale) + zp``)."""
    p, t = port(g, tid), g.t(tid)
    y = np.asarray(y).reshape((1, *p.shape))
    if p.dtype == "float32" and t.dtype != "float32":
        lo, hi = RANGES[p.qdtype]
        q = np.rint(y.astype(np.float32) / np.float32(t.quant.s)) + (t.quant.zp - p.offset)
        y = np.clip(q, lo, hi).astype(NP[p.qdtype])
    return sample(t, to_ir(t, p, y), 0)
