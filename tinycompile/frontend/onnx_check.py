"""Structural validation of a loaded ONNX model, before the frontend trusts any of it.

Model files come from anywhere, and protobuf decodes whatever the bytes say: a name that is
not UTF-8 arrives as ``bytes``, an attribute may carry another type than the name implies, an
initializer's ``dims`` may disagree with the data it stores, a node may read a value produced
later or by nobody. ``check_model`` checks every field the reader (``onnx_nodes``,
``onnx_core``, ``onnx_emit``, ``onnx_moves``) reads against the data before it is used, as
the TFLite reader does, and refuses the first problem with one CompileError line naming the
node (by index, op type and name) or the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from ..errors import CompileError
from .onnx_model import plain

MAX_ELEMENTS = 1 << 28  # per tensor: as the TFLite reader, far beyond any microcontroller
MAX_RANK = 8
MAX_DIM = 2**31 - 1
MAX_WINDOW = 1 << 16  # strides, dilations, kernel sizes, pads, groups

# TensorProto element types the reader can hold: bytes per element and the typed field used
# when there is no raw_data (with the value range of int32_data / uint64_data entries)
_ITEMSIZE = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2,
             17: 1, 18: 1, 19: 1, 20: 1}  # fmt: skip
_FIELD = {1: "float_data", 6: "int32_data", 7: "int64_data", 11: "double_data",
          12: "uint64_data", 13: "uint64_data"}  # fmt: skip
_RANGE = {2: (0, 255), 3: (-128, 127), 4: (0, 65535), 5: (-32768, 32767), 9: (0, 1),
          10: (0, 65535), 12: (0, 2**32 - 1), 16: (0, 65535), 17: (0, 255), 18: (0, 255),
          19: (0, 255), 20: (0, 255)}  # fmt: skip
_TYPE_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
               13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}  # fmt: skip
EXTERNAL = 1  # TensorProto.DataLocation

# AttributeProto types of the attributes the reader reads (the same on every operator of the
# default and com.microsoft domains that has an attribute of that name)
FLOAT, INT, STRING, TENSOR, INTS = 1, 2, 3, 4, 7
_ATTR_NAMES = {FLOAT: "a float", INT: "an int", STRING: "a string", TENSOR: "a tensor",
               INTS: "a list of ints"}  # fmt: skip
_ATTRS = {
    **dict.fromkeys(("axis", "group", "transA", "transB", "ceil_mode", "storage_order",
                     "count_include_pad", "channels_last", "antialias", "opset", "block_size",
                     "precision", "output_dtype"), INT),
    **dict.fromkeys(("strides", "dilations", "pads", "kernel_shape", "perm", "axes"), INTS),
    **dict.fromkeys(("alpha", "beta", "min", "max"), FLOAT),
    **dict.fromkeys(("auto_pad", "mode", "coordinate_transformation_mode", "nearest_mode",
                     "keep_aspect_ratio_policy"), STRING),
    "value": TENSOR,
}  # fmt: skip
# Inputs (least, most) of the operators the reader handles (None: any number), as their
# definitions say (every opset); one output, except those of _OUTPUTS
_ARITY: dict[str, tuple[int, int | None]] = {
    "QuantizeLinear": (2, 3), "DequantizeLinear": (2, 3), "QLinearConv": (8, 9), "QGemm": (6, 9),
    "QLinearMatMul": (8, 8), "QLinearAdd": (7, 8), "QLinearMul": (7, 8),
    "QLinearGlobalAveragePool": (5, 5), "QLinearAveragePool": (4, 5), "QLinearSigmoid": (4, 5),
    "QLinearSoftmax": (4, 5), "QLinearConcat": (5, None), "Conv": (2, 3), "Gemm": (2, 3),
    "MatMul": (2, 2), "Add": (2, 2), "Mul": (2, 2), "GlobalAveragePool": (1, 1),
    "AveragePool": (1, 1), "Concat": (1, None), "Sigmoid": (1, 1), "Softmax": (1, 1),
    "Relu": (1, 1), "Clip": (1, 3), "MaxPool": (1, 1), "Flatten": (1, 1), "Reshape": (2, 2),
    "Transpose": (1, 1), "Pad": (2, 4), "Resize": (1, 4), "Constant": (0, 0),
    "QLinearLeakyRelu": (4, 5), "LeakyRelu": (1, 1), "HardSigmoid": (1, 1), "HardSwish": (1, 1),
    "Gather": (2, 2), "GlobalMaxPool": (1, 1), "Slice": (1, 5), "Split": (1, 2),
    "Squeeze": (1, 2), "Unsqueeze": (1, 2),
}  # fmt: skip
_OUTPUTS = {"MaxPool": 2, "Split": None}  # most outputs (MaxPool's indices are refused later)
# Inputs whose element type the operator's definition fixes, where the reader reads a constant
_INPUT_TYPES = {("Reshape", 1): (7,), ("Pad", 1): (7,), ("Pad", 3): (6, 7), ("Resize", 2): (1,),
                ("Resize", 3): (7,)}  # fmt: skip
_POOLS = {"MaxPool", "AveragePool", "QLinearAveragePool"}
_WINDOWED = {"QLinearConv", "Conv", *_POOLS}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFAULT = ("", "ai.onnx")


def check_model(model: Any) -> None:
    """Raise CompileError for the first field of ``model`` (a ModelProto whose external data
    is loaded) that the reader could not trust."""
    domains: set[str] = set()
    for o in model.opset_import:
        d = _text(o.domain, "an opset import's domain")
        d = "" if d in _DEFAULT else d
        if d in domains:
            raise CompileError(f"opset of domain '{plain(d) or 'ai.onnx'}' is imported twice")
        domains.add(d)
    gr = model.graph
    _text(gr.name, "the graph's name")
    if len(gr.sparse_initializer):
        raise CompileError("sparse initializers are not supported")
    defined: dict[str, int] = {}  # value name -> element type of a constant (0: not constant)
    for t in gr.initializer:
        name = _name(t.name, "an initializer's name")
        if name in defined:
            raise CompileError(f"initializer '{plain(name)}' is defined twice")
        check_tensor(t, f"initializer '{plain(name)}'")
        defined[name] = t.data_type
    inputs: set[str] = set()
    for vi in gr.input:
        name = _name(vi.name, "a graph input's name")
        if name in inputs:
            raise CompileError(f"graph input '{plain(name)}' is listed twice")
        inputs.add(name)
        _check_input_shape(vi, name)
    for name in inputs:
        defined.setdefault(name, 0)
    outputs = [n.output for n in gr.node]
    for i, n in enumerate(gr.node):
        _check_node(n, i, domains, defined, outputs)
    for vi in gr.output:
        name = _name(vi.name, "a graph output's name")
        if name not in defined:
            raise CompileError(f"graph output '{plain(name)}' is produced by no node")


def check_tensor(t: Any, where: str) -> None:
    """A TensorProto's type, dims and stored data agree, and are of a sane size."""
    if t.HasField("segment"):
        raise CompileError(f"{where} is stored in segments, which is not supported")
    if t.data_type not in _ITEMSIZE:
        kind = _TYPE_NAMES.get(t.data_type, f"data type {t.data_type}")
        raise CompileError(f"{where} is {kind}, which is not supported")
    if t.data_location == EXTERNAL:
        raise CompileError(f"{where} is in external data, which is not supported here")
    dims = list(t.dims)
    count = _count(dims, f"{where} has dims", f"{where}")
    if t.HasField("raw_data"):
        want = count * _ITEMSIZE[t.data_type]
        if len(t.raw_data) != want:
            raise CompileError(
                f"{where} has dims {dims} ({count} values, {want} bytes) but"
                f" {len(t.raw_data)} bytes of data"
            )
        return
    values = getattr(t, _FIELD.get(t.data_type, "int32_data"))
    if len(values) != count:
        raise CompileError(f"{where} has dims {dims} ({count} values) but {len(values)} values")
    lo, hi = _RANGE.get(t.data_type, (None, None))
    if lo is not None and count and (min(values) < lo or max(values) > hi):
        bad = min(values) if min(values) < lo else max(values)
        raise CompileError(
            f"{where} ({_TYPE_NAMES.get(t.data_type, 'float8')}) holds {bad}, outside [{lo}, {hi}]"
        )


