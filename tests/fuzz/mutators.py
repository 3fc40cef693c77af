"""Mutators for hostile inputs: .tflite bytes, TFLite object trees, and board TOML files.

Every mutator takes a ``random.Random`` and returns the mutant plus a short description, so a
case is reproducible from its seed and readable in a failure report.
"""

from __future__ import annotations

import copy
import random
import struct
import tomllib
from collections.abc import Callable
from typing import Any

import numpy as np

from .flatmap import FlatMap, Site, build_map

I32_EDGES = [
    0,
    1,
    -1,
    2,
    3,
    7,
    8,
    16,
    127,
    128,
    255,
    256,
    -128,
    -129,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    1 << 20,
    1 << 24,
    0x3FFFFFFF,
    0x40000000,
    0x7FFFFFFE,
    0x7FFFFFFF,
    -0x80000000,
    -2,
    -65536,
]
DIM_EDGES = [0, -1, -2, -0x80000000, 0x7FFFFFFF, 65536, 1 << 20, 46341, 3, 1000, 1 << 16, 1 << 30]
FLOAT_EDGES = [
    float("nan"),
    float("inf"),
    -float("inf"),
    0.0,
    -0.0,
    -1.0,
    1e-45,
    1e-38,
    1e38,
    3.4e38,
    1e-10,
    65536.0,
    1.0,
    0.5,
]
HOSTILE_TEXT = [
    b'*/ system("rm -rf /"); /*',
    b"\n#include <stdio.h>\n",
    b"a\\\n",
    b"??/",
    b"\x00",
    b"\xff\xfe",
    b"\r\n",
    b"%s%n%x",
    b"../../etc/passwd",
    b"/abs/path",
    b"\"'`$(x)",
    b"\xe2\x80\xae",
]


def _pack_int(value: int, size: int) -> bytes:
    mask = (1 << (8 * size)) - 1
    return (value & mask).to_bytes(size, "little")


def _read_int(data: bytes | bytearray, site: Site) -> int:
    size = min(site.size, 8)
    return int.from_bytes(data[site.pos : site.pos + size], "little", signed=True)


def _value_for(rng: random.Random, site: Site, data: bytes | bytearray, n: int) -> int:
    orig = _read_int(data, site) if site.size <= 8 else 0
    pool = I32_EDGES + [orig + 1, orig - 1, orig * 2, orig * 1000, n, n - 4, n + 4, -orig]
    if site.what in ("shape", "shape_signature"):
        pool = DIM_EDGES + [orig * 1000, orig * 65536, -orig]
    r = rng.random()
    if r < 0.7:
        return rng.choice(pool)
    if r < 0.85:
        return rng.randint(-(2**31), 2**31 - 1)
    return orig + rng.randint(-8, 8)


# --------------------------------------------------------------------------- byte level


