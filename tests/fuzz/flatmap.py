"""A map of a valid .tflite flatbuffer: where its offsets, vtables, counts and fields live.

The byte mutators use it to aim at the places a reader trusts (offsets, vector lengths, shape
entries, tensor and buffer indices, option fields) instead of flipping bytes at random. Only a
small part of the TFLite schema is described here: what the tinycompile reader looks at.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from dataclasses import dataclass, field

# Per table: field slot (0-based) -> (kind, target). Kinds: "u8"/"i8"/"i32"/"u32"/"u64" scalar,
# "table" (sub-table of type target), "vtables" (vector of tables), "vi32"/"vf32"/"vi64"/"vu8"
# (scalar vectors), "str" (string), "union" (table of unknown layout: builtin options).
SCHEMA: dict[str, dict[int, tuple[str, str]]] = {
    "Model": {
        0: ("u32", "version"),
        1: ("vtables", "OperatorCode"),
        2: ("vtables", "SubGraph"),
        3: ("str", "description"),
        4: ("vtables", "Buffer"),
        5: ("vi32", "metadata_buffer"),
        6: ("vtables", "Metadata"),
    },
    "OperatorCode": {
        0: ("i8", "deprecated_builtin_code"),
        1: ("str", "custom_code"),
        2: ("i32", "opcode_version"),
        3: ("i32", "builtin_code"),
    },
    "SubGraph": {
        0: ("vtables", "Tensor"),
        1: ("vi32", "sg_io"),
        2: ("vi32", "sg_io"),
        3: ("vtables", "Operator"),
        4: ("str", "sg_name"),
    },
    "Tensor": {
        0: ("vi32", "shape"),
        1: ("i8", "tensor_type"),
        2: ("u32", "tensor_buffer"),
        3: ("str", "tensor_name"),
        4: ("table", "QuantizationParameters"),
        5: ("u8", "is_variable"),
        7: ("vi32", "shape_signature"),
    },
    "QuantizationParameters": {
        0: ("vf32", "q_min"),
        1: ("vf32", "q_max"),
        2: ("vf32", "q_scale"),
        3: ("vi64", "q_zero_point"),
        6: ("i32", "q_dim"),
    },
    "Operator": {
        0: ("u32", "opcode_index"),
        1: ("vi32", "op_io"),
        2: ("vi32", "op_io"),
        3: ("u8", "options_type"),
        4: ("union", "options"),
        5: ("vu8", "custom_options"),
    },
    "Buffer": {
        0: ("vu8", "buffer_data"),
        1: ("u64", "buffer_offset"),
        2: ("u64", "buffer_size"),
    },
    "Metadata": {0: ("str", "metadata_name"), 1: ("u32", "metadata_buffer_index")},
}
SCALAR_SIZE = {"u8": 1, "i8": 1, "i32": 4, "u32": 4, "u64": 8}
ELEM_SIZE = {"vi32": 4, "vf32": 4, "vi64": 8, "vu8": 1, "str": 1}


@dataclass
class Site:
    """A byte range with a meaning: ``what`` names it (e.g. "shape", "uoffset", "veclen")."""

    pos: int
    size: int
    what: str


@dataclass
class FlatMap:
    sites: dict[str, list[Site]] = field(default_factory=lambda: defaultdict(list))
    n_tensors: int = 0
    n_buffers: int = 0
    n_ops: int = 0
    n_codes: int = 0

    def add(self, pos: int, size: int, what: str) -> None:
        self.sites[what].append(Site(pos, size, what))

    def kinds(self) -> list[str]:
        return sorted(k for k, v in self.sites.items() if v)


def _u16(b: bytes, p: int) -> int:
    return struct.unpack_from("<H", b, p)[0]


def _u32(b: bytes, p: int) -> int:
    return struct.unpack_from("<I", b, p)[0]


def _i32(b: bytes, p: int) -> int:
    return struct.unpack_from("<i", b, p)[0]


def build_map(data: bytes) -> FlatMap:
    """Walk a well-formed model and record its mutation sites. Raises on a malformed one."""
    m = FlatMap()
    seen: set[tuple[str, int]] = set()
    root = _u32(data, 0)
    m.add(0, 4, "uoffset")
    _table(data, root, "Model", m, seen)
    return m


def _fields(data: bytes, pos: int, m: FlatMap) -> tuple[int, list[int]]:
    vt = pos - _i32(data, pos)
    m.add(pos, 4, "soffset")
    vsize = _u16(data, vt)
    m.add(vt, 2, "vtable_size")
    m.add(vt + 2, 2, "vtable_objsize")
    offs = []
    for k in range((vsize - 4) // 2):
        m.add(vt + 4 + 2 * k, 2, "vtable_entry")
        offs.append(_u16(data, vt + 4 + 2 * k))
    return vt, offs


def _target(data: bytes, p: int, m: FlatMap) -> int:
    m.add(p, 4, "uoffset")
    return p + _u32(data, p)


def _table(data: bytes, pos: int, name: str, m: FlatMap, seen: set[tuple[str, int]]) -> None:
    if (name, pos) in seen:
        return
    seen.add((name, pos))
    _, offs = _fields(data, pos, m)
    if name == "union":
        for fo in offs:
            if fo:
                m.add(pos + fo, 4, "option_field")
        return
    schema = SCHEMA[name]
    for slot, fo in enumerate(offs):
        if not fo or slot not in schema:
            continue
        kind, what = schema[slot]
        p = pos + fo
        if kind in SCALAR_SIZE:
            m.add(p, SCALAR_SIZE[kind], what)
        elif kind in ("table", "union"):
            _table(data, _target(data, p, m), "union" if kind == "union" else what, m, seen)
        else:
            v = _target(data, p, m)
            n = _u32(data, v)
            m.add(v, 4, "veclen")
            m.add(v, 4, f"len:{what}")
            if kind == "vtables":
                if what == "Tensor":
                    m.n_tensors = max(m.n_tensors, n)
                elif what == "Buffer":
                    m.n_buffers = n
                elif what == "Operator":
                    m.n_ops = max(m.n_ops, n)
                elif what == "OperatorCode":
                    m.n_codes = n
                for i in range(n):
                    e = v + 4 + 4 * i
                    _table(data, _target(data, e, m), what, m, seen)
            else:
                size = ELEM_SIZE[kind]
                if kind in ("str", "vu8"):
                    if n:
                        m.add(v + 4, n, what)
                else:
                    for i in range(n):
                        m.add(v + 4 + size * i, size, what)
