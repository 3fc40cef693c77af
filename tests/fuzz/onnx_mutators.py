"""Structure-aware mutation of ONNX models (``o_*``) through the ``onnx`` protobuf API: what a
tensor carries (dims, data type, stored data, zero points, scales, values the reader uses,
external data). The graph-level ones (names, attributes, opsets, wiring, node order) are in
onnx_graph_mutators.py; ``mutate_onnx`` draws from both.

Each takes a ``Mut`` (the model, changed in place, the random source and pending byte
substitutions) and returns a description. Text that is not UTF-8 cannot be set through the API
(names are ``str``): ``Mut.hostile`` hands out a placeholder of the same length, replaced by
the hostile bytes in the serialized model, so no length prefix changes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .edge_values import FLOAT_EDGES
from .onnx_wire import HOSTILE_BYTES

INT_EDGES = [0, -1, -2, 1, 2, 127, 128, 255, 256, -128, -129, 65536, 2**31 - 1, 2**31, -(2**31),
             2**40, 2**62, -(2**63), 1099511627776]  # fmt: skip
DIM_EDGES = [0, 1, 2, 3, 46341, 65536, 2**31 - 1, 2**31, 2**40, 2**62, 1099511627776]
# (scale slots, zero point slots) of the quantized operators' inputs
QP_SLOTS: dict[str, tuple[list[int], list[int]]] = {
    "QuantizeLinear": ([1], [2]), "DequantizeLinear": ([1], [2]),
    "QLinearConv": ([1, 4, 6], [2, 5, 7]), "QLinearMatMul": ([1, 4, 6], [2, 5, 7]),
    "QGemm": ([1, 4, 7], [2, 5, 8]), "QLinearAdd": ([1, 4, 6], [2, 5, 7]),
    "QLinearMul": ([1, 4, 6], [2, 5, 7]), "QLinearGlobalAveragePool": ([1, 3], [2, 4]),
    "QLinearAveragePool": ([1, 3], [2, 4]), "QLinearSigmoid": ([1, 3], [2, 4]),
    "QLinearSoftmax": ([1, 3], [2, 4]),
}  # fmt: skip


@dataclass
class Mut:
    """A mutation in progress: the model (changed in place), the random source, and the
    placeholder -> hostile bytes substitutions to make once it is serialized."""

    m: Any
    rng: random.Random
    subs: list[tuple[bytes, bytes]] = field(default_factory=list)

    def hostile(self) -> str:
        """A unique placeholder name; the serialized model gets hostile bytes in its place."""
        k = len(self.subs)
        ph = f"\x01hostile{k:03d}{'_' * self.rng.choice([0, 4, 40])}\x01"
        h = self.rng.choice(HOSTILE_BYTES)
        self.subs.append((ph.encode(), (h * (len(ph) // len(h) + 1))[: len(ph)]))
        return ph

    def text(self) -> str:
        """A hostile name: invalid UTF-8 (through a placeholder) or odd but valid text."""
        if self.rng.random() < 0.6:
            return self.hostile()
        return self.rng.choice(["a\nb", "*/ x /*", "??/", "a\\", "", " ", "x" * 300, "\u202e"])


def tensors(m: Any) -> list[Any]:
    """Initializers and the value tensors of Constant nodes."""
    out = list(m.graph.initializer)
    for n in m.graph.node:
        out += [a.t for a in n.attribute if n.op_type == "Constant" and a.name == "value"]
    return out


def qparam_names(m: Any) -> tuple[list[str], list[str]]:
    """Names of the scale and zero point inputs of the quantized operators."""
    scales: list[str] = []
    zps: list[str] = []
    for n in m.graph.node:
        ins = list(n.input)
        if n.op_type == "QLinearConcat":
            s_at, z_at = [0, *range(3, len(ins), 3)], [1, *range(4, len(ins), 3)]
        else:
            s_at, z_at = QP_SLOTS.get(n.op_type, ([], []))
        scales += [ins[k] for k in s_at if k < len(ins) and ins[k]]
        zps += [ins[k] for k in z_at if k < len(ins) and ins[k]]
    return scales, zps


def small(t: Any) -> bool:
    """Whether ``t``'s dims are sane enough to build its data here (after a mutation of the
    dims, they may claim 2^62 elements)."""
    return all(0 <= d <= 1 << 16 for d in t.dims) and math.prod(t.dims) <= 1 << 16


def _by_name(m: Any, names: list[str]) -> list[Any]:
    want = set(names)
    return [t for t in tensors(m) if t.name in want and small(t)]


def set_array(t: Any, arr: np.ndarray, rng: random.Random, typed: float = 0.3) -> None:
    """Store ``arr`` in ``t`` (keeping name and data type), as raw data or in a typed field."""
    from onnx import numpy_helper

    name, dt = t.name, t.data_type
    t.CopyFrom(numpy_helper.from_array(arr))
    t.name, t.data_type = name, dt
    if rng.random() < typed and arr.dtype.kind in "iub" and arr.dtype.itemsize <= 4:
        t.ClearField("raw_data")
        t.int32_data.extend(int(x) for x in arr.reshape(-1))


def o_dims(mu: Mut) -> str:
    """An initializer's dims: negative, huge, zero, a dimension more or less, swapped."""
    ts = tensors(mu.m)
    t = mu.rng.choice(ts)
    dims = list(t.dims)
    what = mu.rng.choice(["edge", "edge", "negative", "add", "drop", "swap", "scalar"])
    if what == "edge" and dims:
        dims[mu.rng.randrange(len(dims))] = mu.rng.choice(DIM_EDGES)
    elif what == "negative":
        dims = dims or [1]
        dims[mu.rng.randrange(len(dims))] = mu.rng.choice([-1, -2, -(2**31), -(2**63)])
    elif what == "add":
        dims.insert(mu.rng.randrange(len(dims) + 1), mu.rng.choice([1, 1, 2, 0, 2**40]))
    elif what == "drop" and dims:
        del dims[mu.rng.randrange(len(dims))]
    elif what == "swap" and len(dims) > 1:
        mu.rng.shuffle(dims)
    elif what == "scalar":
        dims = []
    del t.dims[:]
    t.dims.extend(dims)
    return f"dims of '{t.name[:20]}' {what} -> {dims[:6]}"


