"""Byte-level mutators of .tflite files (``m_*``), aimed by the seed's structural map.

Every mutator takes a ``random.Random`` and returns the mutant plus a short description, so a
case is reproducible from its seed and readable in a failure report.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

from .edge_values import DIM_EDGES, FLOAT_EDGES, HOSTILE_TEXT, I32_EDGES
from .flatmap import FlatMap, Site, build_map


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


def safe_map(data: bytes) -> FlatMap | None:
    try:
        return build_map(data)
    except (struct.error, IndexError, KeyError, RecursionError):
        return None