def m_truncate(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    cut = rng.choice([rng.randrange(len(data)), rng.randrange(min(len(data), 64)), len(data) - 1])
    return data[:cut], f"truncate at {cut}"


def m_flip(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    k = rng.choice([1, 1, 2, 4, 8, 32])
    for _ in range(k):
        p = rng.randrange(len(b))
        b[p] ^= 1 << rng.randrange(8)
    return bytes(b), f"flip {k} bits"


def m_random_bytes(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    p = rng.randrange(len(b))
    k = rng.choice([1, 4, 16, 64])
    b[p : p + k] = bytes(rng.randrange(256) for _ in range(min(k, len(b) - p)))
    return bytes(b), f"random {k} bytes at {p}"


def m_int32_anywhere(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    p = rng.randrange(0, max(len(b) - 4, 1)) & ~3
    v = rng.choice(I32_EDGES + [len(b), rng.randint(-(2**31), 2**31 - 1)])
    b[p : p + 4] = _pack_int(v, 4)
    return bytes(b), f"int32 {v} at {p}"


def m_site(
    data: bytes, fm: FlatMap, rng: random.Random, kind: str | None = None
) -> tuple[bytes, str]:
    """Overwrite a known field (offset, vtable entry, length, shape, index, option) with an edge."""
    kinds = fm.kinds()
    kind = kind if kind in kinds else rng.choice(kinds)
    site = rng.choice(fm.sites[kind])
    b = bytearray(data)
    if kind in ("tensor_name", "sg_name", "description", "metadata_name", "custom_code"):
        text = rng.choice(HOSTILE_TEXT)
        span = bytes(text[i % len(text)] for i in range(site.size))
        b[site.pos : site.pos + site.size] = span
        return bytes(b), f"{kind} text at {site.pos}"
    if kind in ("q_scale", "q_min", "q_max"):
        v = rng.choice(FLOAT_EDGES)
        b[site.pos : site.pos + 4] = struct.pack("<f", v)
        return bytes(b), f"{kind}={v} at {site.pos}"
    if kind in ("buffer_data", "custom_options"):
        p = site.pos + rng.randrange(site.size)
        b[p] = rng.randrange(256)
        return bytes(b), f"{kind} byte at {p}"
    size = site.size if site.size in (1, 2, 4, 8) else 4
    if rng.random() < 0.1:
        size = 4  # spill into the neighbours
    v = _value_for(rng, site, data, len(data))
    b[site.pos : site.pos + size] = _pack_int(v, size)[: max(0, len(b) - site.pos)]
    return bytes(b[: len(data)]), f"{kind}={v} ({size} B) at {site.pos}"


def m_index(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    """Rewire a tensor index: ops reading later outputs (cycles), out-of-range ids."""
    kinds = [k for k in ("op_io", "sg_io", "tensor_buffer", "opcode_index") if fm.sites.get(k)]
    if not kinds:
        return m_site(data, fm, rng)
    kind = rng.choice(kinds)
    site = rng.choice(fm.sites[kind])
    limit = {"op_io": fm.n_tensors, "sg_io": fm.n_tensors, "tensor_buffer": fm.n_buffers}.get(
        kind, fm.n_codes
    )
    v = rng.choice([rng.randrange(max(limit, 1)), limit, limit + 1, -1, -2, 0x7FFFFFFF, 0])
    b = bytearray(data)
    b[site.pos : site.pos + 4] = _pack_int(v, 4)
    return bytes(b), f"{kind}={v} at {site.pos}"


def m_shape(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    """Absurd dims: zero, negative, huge, billions of elements (several entries at once)."""
    sites = fm.sites.get("shape")
    if not sites:
        return m_site(data, fm, rng)
    b = bytearray(data)
    k = rng.choice([1, 1, 2, 3])
    descs = []
    for _ in range(k):
        s = rng.choice(sites)
        v = rng.choice(DIM_EDGES)
        b[s.pos : s.pos + 4] = _pack_int(v, 4)
        descs.append(f"{v}@{s.pos}")
    return bytes(b), "shape " + ",".join(descs)


def m_count(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    """Lie about a vector length (tensors, ops, buffers, shapes, quantization arrays)."""
    lens = [k for k in fm.kinds() if k.startswith("len:")]
    kind = rng.choice(lens)
    site = rng.choice(fm.sites[kind])
    orig = _read_int(data, site)
    v = rng.choice([0, 1, orig + 1, orig - 1, orig * 2, 0x3FFFFFFF, 0xFFFFFFFF, len(data), 7])
    b = bytearray(data)
    b[site.pos : site.pos + 4] = _pack_int(v, 4)
    return bytes(b), f"{kind} {orig}->{v} at {site.pos}"


def m_insert_delete(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    p = rng.randrange(len(data))
    k = rng.choice([1, 4, 8, 100])
    if rng.random() < 0.5:
        return data[:p] + bytes(rng.randrange(256) for _ in range(k)) + data[p:], f"insert {k}@{p}"
    return data[:p] + data[p + k :], f"delete {k}@{p}"


def m_extend(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    k = rng.choice([1, 3, 4096])
    return data + bytes(rng.randrange(256) for _ in range(k)), f"append {k}"


BYTE_MUTATORS: list[tuple[Callable[..., tuple[bytes, str]], float]] = [
    (m_truncate, 1.0),
    (m_flip, 1.0),
    (m_random_bytes, 0.5),
    (m_int32_anywhere, 1.0),
    (m_site, 5.0),
    (m_index, 2.0),
    (m_shape, 2.0),
    (m_count, 1.5),
    (m_insert_delete, 0.5),
    (m_extend, 0.2),
]


def mutate_bytes(data: bytes, fm: FlatMap, rng: random.Random) -> tuple[bytes, str]:
    """Apply one to three byte-level mutations (the map refers to the original layout)."""
    fns, weights = zip(*BYTE_MUTATORS, strict=True)
    out = data
    descs = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        fn = rng.choices(fns, weights)[0]
        if len(out) < 8:
            break
        if len(out) != len(data) and fn not in (m_truncate, m_flip, m_extend, m_insert_delete):
            fn = m_flip  # the map's positions no longer apply
        out, d = fn(out, fm, rng)
        descs.append(d)
    return out, "; ".join(descs)


def splice(a: bytes, b: bytes, rng: random.Random) -> tuple[bytes, str]:
    p = rng.randrange(min(len(a), len(b)))
    return a[:p] + b[p:], f"splice at {p}"


# ------------------------------------------------------------------------ object level

_schema: Any = None


def schema() -> Any:
    """The generated TFLite schema with the object API (ModelT), from ai-edge-litert."""
    global _schema
    if _schema is None:
        import ai_edge_litert.schema_py_generated as s

        _schema = s
    return _schema


def unpack(data: bytes) -> Any:
    return schema().ModelT.InitFromPackedBuf(bytearray(data), 0)


def pack(model: Any) -> bytes:
    import flatbuffers

    b = flatbuffers.Builder(4096)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _sg(m: Any) -> Any:
    return m.subgraphs[0]


def _ops(m: Any) -> list[Any]:
    return _sg(m).operators or []


def _activations(m: Any) -> list[int]:
    """Tensor ids produced by ops or fed as graph inputs (not constants)."""
    sg = _sg(m)
    ids = set(int(x) for x in (sg.inputs if sg.inputs is not None else []))
    for op in _ops(m):
        ids.update(int(x) for x in (op.outputs if op.outputs is not None else []))
    return sorted(i for i in ids if 0 <= i < len(sg.tensors or []))


def s_cycle(m: Any, rng: random.Random) -> str:
    """An op reads its own output or a later op's output."""
    ops = _ops(m)
    i = rng.randrange(len(ops))
    j = rng.randrange(i, len(ops))
    ins = [int(x) for x in ops[i].inputs]
    k = rng.randrange(len(ins)) if ins else 0
    src = int(ops[j].outputs[0])
    if ins:
        ins[k] = src
    else:
        ins = [src]
    ops[i].inputs = np.array(ins, np.int32)
    return f"cycle: op {i} input {k} <- op {j} output {src}"


def s_reorder(m: Any, rng: random.Random) -> str:
    ops = _ops(m)
    if len(ops) < 2:
        return s_cycle(m, rng)
    i, j = sorted(rng.sample(range(len(ops)), 2))
    ops[i], ops[j] = ops[j], ops[i]
    return f"swap ops {i} and {j}"


def s_double_write(m: Any, rng: random.Random) -> str:
    ops = _ops(m)
    i = rng.randrange(len(ops))
    choices = _activations(m)
    t = rng.choice(choices)
    ops[i].outputs = np.array([t] + [int(x) for x in ops[i].outputs[1:]], np.int32)
    return f"op {i} writes tensor {t}"


def s_shape(m: Any, rng: random.Random) -> str:
    """Absurd but consistent-looking shapes: scale one tensor, or every activation alike."""
    sg = _sg(m)
    acts = _activations(m)
    mode = rng.choice(["one", "all", "rank", "zero", "batch", "batch"])
    k = rng.choice([0, 2, 3, 1000, 65536, 1 << 20, 1 << 28])
    if mode in ("all", "batch"):
        targets = acts
    else:
        targets = [rng.choice(acts if rng.random() < 0.7 else range(len(sg.tensors)))]
    for tid in targets:
        t = sg.tensors[tid]
        shape = [int(x) for x in (t.shape if t.shape is not None else [])]
        if mode == "batch":
            # every activation alike, so that shape checks between ops still agree
            shape = [shape[0] * k, *shape[1:]] if shape else shape
        elif mode == "rank":
            shape = rng.choice([[], [1] * 7, [1] * 12, shape + [1], shape[:1]])
        elif mode == "zero":
            if shape:
                shape[rng.randrange(len(shape))] = rng.choice([0, -1])
        elif shape:
            ax = rng.randrange(len(shape))
            shape[ax] = rng.choice([65536, 1 << 20, 46341, 0x7FFFFFFF, shape[ax] * 1000, 2**31 - 1])
        t.shape = np.array([max(min(d, 2**31 - 1), -(2**31)) for d in shape], np.int32)
    return f"shape {mode} on {len(targets)} tensor(s)"


def s_quant(m: Any, rng: random.Random) -> str:
    """Mismatched, missing or absurd quantization arrays."""
    s = schema()
    sg = _sg(m)
    tid = rng.randrange(len(sg.tensors))
    t = sg.tensors[tid]
    q = t.quantization
    if q is None or rng.random() < 0.1:
        t.quantization = None if q is not None else s.QuantizationParametersT()
        return f"quant of tensor {tid} toggled"
    n = len(q.scale) if q.scale is not None else 0
    what = rng.choice(["scales", "zps", "dim", "values", "empty"])
    if what == "scales":
        q.scale = np.full(rng.choice([0, 1, 2, max(n - 1, 0), n + 1, 1000]), 0.1, np.float32)
    elif what == "zps":
        q.zeroPoint = np.zeros(rng.choice([0, 1, 2, max(n - 1, 0), n + 1, 1000]), np.int64)
    elif what == "dim":
        q.quantizedDimension = rng.choice([-1, 1, 3, 4, 6, 100, 2**31 - 1])
    elif what == "values":
        if q.scale is not None and n:
            sc = np.array(q.scale, np.float32)
            sc[rng.randrange(n)] = rng.choice(FLOAT_EDGES)
            q.scale = sc
        if q.zeroPoint is not None and len(q.zeroPoint) and rng.random() < 0.5:
            zp = np.array(q.zeroPoint, np.int64)
            zp[rng.randrange(len(zp))] = rng.choice([-129, 128, 2**40, -(2**63), 255, 2**31])
            q.zeroPoint = zp
    else:
        q.scale = None
        q.zeroPoint = None
    return f"quant {what} of tensor {tid}"


def s_buffer(m: Any, rng: random.Random) -> str:
    """Wrong-length data, swapped buffers, constants where activations belong and vice versa."""
    sg = _sg(m)
    tid = rng.randrange(len(sg.tensors))
    t = sg.tensors[tid]
    what = rng.choice(["short", "long", "swap", "drop", "const_act", "offset"])
    bufs = m.buffers
    if what in ("short", "long") and t.buffer and bufs[t.buffer].data is not None:
        d = np.array(bufs[t.buffer].data, np.uint8)
        bufs[t.buffer].data = d[: len(d) // 2] if what == "short" else np.concatenate([d, d])
    elif what == "swap":
        t.buffer = rng.randrange(len(bufs) + 2)
    elif what == "drop":
        t.buffer = 0
    elif what == "const_act":
        size = int(np.prod([max(int(x), 0) for x in t.shape])) if t.shape is not None else 1
        size *= {0: 4, 2: 4, 7: 2, 9: 1, 3: 1}.get(int(t.type), 1)
        b = schema().BufferT()
        b.data = np.zeros(min(size, 1 << 16), np.uint8)
        bufs.append(b)
        t.buffer = len(bufs) - 1
    else:
        b = bufs[t.buffer] if t.buffer and t.buffer < len(bufs) else schema().BufferT()
        b.data = None
        b.offset = rng.choice([2, 1 << 40, 2**64 - 1, 16])
        b.size = rng.choice([0, 1 << 40, 2**63, 64])
        if b not in bufs:
            bufs.append(b)
            t.buffer = len(bufs) - 1
    return f"buffer {what} for tensor {tid}"


def s_types(m: Any, rng: random.Random) -> str:
    sg = _sg(m)
    tid = rng.randrange(len(sg.tensors))
    v = rng.choice([0, 1, 2, 3, 4, 6, 7, 9, 10, 15, 17, 100, -1])
    sg.tensors[tid].type = v
    return f"tensor {tid} type {v}"


def s_io(m: Any, rng: random.Random) -> str:
    """Graph inputs/outputs: none, constants, duplicates, an input that is also an output."""
    sg = _sg(m)
    n = len(sg.tensors)
    what = rng.choice(["no_in", "no_out", "dup", "in_is_out", "const_in", "extra_out", "range"])
    ins = [int(x) for x in sg.inputs] if sg.inputs is not None else []
    outs = [int(x) for x in sg.outputs] if sg.outputs is not None else []
    if what == "no_in":
        ins = []
    elif what == "no_out":
        outs = []
    elif what == "dup":
        ins, outs = ins + ins[:1], outs + outs[:1]
    elif what == "in_is_out":
        outs = ins[:1] or outs
    elif what == "const_in":
        consts = [i for i, t in enumerate(sg.tensors) if t.buffer]
        ins = [rng.choice(consts)] if consts else ins
    elif what == "extra_out":
        outs = outs + [rng.randrange(n)]
    else:
        outs = [rng.choice([n, -1, 2**31 - 1])]
    sg.inputs = np.array(ins, np.int32)
    sg.outputs = np.array(outs, np.int32)
    return f"graph io {what}"


def s_op_io(m: Any, rng: random.Random) -> str:
    """Too few or too many operands, optional (-1) operands, no outputs."""
    ops = _ops(m)
    i = rng.randrange(len(ops))
    op = ops[i]
    ins = [int(x) for x in op.inputs] if op.inputs is not None else []
    outs = [int(x) for x in op.outputs] if op.outputs is not None else []
    what = rng.choice(["drop_in", "add_in", "none_in", "no_out", "two_out", "in_eq_out"])
    if what == "drop_in" and ins:
        ins.pop(rng.randrange(len(ins)))
    elif what == "add_in":
        ins.append(rng.randrange(len(_sg(m).tensors)))
    elif what == "none_in" and ins:
        ins[rng.randrange(len(ins))] = -1
    elif what == "no_out":
        outs = []
    elif what == "two_out":
        outs = outs + [rng.randrange(len(_sg(m).tensors))]
    elif ins:
        outs = ins[:1]
    op.inputs = np.array(ins, np.int32)
    op.outputs = np.array(outs, np.int32)
    return f"op {i} operands {what}"


SUPPORTED_KINDS = [
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
    "ADD",
    "MUL",
    "SUB",
    "SOFTMAX",
    "RESHAPE",
    "MEAN",
    "CONCATENATION",
    "LOGISTIC",
    "TANH",
    "RELU",
    "RELU6",
    "QUANTIZE",
    "DEQUANTIZE",
    "HARD_SWISH",
    "PAD",
    "SQUEEZE",
    "LEAKY_RELU",
    "EXP",
    "STRIDED_SLICE",
    "TRANSPOSE",
    "CUSTOM",
    "WHILE",
    "IF",
]


def s_opkind(m: Any, rng: random.Random) -> str:
    """An op becomes another kind (keeping its operands and, often, mismatched options)."""
    s = schema()
    codes = m.operatorCodes
    ops = _ops(m)
    i = rng.randrange(len(ops))
    kind = rng.choice(SUPPORTED_KINDS)
    oc = s.OperatorCodeT()
    code = getattr(s.BuiltinOperator, kind, rng.randrange(300))
    oc.builtinCode = code
    oc.deprecatedBuiltinCode = min(code, 127)
    oc.version = rng.choice([1, 2, 100])
    if kind == "CUSTOM":
        oc.customCode = rng.choice([b"Foo", b"*/ x(); /*\n", b"\xff\xfe"])
    codes.append(oc)
    ops[i].opcodeIndex = len(codes) - 1
    if rng.random() < 0.3:
        ops[i].builtinOptions = None
        ops[i].builtinOptionsType = 0
    return f"op {i} becomes {kind}"


_OPTION_VALUES = [0, -1, 1, 2, 3, 5, 100, 2**31 - 1, -(2**31), 65536, 255, 127, -128]


def s_options(m: Any, rng: random.Random) -> str:
    """Option fields set to edges: zero/negative strides, dilations, filters, axes, activations."""
    ops = _ops(m)
    with_opts = [i for i, op in enumerate(ops) if op.builtinOptions is not None]
    if not with_opts:
        return s_opkind(m, rng)
    i = rng.choice(with_opts)
    o = ops[i].builtinOptions
    names = [k for k, v in vars(o).items() if isinstance(v, (int, float, bool))]
    if not names:
        return s_opkind(m, rng)
    k = rng.choice(names)
    v: Any = rng.choice(_OPTION_VALUES)
    if isinstance(getattr(o, k), float):
        v = rng.choice(FLOAT_EDGES)
    elif isinstance(getattr(o, k), bool) or k in ("padding", "fusedActivationFunction"):
        v = rng.choice([0, 1, 2, 3, 4, 5, 6, 100, 127, -1])
    setattr(o, k, v)
    return f"op {i} option {k}={v}"


def s_wrong_options(m: Any, rng: random.Random) -> str:
    """An op gets the options table of another op kind."""
    s = schema()
    ops = _ops(m)
    i = rng.randrange(len(ops))
    kind = rng.choice(
        [
            "Conv2DOptions",
            "Pool2DOptions",
            "AddOptions",
            "SoftmaxOptions",
            "ReshapeOptions",
            "ConcatenationOptions",
            "FullyConnectedOptions",
        ]
    )
    ops[i].builtinOptionsType = getattr(s.BuiltinOptions, kind)
    ops[i].builtinOptions = getattr(s, kind + "T")()
    return f"op {i} gets {kind}"


def s_names(m: Any, rng: random.Random) -> str:
    sg = _sg(m)
    text = rng.choice(HOSTILE_TEXT) * rng.choice([1, 3, 100])
    what = rng.choice(["tensor", "subgraph", "description"])
    if what == "tensor":
        sg.tensors[rng.randrange(len(sg.tensors))].name = text
    elif what == "subgraph":
        sg.name = text
    else:
        m.description = text
    return f"{what} name {text[:12]!r}"


def s_structure(m: Any, rng: random.Random) -> str:
    """Whole-graph damage: no subgraphs, two subgraphs, no ops, no tensors, dropped entries."""
    what = rng.choice(
        [
            "no_sg",
            "two_sg",
            "no_ops",
            "drop_tensor",
            "drop_op",
            "drop_code",
            "no_buffers",
            "version",
        ]
    )
    sg = _sg(m)
    if what == "no_sg":
        m.subgraphs = []
    elif what == "two_sg":
        m.subgraphs.append(copy.deepcopy(sg))
    elif what == "no_ops":
        sg.operators = []
    elif what == "drop_tensor":
        sg.tensors.pop(rng.randrange(len(sg.tensors)))
    elif what == "drop_op":
        sg.operators.pop(rng.randrange(len(sg.operators)))
    elif what == "drop_code" and m.operatorCodes:
        m.operatorCodes.pop(rng.randrange(len(m.operatorCodes)))
    elif what == "no_buffers":
        m.buffers = []
    else:
        m.version = rng.choice([0, 2, 4, 2**31 - 1])
    return f"structure {what}"


STRUCT_MUTATORS: list[tuple[Callable[[Any, random.Random], str], float]] = [
    (s_cycle, 1.0),
    (s_reorder, 0.7),
    (s_double_write, 0.5),
    (s_shape, 2.0),
    (s_quant, 1.5),
    (s_buffer, 1.0),
    (s_types, 0.7),
    (s_io, 0.7),
    (s_op_io, 1.0),
    (s_opkind, 1.5),
    (s_options, 2.0),
    (s_wrong_options, 0.5),
    (s_names, 0.5),
    (s_structure, 0.5),
]


def mutate_model(model: Any, rng: random.Random) -> tuple[bytes, str]:
    """Apply one to three structural mutations to a copy of ``model``; returns packed bytes."""
    fns, weights = zip(*STRUCT_MUTATORS, strict=True)
    for _attempt in range(8):
        m = copy.deepcopy(model)
        descs = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                descs.append(rng.choices(fns, weights)[0](m, rng))
            except (IndexError, ValueError, TypeError, AttributeError, OverflowError):
                descs.append("(skipped)")  # the previous mutation removed what this one needs
        try:
            return pack(m), "; ".join(descs)
        except (TypeError, ValueError, OverflowError, struct.error):
            continue  # a value out of its field's range: draw again
    return pack(copy.deepcopy(model)), "unmodified (no packable mutant)"


def safe_map(data: bytes) -> FlatMap | None:
    try:
        return build_map(data)
    except (struct.error, IndexError, KeyError, RecursionError):
        return None


# ------------------------------------------------------------------------------ boards


def toml_dumps(d: dict[str, Any]) -> str:
    """A small TOML writer (tables, arrays of tables, scalars, arrays) for the mutants."""
    lines: list[str] = []

    def key(k: str) -> str:
        return k if k and all(c.isalnum() or c in "-_" for c in k) else _tstr(k)

    def emit(prefix: str, table: dict[str, Any]) -> None:
        subs = []
        for k, v in table.items():
            if isinstance(v, dict):
                subs.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                subs.append((k, v))
            else:
                lines.append(f"{key(k)} = {_tval(v)}")
        for k, v in subs:
            name = f"{prefix}.{key(k)}" if prefix else key(k)
            if isinstance(v, dict):
                lines.append(f"\n[{name}]")
                emit(name, v)
            else:
                for item in v:
                    lines.append(f"\n[[{name}]]")
                    emit(name, item)

    emit("", d)
    return "\n".join(lines) + "\n"


def _tstr(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    out = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in out)
    return f'"{out}"'


def _tval(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), -float("inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _tstr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_tval(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_tstr(k)} = {_tval(x)}" for k, x in v.items()) + "}"
    return _tstr(str(v))


TOML_VALUES: list[Any] = [
    0,
    -1,
    1,
    -(2**63),
    2**63 - 1,
    10**30,
    4294967296,
    0x7FFFFFFF,
    1.5,
    float("nan"),
    float("inf"),
    -0.0,
    "",
    "x",
    "0x8000000",
    "-5",
    "cortex-m99",
    "../../../etc/passwd",
    "*/ evil(); /*",
    "a\nb",
    True,
    False,
    [],
    [1, 2],
    ["a"],
    {"k": 1},
    "\u202e",
]


def _paths(d: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(d, dict):
        for k, v in d.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _get(d: Any, path: tuple) -> Any:
    for k in path:
        d = d[k]
    return d


def mutate_toml(text: str, rng: random.Random) -> tuple[bytes, str]:
    """Mutate a board file: delete keys, change types, huge/negative numbers, unknown keys,
    plus text damage (truncation, flipped bytes, invalid UTF-8)."""
    r = rng.random()
    raw = text.encode()
    if r < 0.12:
        cut = rng.randrange(len(raw))
        return raw[:cut], f"truncate at {cut}"
    if r < 0.2:
        b = bytearray(raw)
        for _ in range(rng.choice([1, 2, 8])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), "random bytes"
    if r < 0.24:
        lines = text.splitlines()
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "\n".join(lines).encode(), f"duplicate line at {i}"
    d = tomllib.loads(text)
    descs = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        paths = _paths(d)
        if not paths:
            break
        path = rng.choice(paths)
        parent = _get(d, path[:-1])
        k = path[-1]
        op = rng.choice(
            ["delete", "type", "number", "number", "unknown", "negative", "empty", "text", "text"]
        )
        if op == "text":
            # hostile text into a string field: description, name, pins, machine...
            strs = [q for q in paths if isinstance(_get(d, q), str)]
            path = rng.choice(strs) if strs else path
            parent, k = _get(d, path[:-1]), path[-1]
        if op == "text":
            h = rng.choice(HOSTILE_TEXT).decode("utf-8", "replace")
            cur = parent[k] if isinstance(parent[k], str) else ""
            parent[k] = rng.choice([h, cur + h, h + cur, cur.replace("-", h)])
        elif op == "delete":
            del parent[k]
        elif op == "type":
            parent[k] = copy.deepcopy(rng.choice(TOML_VALUES))
        elif op in ("number", "negative"):
            cur = parent[k]
            if isinstance(cur, (int, float)) and not isinstance(cur, bool):
                parent[k] = (
                    -cur
                    if op == "negative"
                    else rng.choice([0, cur * 2**20, cur + 1, cur - 1, 2**64, -(2**63), 1])
                )
            else:
                parent[k] = rng.choice([0, -1, 2**63 - 1, -(2**31)])
        elif op == "unknown":
            target = parent if isinstance(parent, dict) else d
            key = rng.choice(["bogus", "Flash", "sram ", "x" * 300])
            target[key] = copy.deepcopy(rng.choice(TOML_VALUES))
        else:
            cur = parent[k]
            parent[k] = type(cur)() if isinstance(cur, (dict, list, str)) else 0
        descs.append(f"{op} {'.'.join(map(str, path))}")
    return toml_dumps(d).encode(), "; ".join(descs)