def o_dtype(mu: Mut) -> str:
    t = mu.rng.choice(tensors(mu.m))
    v = mu.rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 21, 22, 23, 99])
    t.data_type = v
    return f"data type of '{t.name[:20]}' -> {v}"


def o_data(mu: Mut) -> str:
    """The stored data: truncated, extended, emptied, moved to a typed field, or doubled up."""
    t = mu.rng.choice(tensors(mu.m))
    what = mu.rng.choice(["truncate", "extend", "empty", "typed", "both", "random", "clear"])
    raw = t.raw_data
    if what == "truncate" and raw:
        t.raw_data = raw[: mu.rng.randrange(len(raw))]
    elif what == "extend":
        t.raw_data = raw + bytes(mu.rng.choice([1, 3, 16, len(raw) or 8]))
    elif what == "empty":
        t.raw_data = b""
    elif what == "typed":
        t.ClearField("raw_data")
        t.int32_data.extend(mu.rng.choice(INT_EDGES[:12]) for _ in range(mu.rng.choice([0, 1, 4])))
    elif what == "both":
        t.float_data.extend([1.0, 2.0])
        t.int64_data.extend([3])
    elif what == "random" and raw:
        t.raw_data = bytes(mu.rng.randrange(256) for _ in range(len(raw)))
    else:
        for f in ("raw_data", "int32_data", "float_data", "int64_data", "double_data"):
            t.ClearField(f)
    return f"data of '{t.name[:20]}' {what}"


def o_zero_point(mu: Mut) -> str:
    """Zero points: values outside their type (in int32_data, where numpy would wrap them),
    edge values, another type, per-channel shapes."""
    _, zps = qparam_names(mu.m)
    ts = _by_name(mu.m, zps)
    if not ts:
        return "(no zero point)"
    t = mu.rng.choice(ts)
    what = mu.rng.choice(["outside", "outside", "edge", "type", "shape"])
    n = math.prod(t.dims)
    if what == "outside":
        lo, hi = (0, 255) if t.data_type == 2 else (-128, 127)
        v = mu.rng.choice([hi + 1, lo - 1, hi + 1000, 2**31 - 1, -(2**31)])
        for f in ("raw_data", "int32_data"):
            t.ClearField(f)
        t.int32_data.extend([v] * n)
        return f"zero point '{t.name[:20]}' = {v} (type {t.data_type})"
    if what == "edge":
        v = mu.rng.choice([-128, 127, 0, 255, 128])
        dt = np.uint8 if t.data_type == 2 else np.int8
        set_array(t, np.full(list(t.dims), v).astype(dt), mu.rng)
        return f"zero point '{t.name[:20]}' = {v} (wrapped to its type)"
    if what == "type":
        t.data_type = mu.rng.choice([1, 2, 3, 4, 5, 6, 7])
        return f"zero point '{t.name[:20]}' type -> {t.data_type}"
    k = mu.rng.choice([0, 2, 3, 1000])
    dt = np.uint8 if t.data_type == 2 else np.int8
    set_array(t, np.zeros([k], dt), mu.rng)
    return f"zero point '{t.name[:20]}' shape -> [{k}]"


