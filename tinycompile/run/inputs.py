"""Model inputs for runs and comparisons: random ones, and checking what a user gives."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Port, Tensor
from . import samples
from .samples import NP, RANGES


@dataclass
class UserInputs:
    """Inputs ready to run (IR batches: ``samples.batch_shape``, the IR tensors' types), the
    same samples as the model file takes them (``samples.file_samples``: ``(n, *port.shape)``,
    float where the file's input is float and float data was given; what the ONNX reference is
    fed), and what was converted."""

    arrays: list[np.ndarray]
    notes: list[str] = field(default_factory=list)
    model: list[np.ndarray] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # data that is likely not what was meant


def shape_input_of(g: Graph, tid: int) -> tuple[int, ...] | None:
    """The output shape of the TRANSPOSE_CONV reading graph input ``tid`` as its output_shape
    (input 0), or None when it is not such an input."""
    for op in g.ops:
        if op.kind == "TRANSPOSE_CONV" and op.inputs and op.inputs[0] == tid:
            return tuple(g.t(op.outputs[0]).shape)
    return None


def make_inputs(g: Graph, n: int = 20, seed: int = 0) -> list[np.ndarray]:
    """Random inputs (IR batches of ``n`` samples): uniform int8 or int16 codes, or for float
    and int32 inputs, values spanning the range of the quantization that follows them (so
    nothing is clipped away; int32 without one: the int16 range)."""
    rng = np.random.default_rng(seed)
    cons = g.consumers()
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        shape = samples.batch_shape(t, n)
        if t.dtype == "int32":
            xs.append(_int32_codes(g, tid, cons.get(tid, []), rng, shape))
        elif t.dtype in RANGES:
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
        elif t.dtype == "int32" and shape_input_of(g, tid) is not None:
            # TRANSPOSE_CONV's output_shape fed at run time (never read): the static shape
            want = np.array(shape_input_of(g, tid), np.int32)
            xs.append(np.tile(want, n).reshape(shape))
        else:
            raise CompileError(f"cannot make random inputs of type {t.dtype}")
    return xs


def _int32_codes(
    g: Graph, tid: int, readers: list[int], rng: np.random.Generator, shape: tuple[int, ...]
) -> np.ndarray:
    """Uniform int32 codes of input ``tid`` whose values span the output ranges of the
    QUANTIZEs that read it (int32 -> int8/int16; the widest), a little beyond; else the int16
    range."""
    t, spans = g.t(tid), []
    for i in readers:
        o = g.t(g.ops[i].outputs[0])
        if g.ops[i].kind == "QUANTIZE" and t.quant is not None and o.quant is not None:
            if o.dtype in ("int8", "int16"):
                r = o.quant.s / t.quant.s
                a, b = RANGES[o.dtype]
                spans.append((
                    int(t.quant.zp + np.floor((a - o.quant.zp - 2) * r)),
                    int(t.quant.zp + np.ceil((b - o.quant.zp + 2) * r)),
                ))  # fmt: skip
    lo = min((s[0] for s in spans), default=-32768)
    hi = max((s[1] for s in spans), default=32767)
    lo, hi = max(lo, -(2**31)), min(hi, 2**31 - 1)
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(np.int32)


def user_inputs(g: Graph, arrays: dict[str, np.ndarray] | list[np.ndarray]) -> UserInputs:
    """Check and convert inputs a user gave for graph ``g`` (one array per graph input, by
    position or by input name) into IR batches.

    Each array is one sample or a batch in the model file's own shape and layout (ONNX: NCHW;
    ``samples``). Float data for a quantized input is quantized as the file does (TFLite's
    rounding, or ONNX QuantizeLinear's half to even; said in ``notes``); integer data must fit
    the file's type of that input (uint8 for a uint8 ONNX input). Anything else is a one-line
    CompileError naming the input and what it wants."""
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
    model: list[np.ndarray] = []
    notes: list[str] = []
    warnings: list[str] = []
    for tid, x in zip(g.inputs, ordered, strict=True):
        t = g.t(tid)
        p = samples.port(g, tid)
        x = samples.file_samples(p, x, f"input '{t.name}'")
        if x.shape[0] == 0:
            raise CompileError(f"input '{t.name}' has no samples (batch of 0)")
        warnings += _doubts(t, p, x)
        x = _convert(t, p, x, notes)
        model.append(x)
        if x.dtype.kind == "f" and t.dtype in RANGES:
            x = samples.quantize(x, t.quant.s, t.quant.zp - p.offset, p.qdtype, p.rounding)
        xs.append(samples.to_ir(t, p, x))
    if len({x.shape[0] for x in model}) > 1:
        raise CompileError(f"inputs have different batch sizes {[x.shape[0] for x in model]}")
    return UserInputs(xs, notes, model, warnings)


def _doubts(t: Tensor, p: Port, x: np.ndarray) -> list[str]:
    """One-line warnings for data that runs but is likely not what was meant: integer data for
    a float input (taken as the float values, or as the codes of a quantized interface), and
    float data mostly outside what the input's quantization can hold (0-255 pixels for a 1/255
    scale)."""
    out: list[str] = []
    if x.dtype.kind in "iu" and t.dtype == "float32":
        out.append(
            f"input '{t.name}' is float and {x.dtype} data was given: taken as the float values"
            f" {int(x.min()) if x.size else 0}..{int(x.max()) if x.size else 0}; if they are"
            " quantized codes, give (q - zero_point) * scale"
        )
    elif x.dtype.kind in "iu" and p.dtype == "float32" and t.quant is not None:
        out.append(
            f"input '{t.name}' is float in the model file and {x.dtype} data was given: taken"
            f" as its quantized codes (scale {t.quant.s:.6g}, zero point {t.quant.zp}); give"
            " float32 data to have it quantized as the model does"
        )
    elif x.dtype.kind == "f" and x.size and t.dtype in RANGES and t.quant is not None:
        if t.quant.per_channel:
            return out
        lo, hi = RANGES[p.qdtype]
        s, zp = t.quant.s, t.quant.zp - p.offset
        f_lo, f_hi = (lo - zp) * s, (hi - zp) * s
        outside = float(np.mean((x < f_lo - s) | (x > f_hi + s)))
        if outside > 0.01:
            hint = ""
            if float(x.max()) > 100 and f_hi < 2:
                hint = " (0-255 pixels for a 0-1 input? divide by 255)"
            out.append(
                f"input '{t.name}': {100 * outside:.0f}% of the float data lie outside what its"
                f" quantization holds, [{f_lo:.4g}, {f_hi:.4g}] (scale {s:.6g}, zero point {zp}),"
                f" and are clamped: the data reach [{float(x.min()):.4g}, {float(x.max()):.4g}]"
                + hint
            )
    return out


def _convert(t: Tensor, p: Port, x: np.ndarray, notes: list[str]) -> np.ndarray:
    """The user's samples checked: float32 for a float input (or float data to be quantized),
    else integer codes of the file's type."""
    if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
        raise CompileError(f"input '{t.name}' contains NaN or infinity")
    if t.dtype == "float32":
        if x.dtype.kind not in "fiub":
            raise CompileError(f"input '{t.name}' wants float32 data, got {x.dtype}")
        return x.astype(np.float32)
    if t.dtype not in RANGES:
        raise CompileError(f"input '{t.name}' has type {t.dtype}, which runs do not support")
    ty = p.qdtype
    if x.dtype.kind == "f":
        if t.quant is None or t.quant.per_channel:
            raise CompileError(f"input '{t.name}' wants {ty} data (no per-tensor quantization)")
        s, zp = t.quant.s, t.quant.zp - p.offset
        how = "half to even" if p.rounding == "half_even" else "half away from zero"
        notes.append(
            f"input '{t.name}': {x.dtype} data quantized to {ty} with scale {s:.9g}"
            f" and zero point {zp} (rounded {how}, as the model file does)"
        )
        return x.astype(np.float32)
    if x.dtype.kind in "iu":
        lo, hi = RANGES[ty]
        if x.size and (int(x.min()) < lo or int(x.max()) > hi):
            raise CompileError(
                f"input '{t.name}' wants {ty} data; {x.dtype} values reach"
                f" [{int(x.min())}, {int(x.max())}] (give float data to have it quantized)"
            )
        return x.astype(samples.NP[ty])
    raise CompileError(f"input '{t.name}' wants {ty} (or float) data, got {x.dtype}")