def accumulator_overflow(w: Any, bias: Any) -> int | None:
    """The first output unit whose int32 accumulator can overflow for some int8 input with the
    IR weights ``w`` ([units, ...], int8 values minus their zero point) and ``bias``, however
    a kernel orders its sums (|bias| + 256 * sum(|w| + |zero point|)), or None. C leaves
    signed overflow undefined (onnxruntime's kernels would wrap); no real model comes near."""
    import numpy as np

    data = np.asarray(w.data, np.int64).reshape(len(bias), -1)
    zp = np.abs(np.broadcast_to(np.asarray(w.quant.zero_point, np.int64), (len(bias),)))
    bound = np.abs(np.asarray(bias, np.int64)) + 256 * (
        np.abs(data).sum(axis=1) + zp * data.shape[1]
    )
    bad = np.nonzero(bound >= 2**31)[0]
    return int(bad[0]) if bad.size else None


def _count(dims: list[int], what: str, where: str) -> int:
    """The number of elements of ``dims``, refused when negative, of absurd rank or huge."""
    if len(dims) > MAX_RANK:
        raise CompileError(f"{where} has rank {len(dims)} (max {MAX_RANK})")
    if any(d < 0 or d > MAX_DIM for d in dims):
        raise CompileError(f"{what} {dims[:8]}: a negative or huge dimension")
    if math.prod(d for d in dims if d) > MAX_ELEMENTS:
        raise CompileError(f"{what} {dims[:8]}: far beyond any target")
    return math.prod(dims)


