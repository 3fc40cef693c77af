"""Byte- and protobuf-level mutators of .onnx files (``w_*``).

An ONNX file is a protobuf message: fields ``[number, wire type, value]``, where a
length-delimited value may itself be a message (a graph, a node, a tensor...). ``parse`` reads
one level, ``encode`` writes it back with the lengths recomputed, so a mutation deep inside the
tree (a tensor's ``dims``, a node's attribute type, a name's bytes) leaves a well-formed file
around it and reaches the reader's checks rather than the protobuf decoder. The plain byte
mutators (bit flips, random bytes, truncation, splices) hit the decoder itself.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

from .edge_values import FLOAT_EDGES, HOSTILE_TEXT

Field = list  # [number, wire type, value: int | bytes]
VARINT_EDGES = [0, 1, 2, 3, 7, 8, 10, 11, 16, 21, 22, 99, 127, 128, 255, 256, 65535, 65536,
                2**31 - 1, 2**31, 2**32, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 2,
                1099511627776]  # fmt: skip
HOSTILE_BYTES = [*HOSTILE_TEXT, b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"]


def _varint(buf: bytes, i: int) -> tuple[int, int] | None:
    v = shift = 0
    while i < len(buf) and shift < 70:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7
    return None


def _enc_varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def parse(buf: bytes) -> list[Field] | None:
    """The fields of a protobuf message, or None when ``buf`` is not one."""
    out: list[Field] = []
    i = 0
    while i < len(buf):
        r = _varint(buf, i)
        if r is None:
            return None
        key, i = r
        num, wt = key >> 3, key & 7
        if num == 0:
            return None
        if wt == 0:
            r = _varint(buf, i)
            if r is None:
                return None
            v: int | bytes = r[0]
            i = r[1]
        elif wt in (1, 5):
            size = 8 if wt == 1 else 4
            if i + size > len(buf):
                return None
            v, i = buf[i : i + size], i + size
        elif wt == 2:
            r = _varint(buf, i)
            if r is None or r[1] + r[0] > len(buf):
                return None
            v, i = buf[r[1] : r[1] + r[0]], r[1] + r[0]
        else:
            return None
        out.append([num, wt, v])
    return out


def encode(fields: list[Field]) -> bytes:
    out = bytearray()
    for num, wt, v in fields:
        out += _enc_varint(num << 3 | wt)
        if wt == 0:
            out += _enc_varint(int(v))
        elif wt == 2:
            out += _enc_varint(len(v)) + v
        else:
            out += v
    return bytes(out)


def _mutate_field(fields: list[Field], k: int, rng: random.Random) -> str:
    """Change field ``k`` of a message in place; returns what was done."""
    num, wt, v = fields[k]
    r = rng.random()
    if r < 0.08:
        del fields[k]
        return f"drop field {num}"
    if r < 0.14:
        fields.insert(k, list(fields[k]))
        return f"duplicate field {num}"
    if r < 0.18:
        fields[k][0] = rng.choice([num + 1, max(num - 1, 1), rng.randint(1, 30)])
        return f"renumber field {num} -> {fields[k][0]}"
    if r < 0.24:
        nw = rng.choice([0, 2, 5])
        fields[k] = [num, nw, 0 if nw == 0 else b"\x00" * (4 if nw == 5 else 3)]
        return f"field {num} wire type {wt} -> {nw}"
    if wt == 0:
        fields[k][2] = rng.choice(VARINT_EDGES + [v + 1, max(v - 1, 0), v * 1000])
        return f"varint field {num}: {v} -> {fields[k][2]}"
    if wt == 5:
        fields[k][2] = struct.pack("<f", rng.choice(FLOAT_EDGES))
        return f"fixed32 field {num} edge float"
    if wt == 1:
        fields[k][2] = bytes(rng.randrange(256) for _ in range(8))
        return f"fixed64 field {num} random"
    what = rng.choice(["hostile", "truncate", "extend", "empty", "flip", "double"])
    if what == "hostile":
        h = rng.choice(HOSTILE_BYTES)
        fields[k][2] = h if rng.random() < 0.5 else v[: len(v) // 2] + h
    elif what == "truncate":
        fields[k][2] = v[: rng.randrange(len(v) + 1)]
    elif what == "extend":
        fields[k][2] = v + bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 16])))
    elif what == "empty":
        fields[k][2] = b""
    elif what == "flip" and v:
        b = bytearray(v)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        fields[k][2] = bytes(b)
    else:
        fields[k][2] = v + v
    return f"bytes field {num}: {what}"


def w_tree(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Descend through nested messages to one field and change it; re-encode with lengths."""
    fields = parse(data)
    if not fields:
        return w_flip(data, rng)
    path: list[str] = []

    def visit(fs: list[Field], depth: int) -> str:
        k = rng.randrange(len(fs))
        num, wt, v = fs[k]
        if wt == 2 and v and depth < 8 and rng.random() < 0.8:
            sub = parse(v)
            if sub:
                path.append(str(num))
                d = visit(sub, depth + 1)
                fs[k][2] = encode(sub)
                return d
        return _mutate_field(fs, k, rng)

    d = visit(fields, 0)
    return encode(fields), f"wire {'.'.join(path) or 'top'}: {d}"


def w_flip(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    k = rng.choice([1, 1, 2, 4, 8, 32])
    for _ in range(k):
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b), f"flip {k} bits"


def w_random_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    p = rng.randrange(len(b))
    k = rng.choice([1, 4, 16, 64])
    b[p : p + k] = bytes(rng.randrange(256) for _ in range(min(k, len(b) - p)))
    return bytes(b), f"random {k} bytes at {p}"


def w_truncate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    cut = rng.choice([rng.randrange(len(data)), rng.randrange(min(len(data), 64)), len(data) - 1])
    return data[:cut], f"truncate at {cut}"


def w_insert_delete(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    p = rng.randrange(len(data))
    k = rng.choice([1, 2, 7, 64])
    if rng.random() < 0.5:
        return data[:p] + data[p + k :], f"delete {k} bytes at {p}"
    junk = bytes(rng.randrange(256) for _ in range(k))
    return data[:p] + junk + data[p:], f"insert {k} bytes at {p}"


def splice(a: bytes, b: bytes, rng: random.Random) -> tuple[bytes, str]:
    """The head of one file and the tail of another (at field boundaries when they parse)."""
    fa, fb = parse(a), parse(b)
    if fa and fb and rng.random() < 0.7:
        ka, kb = rng.randrange(len(fa) + 1), rng.randrange(len(fb) + 1)
        return encode(fa[:ka] + fb[kb:]), f"splice fields :{ka} + {kb}:"
    pa, pb = rng.randrange(len(a)), rng.randrange(len(b))
    return a[:pa] + b[pb:], f"splice bytes :{pa} + {pb}:"


WIRE_MUTATORS: list[tuple[Callable[[bytes, random.Random], tuple[bytes, str]], float]] = [
    (w_tree, 6.0),
    (w_flip, 1.5),
    (w_random_bytes, 1.0),
    (w_truncate, 0.5),
    (w_insert_delete, 1.0),
]


def mutate_wire(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One to three wire- or byte-level mutations of a serialized ONNX model."""
    fns, weights = zip(*WIRE_MUTATORS, strict=True)
    descs = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not data:
            break
        data, d = rng.choices(fns, weights)[0](data, rng)
        descs.append(d)
    return data, "; ".join(descs)
