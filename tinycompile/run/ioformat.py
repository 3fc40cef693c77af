"""A plan's runs through tc_in.bin and tc_out.bin (their layout: ``outformat``): the inputs
packed, the results read back as a RunResult, a refused run's samples and where it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CompileError, RunError
from ..ir import Graph
from ..pipeline import Plan
from . import outformat, samples

if TYPE_CHECKING:
    from ..build import FirmwareBuild
    from .emulator import EmulatorResult

NP_DTYPES = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "float32": np.float32,
    "bool": np.bool_,
}


EXIT_REFUSED = outformat.EXIT_REFUSED  # a layer refused its input (tc_invoke() returned nonzero)


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
    """tc_in.bin for `inputs` (one IR batch per graph input, ``samples``), types checked."""
    if len(inputs) != len(g.inputs):
        raise CompileError(f"model has {len(g.inputs)} inputs, {len(inputs)} given")
    ts = [g.t(tid) for tid in g.inputs]
    n = samples.count(ts[0], inputs[0]) if inputs else 0
    for t, x in zip(ts, inputs, strict=True):
        x = np.asarray(x)
        if x.dtype != NP_DTYPES[t.dtype]:
            raise CompileError(f"input tensor {t.id} wants {t.dtype}, got {x.dtype}")
        if samples.count(t, x) != n:
            raise CompileError(
                f"input tensor {t.id} {list(t.shape)}: a batch of shape {list(x.shape)} holds"
                f" {samples.count(t, x)} samples, the first input {n}"
            )
    return outformat.in_layout(ts).pack([np.asarray(x) for x in inputs], n)


def unpack_outputs(p: Plan, data: bytes, n: int, *, debug_layers: bool, profile: bool) -> RunResult:
    """Read tc_out.bin of `n` samples back into IR batches (RunError when its size is wrong)."""
    return _result(p, data, n, debug_layers=debug_layers, profile=profile, partial=False)


def _result(
    p: Plan, data: bytes, n: int, *, debug_layers: bool, profile: bool, partial: bool
) -> RunResult:
    """``outformat``'s blocks of ``n`` samples as a RunResult."""
    lay = outformat.plan_out_layout(p, debug_layers=debug_layers, profile=profile)
    got = lay.read(data, n, partial=partial)
    g = p.graph

    def batch(k: int) -> np.ndarray:  # block k of every sample as an IR batch
        return got[k].reshape(samples.batch_shape(g.t(lay.blocks[k].tensor), n))

    state, ticks = lay.find(outformat.STATE), lay.find(outformat.TICKS)
    return RunResult(
        outputs=[batch(k) for k in lay.find(outformat.OUTPUT)],
        layers=[batch(k) for k in lay.find(outformat.LAYER)],
        ticks=got[ticks[0]].astype(np.int64) if ticks and n else None,
        state=got[state[0]] if state and n else None,
    )


def unpack_refused(
    p: Plan, data: bytes, text: str, *, debug_layers: bool, profile: bool
) -> RunResult:
    """The results of a run a layer stopped (exit status 5; ``text``: its stderr, with the
    "tc-refused: sample=S layer=L" line): the S complete samples before it, and the refusal."""
    m = outformat.REFUSED_LINE.search(text)
    if m is None:
        raise RunError("firmware exited with status 5 (refused input) but did not say where")
    sample, layer = int(m.group(1)), int(m.group(2))
    if layer >= len(p.order):
        raise RunError(f"firmware reported a refusal at layer {layer} of {len(p.order)}")
    lo = p.lowering.ops[p.order[layer]]
    res = _result(p, data, sample, debug_layers=debug_layers, profile=profile, partial=True)
    res.refused = Refusal(sample, layer, lo.op.index, lo.op.kind, lo.refusal or "refused")
    return res


def sample_bytes(p: Plan, *, debug_layers: bool, profile: bool) -> int:
    """Bytes tc_out.bin holds per input sample (``outformat.plan_out_layout``): what run
    progress is measured in."""
    return outformat.plan_out_layout(p, debug_layers=debug_layers, profile=profile).sample_bytes