def _check_input_shape(vi: Any, name: str) -> None:
    tt = vi.type.tensor_type
    dims = [d.dim_value for d in tt.shape.dim if d.HasField("dim_value")]
    _count(dims, f"graph input '{plain(name)}' has dims", f"graph input '{plain(name)}'")


def _check_node(
    n: Any, i: int, domains: set[str], defined: dict[str, int], outputs: list[Iterable[str]]
) -> None:
    """One node: text fields, arity, attributes of the types read, inputs defined earlier (and
    of the type the operator fixes, when constant), outputs defined once (``defined`` grows by
    its outputs)."""
    kind = plain(n.op_type) or "?"

    def fail(reason: str) -> CompileError:
        name = plain(n.name) if n.name else ""
        where = f"node '{name}': " if name else ""
        return CompileError(where + reason, op_index=i, op_kind=kind)

    for value, what in ((n.name, "name"), (n.op_type, "op type"), (n.domain, "domain")):
        if isinstance(value, bytes):
            raise fail(f"its {what} is not valid UTF-8 text")
    if not _IDENT.fullmatch(n.op_type):
        raise fail("its op type is not an identifier")
    domain = "" if n.domain in _DEFAULT else n.domain
    if domain not in domains:
        raise fail(f"no opset is imported for its domain '{plain(domain) or 'ai.onnx'}'")
    for x in [*n.input, *n.output]:
        if isinstance(x, bytes):
            raise fail(f"value name '{plain(x)}' is not valid UTF-8 text")
    handled = n.op_type in _ARITY and domain in ("", "com.microsoft")
    if handled:
        lo, hi = _ARITY[n.op_type]
        if len(n.input) < lo or (hi is not None and len(n.input) > hi):
            upto = "" if hi is None else f" and at most {hi}"
            raise fail(f"has {len(n.input)} inputs (needs at least {lo}{upto})")
        if lo and not n.input[0]:
            raise fail("its first input is absent")
        most = _OUTPUTS.get(n.op_type, 1)
        if most is not None and len(n.output) > most:
            raise fail(f"has {len(n.output)} outputs")
    if not len(n.output) or not n.output[0]:
        raise fail("has no output")
    _check_attributes(n, fail, handled, domain in ("", "com.microsoft"))
    for k, x in enumerate(n.input):
        if x and x not in defined:
            later = any(x in out for out in outputs)
            why = "is produced later (a cycle or nodes out of order)" if later else (
                "is produced by no node, initializer or graph input")  # fmt: skip
            raise fail(f"input '{plain(x)}' {why}")
        want = _INPUT_TYPES.get((n.op_type, k)) if handled else None
        if x and want and defined[x] and defined[x] not in want:
            kind = _TYPE_NAMES.get(defined[x], str(defined[x]))
            raise fail(f"input {k} '{plain(x)}' is {kind} ({_TYPE_NAMES[want[-1]]} expected)")
    for k, x in enumerate(n.output):
        if x and (x in defined or x in n.output[:k]):
            raise fail(f"output '{plain(x)}' is defined twice")
    const = [a.t.data_type for a in n.attribute if n.op_type == "Constant" and a.name == "value"]
    defined.update((x, const[0] if const else 0) for x in n.output if x)


