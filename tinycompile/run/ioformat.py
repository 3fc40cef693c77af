"""The binary format shared with firmware/runtime/tc_runner.c: tc_in.bin (sample count, then
each sample's inputs) and tc_out.bin (per sample: layer outputs when debugging, graph outputs,
the state region when debugging, tick counts when profiling), all little-endian; and the
RunResult read back from it."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CompileError, RunError
from ..ir import Graph
from ..pipeline import Plan
from . import samples

if TYPE_CHECKING:
    from ..build import FirmwareBuild
    from .emulator import EmulatorResult

NP_DTYPES = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "float32": np.float32,
}


EXIT_REFUSED = 5  # tc_runner.c: a layer refused its input (tc_invoke() returned nonzero)
_REFUSED = re.compile(r"tc-refused: sample=(\d+) layer=(\d+)")


@dataclass(frozen=True)
class Refusal:
    """A layer refused its input at run time (where TFLM's Invoke fails): the run stopped there."""

    sample: int  # the input it stopped at (0-based)
    layer: int  # execution order
    op_index: int
    kind: str
    reason: str  # the op's (Operator lowering's ``ctx.refuses``)

    def line(self) -> str:
        return f"layer {self.layer} ({self.kind}) refused its input: {self.reason}"


@dataclass
class RunResult:
    """What a compiled model produced on a batch of inputs."""

    outputs: list[np.ndarray]  # per graph output, batch on axis 0
    layers: list[np.ndarray] = field(default_factory=list)  # per layer, batch on axis 0
    ticks: np.ndarray | None = None  # (samples, layers + 1): per layer, then whole invoke
    state: np.ndarray | None = None  # debug runs: (samples, state bytes) after each sample
    emulator: EmulatorResult | None = None  # emulator runs
    firmware: FirmwareBuild | None = None  # board runs
    refused: Refusal | None = None  # the run stopped: results hold the samples before it


def pack_inputs(g: Graph, inputs: list[np.ndarray]) -> bytes:
    """tc_in.bin for `inputs` (one array per graph input, batch on axis 0), types checked."""
    if len(inputs) != len(g.inputs):
        raise CompileError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    n = samples.count(g.t(g.inputs[0]), inputs[0]) if inputs else 0
    parts = [struct.pack("<I", n)]
    arrs = []
    for tid, x in zip(g.inputs, inputs, strict=True):
        t = g.t(tid)
        x = np.asarray(x)
        if x.dtype != NP_DTYPES[t.dtype]:
            raise CompileError(f"input tensor {tid} wants {t.dtype}, got {x.dtype}")
        if samples.count(t, x) != n:
            raise CompileError(
                f"input tensor {tid} {list(t.shape)}: a batch of shape {list(x.shape)} holds"
                f" {samples.count(t, x)} samples, the first input {n}"
            )
        arrs.append(x.reshape(n, -1))
    for s in range(n):
        for a in arrs:
            parts.append(a[s].astype(a.dtype.newbyteorder("<")).tobytes())
    return b"".join(parts)


def unpack_outputs(p: Plan, data: bytes, n: int, *, debug_layers: bool, profile: bool) -> RunResult:
    """Read tc_out.bin of `n` samples back into arrays (RunError when its size is wrong)."""
    g = p.graph
    steps = [p.lowering.ops[i].op for i in p.order]
    layer_t = [g.t(op.outputs[0]) for op in steps]
    out_t = [g.t(t) for t in g.outputs]
    per = sum(t.nbytes for t in out_t)
    if debug_layers:
        per += sum(t.nbytes for t in layer_t) + p.state_bytes
    if profile:
        per += 4 * (len(steps) + 1)
    if len(data) != per * n:
        raise RunError(f"firmware wrote {len(data)} bytes of results, expected {per * n}")

    def take(buf: memoryview, off: int, t) -> tuple[np.ndarray, int]:
        a = np.frombuffer(
            buf[off : off + t.nbytes], dtype=np.dtype(NP_DTYPES[t.dtype]).newbyteorder("<")
        )
        return a.astype(NP_DTYPES[t.dtype]).reshape(t.shape), off + t.nbytes

    mv = memoryview(data)
    layers: list[list[np.ndarray]] = [[] for _ in steps]
    outs: list[list[np.ndarray]] = [[] for _ in out_t]
    ticks = []
    states = []
    off = 0
    for _ in range(n):
        if debug_layers:
            for k, t in enumerate(layer_t):
                a, off = take(mv, off, t)
                layers[k].append(a)
        for k, t in enumerate(out_t):
            a, off = take(mv, off, t)
            outs[k].append(a)
        if debug_layers and p.state_bytes:
            states.append(np.frombuffer(mv[off : off + p.state_bytes], dtype=np.uint8))
            off += p.state_bytes
        if profile:
            ticks.append(np.frombuffer(mv[off : off + 4 * (len(steps) + 1)], dtype="<u4"))
            off += 4 * (len(steps) + 1)
    return RunResult(
        outputs=[_stack(o, t) for o, t in zip(outs, out_t, strict=True)],
        layers=[_stack(la, t) for la, t in zip(layers, layer_t, strict=True)]
        if debug_layers
        else [],
        ticks=np.stack(ticks).astype(np.int64) if profile and ticks else None,
        state=np.stack(states) if states else None,
    )


def _stack(arrs: list[np.ndarray], t) -> np.ndarray:
    """The samples' IR batch (``samples.stack``)."""
    return samples.stack(t, arrs, NP_DTYPES[t.dtype])


def unpack_refused(
    p: Plan, data: bytes, text: str, *, debug_layers: bool, profile: bool
) -> RunResult:
    """The results of a run a layer stopped (exit status 5; ``text``: its stderr, with the
    "tc-refused: sample=S layer=L" line): the S complete samples before it, and the refusal."""
    m = _REFUSED.search(text)
    if m is None:
        raise RunError("firmware exited with status 5 (refused input) but did not say where")
    sample, layer = int(m.group(1)), int(m.group(2))
    if layer >= len(p.order):
        raise RunError(f"firmware reported a refusal at layer {layer} of {len(p.order)}")
    lo = p.lowering.ops[p.order[layer]]
    per = sample_bytes(p, debug_layers=debug_layers, profile=profile)
    res = unpack_outputs(
        p, data[: per * sample], sample, debug_layers=debug_layers, profile=profile
    )
    res.refused = Refusal(sample, layer, lo.op.index, lo.op.kind, lo.refusal or "refused")
    return res


def sample_bytes(p: Plan, *, debug_layers: bool, profile: bool) -> int:
    """Bytes tc_out.bin holds per input sample (outputs, layer dumps, ticks; see unpack_outputs):
    what run progress is measured in."""
    g = p.graph
    n = sum(g.t(t).nbytes for t in g.outputs)
    if debug_layers:
        n += sum(g.t(p.lowering.ops[i].op.outputs[0]).nbytes for i in p.order) + p.state_bytes
    return n + (4 * (len(p.order) + 1) if profile else 0)
