"""TFLite flatbuffer reader, built on the maintained ``tflite`` package's generated classes.

The reader is defensive: model files come from anywhere. Every malformed structure turns into a
CompileError naming the model (and op, where there is one); nothing is allocated from a size the
file claims before checking it against the file's own length.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

import numpy as np
import tflite
from flatbuffers import flexbuffers

from ..errors import CompileError
from ..ir import Graph, Op, Quant, Tensor

MAX_TENSOR_ELEMENTS = 1 << 28  # 256 Mi elements: far beyond any microcontroller
MAX_RANK = 6

_TYPES = {
    tflite.TensorType.FLOAT32: "float32",
    tflite.TensorType.INT32: "int32",
    tflite.TensorType.INT8: "int8",
    tflite.TensorType.UINT8: "uint8",
    tflite.TensorType.INT16: "int16",
    tflite.TensorType.INT64: "int64",
    tflite.TensorType.UINT32: "uint32",  # TFLM's signal library (audio front ends)
    tflite.TensorType.UINT64: "uint64",
    tflite.TensorType.BOOL: "bool",
}
_TYPE_NAMES = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
_OP_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
# zero points must be values of the tensor's own type (they end up in C constants and kernels)
_ZP_RANGE = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
}
_OPTION_CLASSES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")
_NOT_FIELDS = ("GetRootAs", "Init")
_VECTOR_SUFFIXES = ("AsNumpy", "Length", "IsNone")


@functools.cache
def _fields(cls: type) -> list[tuple[str, str, bool]]:
    """(accessor, snake_case name, is_vector) of a generated options class's fields."""
    names = [m for m in dir(cls) if m[:1].isupper() and not m.startswith(_NOT_FIELDS)]
    names = [m for m in names if not m.endswith("BufferHasIdentifier")]
    vectors = {m[: -len("Length")] for m in names if m.endswith("Length")}
    parts = {v + suffix for v in vectors for suffix in _VECTOR_SUFFIXES}
    return [(m, _SNAKE.sub("_", m).lower(), m in vectors) for m in names if m not in parts]


def _raw_options(op: Any) -> dict[str, Any]:
    """The operator's builtin options table as a plain dict, field by field (TFLite's schema
    names in snake_case, enums as ints, vectors as lists). What they mean is for the operator's
    unit to say (``tinycompile.ops``); the reader knows no operator."""
    name = _OPTION_CLASSES.get(op.BuiltinOptionsType(), "NONE")
    table = op.BuiltinOptions()
    cls = getattr(tflite, name, None)
    if name == "NONE" or table is None or cls is None:
        return {}
    o = cls()
    o.Init(table.Bytes, table.Pos)
    raw: dict[str, Any] = {}
    for acc, key, vector in _fields(cls):
        if vector:
            n = getattr(o, acc + "Length")()
            raw[key] = getattr(o, acc + "AsNumpy")().tolist() if n else []
        else:
            v = getattr(o, acc)()
            raw[key] = v if isinstance(v, int | float | bool) else None
    return raw


def _custom_options(op: Any, index: int, kind: str) -> dict[str, Any]:
    """A custom operator's options: the flexbuffer map TFLM's custom kernels read (the signal
    library's ``FlexbufferWrapper``), as a plain dict (ints, floats, bools, lists)."""
    raw = op.CustomOptionsAsNumpy().tobytes()
    try:
        value = flexbuffers.Loads(raw)
    except Exception as e:  # a corrupt flexbuffer raises anything
        raise CompileError(
            f"malformed custom options ({type(e).__name__})", op_index=index, op_kind=kind
        ) from None
    if not isinstance(value, dict):
        raise CompileError("custom options are not a flexbuffer map", op_index=index, op_kind=kind)
    return {str(k): v for k, v in value.items()}


def _plain(text: str) -> str:
    """A model-supplied name fit for a one-line message (printable ASCII, at most 40 chars)."""
    return re.sub(r"[^\x20-\x7e]", "?", text)[:40]


def _check_count(n: int, what: str, limit: int) -> int:
    if n < 0 or n > limit:
        raise ValueError(f"{what} count {n} is out of range")
    return n


