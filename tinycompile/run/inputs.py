"""Model inputs for runs and comparisons: random ones, and checking what a user gives."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Tensor


@dataclass
class UserInputs:
    """Inputs ready to run (batch on axis 0, the inputs' own types) and what was converted."""

    arrays: list[np.ndarray]
    notes: list[str] = field(default_factory=list)


RANGES = {"int8": (-128, 127), "int16": (-32768, 32767)}
NP = {"int8": np.int8, "int16": np.int16}


def make_inputs(g: Graph, n: int = 20, seed: int = 0) -> list[np.ndarray]:
    """Random inputs, batch on axis 0: uniform int8 or int16 codes, or for float inputs, values
    spanning the range of the quantization that follows them (so nothing is clipped away)."""
    rng = np.random.default_rng(seed)
    cons = g.consumers()
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        # one sample is the whole tensor: a leading 1 is the batch axis, a larger batch stays
        shape = (n, *t.shape[1:]) if t.shape and t.shape[0] == 1 else (n, *t.shape)
        if t.dtype in RANGES:
            lo_q, hi_q = RANGES[t.dtype]
            xs.append(rng.integers(lo_q, hi_q + 1, size=shape, dtype=NP[t.dtype]))
        elif t.dtype == "float32":
            lo, hi = -1.0, 1.0
            for i in cons.get(tid, []):
                q = g.t(g.ops[i].outputs[0]).quant
                qt = g.t(g.ops[i].outputs[0]).dtype
                if q is not None and g.ops[i].kind == "QUANTIZE" and qt in RANGES:
                    lo = q.s * (RANGES[qt][0] - q.zp)
                    hi = q.s * (RANGES[qt][1] - q.zp)
            xs.append(rng.uniform(lo, hi, size=shape).astype(np.float32))
        else:
            raise CompileError(f"cannot make random inputs of type {t.dtype}")
    return xs


def _sample_shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t.shape[1:]) if t.shape else ()


def _quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str = "int8") -> np.ndarray:
    """float -> int8 / int16 as TFLite's QUANTIZE does: round half away from zero, add, clamp."""
    v = x.astype(np.float64) / scale
    q = np.sign(v) * np.floor(np.abs(v) + 0.5) + zero_point
    lo, hi = RANGES[dtype]
    return np.clip(q, lo, hi).astype(NP[dtype])


def user_inputs(g: Graph, arrays: dict[str, np.ndarray] | list[np.ndarray]) -> UserInputs:
    """Check and convert inputs a user gave for graph ``g`` (one array per graph input, by
    position or by input name) into batches the runs accept (batch on axis 0).

    A single unbatched sample gets a batch axis; float data for an int8 input is quantized with
    the input's scale and zero point (said in ``notes``); integer data must fit the input's type.
    Anything else is a one-line CompileError naming the input and what it wants."""
    names = [g.t(tid).name for tid in g.inputs]
    if isinstance(arrays, dict):
        keys = list(arrays)
        if set(keys) == set(names) and len(keys) == len(names):
            ordered = [arrays[n] for n in names]
        elif set(keys) & set(names):
            missing = [n for n in names if n not in arrays]
            unknown = [k for k in keys if k not in names]
            raise CompileError(
                f"inputs by name: missing {missing}, unknown {unknown} (model inputs: {names})"
            )
        else:
            ordered = list(arrays.values())  # positional (np.savez without names)
    else:
        ordered = list(arrays)
    if len(ordered) != len(g.inputs):
        raise CompileError(
            f"model has {len(g.inputs)} input(s) {names}, {len(ordered)} array(s) given"
        )
    xs: list[np.ndarray] = []
    notes: list[str] = []
    for tid, x in zip(g.inputs, ordered, strict=True):
        t = g.t(tid)
        x = np.asarray(x)
        sample = _sample_shape(t)
        if x.shape == sample:
            x = x.reshape((1, *sample))
        elif x.ndim != len(sample) + 1 or tuple(x.shape[1:]) != sample:
            raise CompileError(
                f"input '{t.name}' wants shape {list(sample)} (one sample) or"
                f" {['N', *sample]} (a batch), got {list(x.shape)}"
            )
        if x.shape[0] == 0:
            raise CompileError(f"input '{t.name}' has no samples (batch of 0)")
        xs.append(_convert(t, x, notes))
    if len({x.shape[0] for x in xs}) > 1:
        raise CompileError(f"inputs have different batch sizes {[x.shape[0] for x in xs]}")
    return UserInputs(xs, notes)


def _convert(t: Tensor, x: np.ndarray, notes: list[str]) -> np.ndarray:
    if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
        raise CompileError(f"input '{t.name}' contains NaN or infinity")
    if t.dtype == "float32":
        if x.dtype.kind not in "fiub":
            raise CompileError(f"input '{t.name}' wants float32 data, got {x.dtype}")
        return x.astype(np.float32)
    if t.dtype not in RANGES:
        raise CompileError(f"input '{t.name}' has type {t.dtype}, which runs do not support")
    ty = t.dtype
    if x.dtype.kind == "f":
        if t.quant is None or t.quant.per_channel:
            raise CompileError(f"input '{t.name}' wants {ty} data (no per-tensor quantization)")
        s, zp = t.quant.s, t.quant.zp
        notes.append(
            f"input '{t.name}': {x.dtype} data quantized to {ty} with scale {s:.9g}"
            f" and zero point {zp}"
        )
        return _quantize(x, s, zp, ty)
    if x.dtype.kind in "iu":
        lo, hi = RANGES[ty]
        if x.size and (int(x.min()) < lo or int(x.max()) > hi):
            raise CompileError(
                f"input '{t.name}' wants {ty} data; {x.dtype} values reach"
                f" [{int(x.min())}, {int(x.max())}] (give float data to have it quantized)"
            )
        return x.astype(NP[ty])
    raise CompileError(f"input '{t.name}' wants {ty} (or float) data, got {x.dtype}")
