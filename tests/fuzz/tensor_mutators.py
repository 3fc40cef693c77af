"""Object-level mutators (``s_*``) of what a tensor carries: shape, quantization, data, type, name.

Each takes a ``ModelT`` (changed in place) and a ``random.Random``, and returns a description.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .edge_values import FLOAT_EDGES, HOSTILE_TEXT
from .tflite_objects import activations, schema, subgraph


def s_shape(m: Any, rng: random.Random) -> str:
    """Absurd but consistent-looking shapes: scale one tensor, or every activation alike."""
    sg = subgraph(m)
    acts = activations(m)
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
    sg = subgraph(m)
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
    sg = subgraph(m)
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
    sg = subgraph(m)
    tid = rng.randrange(len(sg.tensors))
    v = rng.choice([0, 1, 2, 3, 4, 6, 7, 9, 10, 15, 17, 100, -1])
    sg.tensors[tid].type = v
    return f"tensor {tid} type {v}"


def s_names(m: Any, rng: random.Random) -> str:
    sg = subgraph(m)
    text = rng.choice(HOSTILE_TEXT) * rng.choice([1, 3, 100])
    what = rng.choice(["tensor", "subgraph", "description"])
    if what == "tensor":
        sg.tensors[rng.randrange(len(sg.tensors))].name = text
    elif what == "subgraph":
        sg.name = text
    else:
        m.description = text
    return f"{what} name {text[:12]!r}"
