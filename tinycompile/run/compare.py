"""Comparing a compiled model with TFLM bit for bit: outputs and, optionally, every layer."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..outdir import generate
from ..planner import Plan
from .board import run_board
from .host import run_host
from .inputs import make_inputs
from .ioformat import Refusal, RunResult
from .profile import profile_of
from .reference import (
    ReferenceResult,
    TflmRefusal,
    is_onnx_model,
    require_onnxruntime,
    require_reference,
    run_onnxruntime,
    run_tflm,
)


@dataclass
class CompareReport:
    """A comparison with TFLM: byte mismatches in outputs (and layers), largest difference."""

    model: str
    samples: int
    mismatches: int  # differing bytes over outputs (and layers and state when compared)
    max_abs_diff: float
    output_mismatches: int
    layers: list[dict] = field(default_factory=list)
    result: RunResult | None = None
    reference_outputs: list[np.ndarray] = field(default_factory=list)
    profile: dict | None = None  # emulator runs: instructions per inference and per layer
    build_text: str = ""  # board runs: the size report
    state: list[dict] = field(default_factory=list)  # per variable tensor, after every sample
    refusal: dict | None = None  # a run stopped by a refused input: where, and who refused

    @property
    def refusal_agrees(self) -> bool:
        """No refusal, or both sides refused the same input at the same op."""
        return self.refusal is None or self.refusal["agrees"]

    @property
    def ok(self) -> bool:
        """Bit-exact: no byte differs over the inputs both ran, and any refusal agrees."""
        return self.mismatches == 0 and self.refusal_agrees

    def __str__(self) -> str:
        head = (
            f"{self.model}: {self.samples} inputs, {self.output_mismatches} mismatching output "
            f"bytes, {self.mismatches} in all compared tensors, max |diff| {self.max_abs_diff:g}"
        )
        bad = [la for la in self.layers if la["mismatches"]]
        lines = [head] + [
            f"  layer {la['layer']} op {la['op_index']} {la['kind']}: "
            f"{la['mismatches']} bytes differ"
            f" (max |diff| {la['max_abs_diff']:g})"
            for la in bad[:10]
        ]
        lines += [
            f"  state tensor {x['tensor']}: {x['mismatches']} bytes differ"
            f" (max |diff| {x['max_abs_diff']:g})"
            for x in self.state
            if x["mismatches"]
        ]
        if self.refusal is not None:
            lines.append("  " + self.refusal["line"])
        return "\n".join(lines)


def diff(a: np.ndarray, b: np.ndarray) -> tuple[int, float]:
    """Number of differing bytes and the largest absolute difference in value."""
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b).astype(a.dtype).reshape(a.shape)
    ba = a.view(np.uint8).reshape(-1)
    bb = b.view(np.uint8).reshape(-1)
    n = int(np.count_nonzero(ba != bb))
    d = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
    return n, d


def compare_plan(
    p: Plan,
    model: str | Path,
    *,
    board: str = "host",
    inputs: list[np.ndarray] | None = None,
    n: int = 20,
    seed: int = 0,
    layers: bool = True,
    workdir: str | Path | None = None,
    portable: bool = False,
) -> CompareReport:
    """Generate ``model`` (planned: ``p``) for ``board``, run it, compare bit for bit with TFLM.

    ``portable`` (a board's emulator build): kernels on their portable C paths only."""
    onnx_model = is_onnx_model(model)
    if onnx_model:  # onnxruntime is the reference
        require_onnxruntime()
    else:
        require_reference()  # before a build that could not be compared
    g = p.graph
    xs = inputs if inputs is not None else make_inputs(g, n, seed)
    steps = [p.lowering.ops[i].op for i in p.order]
    with tempfile.TemporaryDirectory(prefix="tc_cmp_") as td:
        project = generate(p, Path(workdir or td) / "project")
        if board == "host":
            res = run_host(p, project, xs, debug_layers=layers)
        else:
            res = run_board(p, project, board, xs, debug_layers=layers, portable=portable)
    ticked = res.ticks is not None and len(res.ticks) > 0
    prof = profile_of(res, p) if res.emulator is not None and ticked else None
    build_text = str(res.firmware.size) if res.firmware is not None else ""
    tids = [op.outputs[0] for op in steps] + sorted(p.state) if layers else None
    if onnx_model:
        ref = run_onnxruntime(model, xs, g, tensor_ids=tids)
    else:
        ref = run_tflm(model, xs, tensor_ids=tids, n_outputs=len(g.outputs), stop_on_refusal=True)
    refusal = refusal_verdict(res.refused, ref.refused)
    n_in = xs[0].shape[0]
    ran = min(x.sample if x else n_in for x in (res.refused, ref.refused))  # run in full
    if ran < n_in:
        res = _first(p, res, ran)
        outs = [o[: ran * _rows(g, t)] for o, t in zip(ref.outputs, g.outputs, strict=True)]
        ref = ReferenceResult(outs, ref.tensors[:ran])
    mism = 0
    maxd = 0.0
    for a, b in zip(res.outputs, ref.outputs, strict=True):
        m, d = diff(a, b)
        mism += m
        maxd = max(maxd, d)
    out_m = mism
    lrep = []
    if layers:
        for k, op in enumerate(steps):
            tid = op.outputs[0]
            if ref.tensors and tid not in ref.tensors[0]:
                continue  # an ONNX model's tensor the frontend added: no onnxruntime twin
            refk = np.concatenate([s[tid].reshape(1, -1) for s in ref.tensors], axis=0)
            m, d = diff(res.layers[k].reshape(refk.shape), refk)
            lrep.append(
                {
                    "layer": k,
                    "op_index": op.index,
                    "kind": op.kind,
                    "tensor": tid,
                    "mismatches": m,
                    "max_abs_diff": d,
                }
            )
            mism += m
            maxd = max(maxd, d)
    srep = _compare_state(p, res, ref.tensors) if layers else []
    for x in srep:
        mism += x["mismatches"]
        maxd = max(maxd, x["max_abs_diff"])
    return CompareReport(
        str(model),
        ran,
        mism,
        maxd,
        out_m,
        lrep,
        res,
        ref.outputs,
        prof,
        build_text,
        srep,
        refusal,
    )


def refusal_verdict(ours: Refusal | None, theirs: TflmRefusal | None) -> dict | None:
    """Who refused which input: agreement when both stopped at the same input and op."""
    if ours is None and theirs is None:
        return None
    d: dict = {
        "sample": (ours or theirs).sample,  # type: ignore[union-attr]
        "ours": None if ours is None else {"layer": ours.layer, "op_index": ours.op_index,
                                           "kind": ours.kind, "reason": ours.reason},
        "tflm": None if theirs is None else {"op_index": theirs.op_index, "kind": theirs.kind,
                                             "message": theirs.message},
    }  # fmt: skip
    if ours is not None and theirs is not None:
        d["agrees"] = ours.sample == theirs.sample and ours.op_index == theirs.op_index
        if d["agrees"]:
            d["line"] = f"input {ours.sample}: {ours.line()}, as TFLM does"
        else:
            d["line"] = (
                f"input {ours.sample}: {ours.line()}; TFLM failed on input {theirs.sample} at op"
                f" #{theirs.op_index} {theirs.kind}"
            )
    elif ours is not None:
        d["agrees"] = False
        d["line"] = f"input {ours.sample}: {ours.line()}; TFLM ran it"
    else:
        assert theirs is not None
        d["agrees"] = False
        d["line"] = (
            f"input {theirs.sample}: TFLM failed at op #{theirs.op_index} {theirs.kind}"
            f" ({theirs.message}); the compiled model ran it"
        )
    return d


def _rows(g, tid: int) -> int:
    """Rows one sample of tensor ``tid`` adds along axis 0 of the stacked results."""
    shape = g.t(tid).shape
    return int(shape[0]) if shape else 1


def _first(p: Plan, res: RunResult, k: int) -> RunResult:
    """The first ``k`` samples of a run."""
    g = p.graph
    layer_t = [p.lowering.ops[i].op.outputs[0] for i in p.order]
    return RunResult(
        outputs=[o[: k * _rows(g, t)] for o, t in zip(res.outputs, g.outputs, strict=True)],
        layers=[la[: k * _rows(g, t)] for la, t in zip(res.layers, layer_t, strict=False)],
        ticks=None if res.ticks is None else res.ticks[:k],
        state=None if res.state is None else res.state[:k],
        emulator=res.emulator,
        firmware=res.firmware,
        refused=res.refused,
    )


def _compare_state(p: Plan, res: RunResult, ref: list[dict[int, np.ndarray]]) -> list[dict]:
    """Every variable tensor after every sample against TFLM's."""
    rows = []
    for tid, off in sorted(p.state.items()):
        t = p.graph.t(tid)
        assert res.state is not None, "a debug run of a model with state dumps its state"
        raw = np.ascontiguousarray(res.state[:, off : off + t.nbytes])
        mine = raw.view(t.dtype).reshape(len(ref), -1)
        theirs = np.concatenate([s[tid].reshape(1, -1) for s in ref], axis=0)
        m, d = diff(mine, theirs)
        rows.append({"tensor": tid, "mismatches": m, "max_abs_diff": d})
    return rows