def read_tflite(data: bytes, *, source: str = "<model>") -> Graph:
    """Parse a .tflite flatbuffer into the IR."""
    try:
        return _read(data, source)
    except CompileError as e:
        raise e.at(source=source) from None
    except RecursionError:
        raise CompileError("malformed flatbuffer (nesting too deep)", source=source) from None
    except MemoryError:
        raise CompileError("malformed flatbuffer (absurd sizes)", source=source) from None
    except Exception as e:  # the generated accessors raise anything on corrupt offsets
        raise CompileError(
            f"malformed or truncated TFLite flatbuffer ({type(e).__name__}: {e})"[:300],
            source=source,
        ) from None


def _read(data: bytes, source: str) -> Graph:
    buf = bytearray(data)
    n = len(buf)
    model = tflite.Model.GetRootAsModel(buf, 0)
    if model.Version() != 3:
        raise CompileError(f"unsupported TFLite schema version {model.Version()}")
    if model.SubgraphsLength() < 1:
        raise CompileError("model has no subgraph")
    if model.SubgraphsLength() > 1:
        raise CompileError(
            f"model has {model.SubgraphsLength()} subgraphs; control flow is not supported"
        )
    sg = model.Subgraphs(0)
    n_buffers = _check_count(model.BuffersLength(), "buffer", n)
    n_codes = _check_count(model.OperatorCodesLength(), "operator code", n)
    n_tensors = _check_count(sg.TensorsLength(), "tensor", n)
    n_ops = _check_count(sg.OperatorsLength(), "operator", n)

    tensors: list[Tensor] = []
    bad_scales: dict[int, str] = {}
    for i in range(n_tensors):
        tensors.append(_read_tensor(model, sg.Tensors(i), i, n_buffers, data, bad_scales))

    codes: list[str] = []
    for i in range(n_codes):
        oc = model.OperatorCodes(i)
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = _OP_NAMES.get(code, f"BUILTIN_{code}")
        if name == "CUSTOM":
            cc = oc.CustomCode()
            # the op kind appears in one-line error messages: keep a plain character set
            text = cc.decode("ascii", "replace")[:40] if cc else "?"
            name = "CUSTOM(" + re.sub(r"[^A-Za-z0-9_.+-]", "_", text) + ")"
        codes.append(name)

    ops: list[Op] = []
    for i in range(n_ops):
        top = sg.Operators(i)
        oc_index = top.OpcodeIndex()
        if not 0 <= oc_index < n_codes:
            raise CompileError(f"opcode index {oc_index} out of range", op_index=i)
        kind = codes[oc_index]
        ins = [int(x) for x in top.InputsAsNumpy()] if top.InputsLength() else []
        outs = [int(x) for x in top.OutputsAsNumpy()] if top.OutputsLength() else []
        for tid in ins + outs:
            if tid >= n_tensors or tid < -1:
                raise CompileError(f"tensor index {tid} out of range", op_index=i, op_kind=kind)
        if not outs or -1 in outs:
            raise CompileError("operator has no output", op_index=i, op_kind=kind)
        options = _raw_options(top)
        if kind.startswith("CUSTOM(") and top.CustomOptionsLength():
            options = _custom_options(top, i, kind)
        ops.append(Op(index=i, kind=kind, inputs=ins, outputs=outs, options=options))

    inputs = [int(x) for x in sg.InputsAsNumpy()] if sg.InputsLength() else []
    outputs = [int(x) for x in sg.OutputsAsNumpy()] if sg.OutputsLength() else []
    for tid in inputs + outputs:
        if not 0 <= tid < n_tensors:
            raise CompileError(f"graph input/output tensor index {tid} out of range")
    if not outputs:
        raise CompileError("model has no outputs")
    _refuse_bad_scales(bad_scales, ops, inputs + outputs)
    name = sg.Name().decode("utf-8", "replace") if sg.Name() else "model"
    return Graph(
        name=name,
        tensors=tensors,
        ops=ops,
        inputs=inputs,
        outputs=outputs,
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def _refuse_bad_scales(bad: dict[int, str], ops: list[Op], boundary: list[int]) -> None:
    """Raise for the first op (in model order) touching a tensor with an unusable scale; a bad
    scale on a graph input or output that no op touches is refused too, others are unused."""
    if not bad:
        return
    for op in ops:
        for tid in [*op.inputs, *op.outputs]:
            if tid in bad:
                raise CompileError(bad[tid], op_index=op.index, op_kind=op.kind)
    for tid in boundary:
        if tid in bad:
            raise CompileError(bad[tid])


def _read_tensor(
    model: Any, t: Any, i: int, n_buffers: int, data: bytes, bad_scales: dict[int, str]
) -> Tensor:
    name = t.Name().decode("utf-8", "replace") if t.Name() else f"t{i}"
    ttype = t.Type()
    dtype = _TYPES.get(ttype)
    if dtype is None:
        tname = _TYPE_NAMES.get(ttype, str(ttype))
        raise CompileError(f"tensor {i} has unsupported type {tname}")
    rank = t.ShapeLength()
    if rank > MAX_RANK:
        raise CompileError(f"tensor {i} has rank {rank} (max {MAX_RANK})")
    shape = tuple(int(x) for x in t.ShapeAsNumpy()) if rank else ()
    if any(d < 0 for d in shape):
        raise CompileError(f"tensor {i} has a negative or dynamic dimension {list(shape)}")
    elements = 1
    for d in shape:
        elements *= d
    if elements > MAX_TENSOR_ELEMENTS:
        raise CompileError(f"tensor {i} has {elements} elements, far beyond any target")

    quant = None
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        ns, nz = q.ScaleLength(), q.ZeroPointLength()
        if ns > max(elements, 1) or nz > max(elements, 1):
            raise CompileError(f"tensor {i} has {ns} scales for {elements} elements")
        scale = q.ScaleAsNumpy().astype(np.float32)
        zp = q.ZeroPointAsNumpy().astype(np.int64) if nz else np.zeros(ns, np.int64)
        if zp.size != scale.size:
            if zp.size == 1:
                zp = np.full(scale.size, zp[0], np.int64)
            else:
                raise CompileError(f"tensor {i} has {scale.size} scales but {zp.size} zero points")
        bad = scale[~(np.isfinite(scale) & (scale > 0))]
        if bad.size:
            # a zero scale passes every later check and ends in divisions by zero
            bad_scales[i] = (
                f"tensor {i} '{_plain(name)}' has quantization scale {float(bad[0]):g}"
                " (scales must be positive and finite)"
            )
        lo, hi = _ZP_RANGE.get(dtype, _ZP_RANGE["int32"])
        if zp.size and (int(zp.min()) < lo or int(zp.max()) > hi):
            bad = int(zp.min()) if int(zp.min()) < lo else int(zp.max())
            raise CompileError(f"tensor {i} ({dtype}) has zero point {bad} outside [{lo}, {hi}]")
        quant = Quant(scale=scale, zero_point=zp, axis=int(q.QuantizedDimension()))

    arr = None
    b = t.Buffer()
    if b != 0:
        if not 0 <= b < n_buffers:
            raise CompileError(f"tensor {i} refers to buffer {b} of {n_buffers}")
        buffer = model.Buffers(b)
        raw: bytes | None = None
        if buffer.DataLength() > 0:
            raw = buffer.DataAsNumpy().tobytes()
        elif buffer.Offset() > 1:
            off, size = buffer.Offset(), buffer.Size()
            if off + size > len(data):
                raise CompileError(f"tensor {i}: buffer {b} lies outside the file")
            raw = data[off : off + size]
        if raw is not None:
            want = elements * np.dtype(dtype).itemsize
            if len(raw) != want:
                raise CompileError(
                    f"tensor {i} ({list(shape)} {dtype}) needs {want} bytes, buffer has {len(raw)}"
                )
            arr = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)
            arr = arr.reshape(shape)
    variable = bool(t.IsVariable())
    if variable:
        arr = None  # TFLite resets a variable to zero (int8: its zero point), never to its buffer
    return Tensor(
        id=i, name=name, shape=shape, dtype=dtype, quant=quant, data=arr, variable=variable
    )