def o_scale(mu: Mut) -> str:
    scales, _ = qparam_names(mu.m)
    ts = _by_name(mu.m, scales)
    if not ts:
        return "(no scale)"
    t = mu.rng.choice(ts)
    if mu.rng.random() < 0.75:
        v = mu.rng.choice(FLOAT_EDGES + [1e-30, 2.0**-40, 1e30])
        set_array(t, np.full(list(t.dims), v, np.float32), mu.rng, typed=0)
        return f"scale '{t.name[:20]}' = {v}"
    k = mu.rng.choice([0, 2, 3, 64])
    set_array(t, np.full([k], 0.1, np.float32), mu.rng, typed=0)
    return f"scale '{t.name[:20]}' shape -> [{k}]"


def o_values(mu: Mut) -> str:
    """Values the reader computes with (Reshape shapes, pads, Resize scales/sizes, Clip bounds,
    biases, weights): edge integers or floats, the element count kept."""
    t = mu.rng.choice(tensors(mu.m))
    n = math.prod(t.dims)
    if n == 0 or not small(t):
        return "(no values)"
    from onnx import helper

    try:
        dt = np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type))
    except (KeyError, TypeError, ValueError):
        return "(no dtype)"
    arr = np.zeros(n, np.float64)
    for _ in range(mu.rng.choice([1, 1, 2, n])):
        pool = FLOAT_EDGES if dt.kind == "f" else INT_EDGES
        arr[mu.rng.randrange(n)] = mu.rng.choice(pool)
    if dt.kind == "f":
        out = arr.astype(dt)
    else:
        info = np.iinfo(dt) if dt.kind in "iu" else np.iinfo(np.uint8)
        with np.errstate(invalid="ignore"):  # int64's edges do not survive float64
            out = np.clip(np.nan_to_num(arr), info.min, info.max).astype(dt)
    set_array(t, out.reshape(list(t.dims)), mu.rng, typed=0.2)
    return f"values of '{t.name[:20]}' ({dt}) edged"


def o_external(mu: Mut) -> str:
    """An initializer said to live in an external file: missing, hostile or escaping paths,
    absurd offsets and lengths, unknown keys."""
    t = mu.rng.choice(tensors(mu.m))
    t.data_location = 1
    t.ClearField("raw_data")
    loc = mu.rng.choice(["weights.bin", "../../etc/passwd", "/etc/passwd", "x\x00y", "",
                         "case.onnx", mu.hostile()])  # fmt: skip
    entries = [("location", loc)]
    if mu.rng.random() < 0.5:
        entries.append(("offset", mu.rng.choice(["0", "-1", "99999999999", "abc", "1e3"])))
    if mu.rng.random() < 0.5:
        entries.append(("length", mu.rng.choice(["0", "-5", "4", "18446744073709551616"])))
    if mu.rng.random() < 0.3:
        entries.append((mu.rng.choice(["checksum", "__class__", mu.hostile()]), "x"))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    return f"'{t.name[:20]}' external at {loc[:20]!r}"


TENSOR_MUTATORS: list[tuple[Callable[[Mut], str], float]] = [
    (o_dims, 2.0),
    (o_dtype, 1.0),
    (o_data, 1.5),
    (o_zero_point, 2.0),
    (o_scale, 1.0),
    (o_values, 2.0),
    (o_external, 0.3),
]


def mutate_onnx(model: Any, rng: random.Random) -> tuple[bytes, str]:
    """One to three structural mutations of a copy of ``model``; the serialized mutant."""
    import onnx

    from .onnx_graph_mutators import GRAPH_MUTATORS

    table = TENSOR_MUTATORS + GRAPH_MUTATORS
    fns, weights = zip(*table, strict=True)
    for _attempt in range(8):
        mu = Mut(onnx.ModelProto(), rng)
        mu.m.CopyFrom(model)
        descs = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                descs.append(rng.choices(fns, weights)[0](mu))
            except Exception:  # noqa: BLE001 - e.g. a previous mutation removed what it needs
                descs.append("(skipped)")
        try:
            data = mu.m.SerializeToString()
        except Exception:  # noqa: BLE001 - a value the protobuf runtime will not encode
            continue
        for ph, h in mu.subs:
            data = data.replace(ph, h)
        return data, "; ".join(descs)
    return model.SerializeToString(), "unmodified (no serializable mutant)"