def _check_attributes(n: Any, fail: Any, handled: bool, known: bool) -> None:
    """Attribute names are text and unique; on operators of the domains the reader knows
    (``known``), the attributes it reads have their type (the same for every operator of
    those domains that has one of those names) and a sane value."""
    seen: set[str] = set()
    for a in n.attribute:
        if isinstance(a.name, bytes):
            raise fail(f"attribute name '{plain(a.name)}' is not valid UTF-8 text")
        if a.name in seen:
            raise fail(f"attribute '{plain(a.name)}' is given twice")
        seen.add(a.name)
        want = _ATTRS.get(a.name)
        if not known or want is None:
            continue
        if a.type != want:
            raise fail(f"attribute '{a.name}' must be {_ATTR_NAMES[want]}")
        if want == INT:
            _check_int(a.i, a.name, fail)
        elif want == FLOAT and not math.isfinite(a.f):
            raise fail(f"attribute '{a.name}' is {a.f}")
        elif want == INTS:
            _check_ints(n.op_type, list(a.ints), a.name, fail)
        elif want == TENSOR:
            try:
                check_tensor(a.t, "its value")
            except CompileError as e:
                raise fail(e.reason) from None
    if handled and n.op_type == "Constant" and "value" not in seen:
        raise fail("a Constant without a tensor 'value' is not supported")
    if handled and n.op_type in _POOLS and "kernel_shape" not in seen:
        raise fail("kernel_shape is missing")


def _check_int(v: int, name: str, fail: Any) -> None:
    if name == "group" and not 1 <= v <= MAX_WINDOW:
        raise fail(f"group {v} is out of range")
    if not -(2**31) <= v < 2**31:
        raise fail(f"attribute '{name}' is {v}")


def _check_ints(op: str, v: list[int], name: str, fail: Any) -> None:
    if name == "perm" and sorted(v) != list(range(len(v))):
        raise fail(f"perm {v[:8]} is not a permutation")
    if name == "axes" or op not in _WINDOWED:
        if any(not -(2**31) <= x < 2**31 for x in v):
            raise fail(f"attribute '{name}' has a value out of range")
        return
    n = 4 if name == "pads" else 2
    lo = 0 if name == "pads" else 1
    if len(v) != n:
        raise fail(f"{name} {v[:8]} must have {n} values (only 2-D windows are supported)")
    if any(not lo <= x <= MAX_WINDOW for x in v):
        raise fail(f"{name} {v} out of range [{lo}, {MAX_WINDOW}]")


def _text(v: str | bytes, what: str) -> str:
    if isinstance(v, bytes):
        raise CompileError(f"{what} '{plain(v)}' is not valid UTF-8 text")
    return v


def _name(v: str | bytes, what: str) -> str:
    name = _text(v, what)
    if not name:
        raise CompileError(f"{what} is empty")
    return name
