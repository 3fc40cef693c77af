"""The binary format shared with firmware/runtime/tc_runner.c: tc_in.bin (sample count, then
each sample's inputs) and tc_out.bin (per sample: layer outputs when debugging, graph outputs,
the state region when debugging, tick counts when profiling), all little-endian; and the
RunResult read back from it."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CompileError, RunError
from ..ir import Graph
from ..planner import Plan

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


@dataclass
class RunResult:
    """What a compiled model produced on a batch of inputs."""

    outputs: list[np.ndarray]  # per graph output, batch on axis 0
    layers: list[np.ndarray] = field(default_factory=list)  # per layer, batch on axis 0
    ticks: np.ndarray | None = None  # (samples, layers + 1): per layer, then whole invoke
    state: np.ndarray | None = None  # debug runs: (samples, state bytes) after each sample
    emulator: EmulatorResult | None = None  # emulator runs
    firmware: FirmwareBuild | None = None  # board runs


def pack_inputs(g: Graph, inputs: list[np.ndarray]) -> bytes:
    """tc_in.bin for `inputs` (one array per graph input, batch on axis 0), types checked."""
    if len(inputs) != len(g.inputs):
        raise CompileError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    n = inputs[0].shape[0]
    parts = [struct.pack("<I", n)]
    arrs = []
    for tid, x in zip(g.inputs, inputs, strict=True):
        t = g.t(tid)
        x = np.asarray(x)
        if x.dtype != NP_DTYPES[t.dtype]:
            raise CompileError(f"input tensor {tid} wants {t.dtype}, got {x.dtype}")
        if x.shape[0] != n or x[0].size != t.size:
            raise CompileError(
                f"input tensor {tid} wants samples of shape {list(t.shape)}, got {list(x.shape)}"
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
        outputs=[np.concatenate(o, axis=0) if o else np.zeros(0) for o in outs],
        layers=[np.concatenate(la, axis=0) for la in layers] if debug_layers else [],
        ticks=np.stack(ticks).astype(np.int64) if profile else None,
        state=np.stack(states) if states else None,
    )
