"""Certainly invalid models: what a mutant breaks so surely that compiling it is a failure.

Computed on the final mutant (not from the mutation's description, which later mutations may
undo), independently of the reader: a zero point outside its tensor's type, a constant whose
shape disagrees with the data stored for it, a name that is not text. ``certainly_invalid``
returns the reason, or None when the model may be valid.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

# TFLite tensor types: value range of a zero point, and bytes per element
_TFL_ZP = {9: (-128, 127), 3: (0, 255), 7: (-32768, 32767)}
_TFL_BYTES = {0: 4, 2: 4, 3: 1, 4: 8, 7: 2, 9: 1}
_PACKED = {21, 22, 23, 25, 26}  # ONNX 4- and 2-bit types: several values per byte


def certainly_invalid(path: str) -> str | None:
    data = Path(path).read_bytes()
    try:
        if path.endswith(".onnx"):
            return _onnx(data)
        return _tflite(data)
    except Exception:  # noqa: BLE001 - what cannot be decoded here is not certainly anything
        return None


def _tflite(data: bytes) -> str | None:
    from .tflite_objects import unpack

    m = unpack(data)
    if not m.subgraphs:
        return None
    bufs = m.buffers or []
    for i, t in enumerate(m.subgraphs[0].tensors or []):
        q = t.quantization
        rng = _TFL_ZP.get(int(t.type))
        scaled = q is not None and q.scale is not None and len(q.scale) > 0
        if rng and scaled and q.zeroPoint is not None:
            bad = [int(z) for z in q.zeroPoint if not rng[0] <= int(z) <= rng[1]]
            if bad:
                return f"tensor {i} (type {t.type}) has zero point {bad[0]} outside {list(rng)}"
        shape = [int(x) for x in (t.shape if t.shape is not None else [])]
        size = _TFL_BYTES.get(int(t.type))
        if not t.buffer or t.buffer >= len(bufs) or size is None or t.isVariable:
            continue
        b = bufs[t.buffer].data
        if b is not None and len(b) and all(d >= 0 for d in shape):
            if len(b) != math.prod(shape) * size:
                return f"tensor {i} {shape} is stored in {len(b)} bytes"
    return None


def _onnx(data: bytes) -> str | None:
    import onnx

    m = onnx.load_model_from_string(data)
    g = m.graph
    names: list[Any] = [g.name, *(t.name for t in g.initializer), *(v.name for v in g.input)]
    names += [v.name for v in g.output]
    for n in g.node:
        names += [n.name, n.op_type, n.domain, *n.input, *n.output]
    if any(isinstance(x, bytes) for x in names):
        return "a name that is not UTF-8"
    for t in g.initializer:
        why = _tensor(t)
        if why:
            return f"initializer '{t.name[:30]}' {why}"
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.type == 4:
                why = _tensor(a.t)
                if why:
                    return f"Constant '{n.name[:30]}' {why}"
    return None


def _tensor(t: Any) -> str | None:
    """Why a TensorProto's dims and stored data cannot agree, or None."""
    from onnx import helper

    if t.data_location == 1 or t.data_type in _PACKED or t.data_type in (0, 8):
        return None
    try:
        dt = helper.tensor_dtype_to_np_dtype(t.data_type)
        field = helper.tensor_dtype_to_field(t.data_type)
    except (KeyError, ValueError, TypeError):
        return None
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        return f"has a negative dimension {dims}"
    n = math.prod(dims)
    if t.HasField("raw_data"):
        if len(t.raw_data) != n * dt.itemsize:
            return f"has dims {dims} but {len(t.raw_data)} bytes of {dt}"
        return None
    values = getattr(t, field)
    if len(values) != n:
        return f"has dims {dims} but {len(values)} stored values"
    if field == "int32_data" and dt.kind in "iu" and dt.itemsize < 4 and n:
        import numpy as np

        info = np.iinfo(dt)
        if min(values) < info.min or max(values) > info.max:
            return f"holds a value outside {dt} (a zero point outside its type)"
    return None
