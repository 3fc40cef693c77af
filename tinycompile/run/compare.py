"""Comparing a compiled model with its reference bit for bit (TFLM; for ONNX the numpy
reference, onnxruntime a second opinion): outputs and, optionally, every layer and the state,
each tensor with its twin as ``tensor_map`` finds it (docs/harness.md)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..outdir import generate
from ..pipeline import Plan
from . import samples
from .board import run_board
from .host import run_host
from .inputs import UserInputs, make_inputs
from .ioformat import Refusal, RunResult
from .profile import profile_of
from .reference import (
    ReferenceResult,
    TflmRefusal,
    ort_add_departs,
    ort_saturates_u8s8,
    require_reference,
    run_onnx_reference,
    run_onnxruntime,
    run_tflm,
    uint8_activations,
    uses_op,
)
from .tensor_map import TensorMap, compared_tensors, is_onnx_model, tensor_map


@dataclass
class CompareReport:
    """A comparison with the reference (TFLM; for ONNX the numpy reference, docs/onnx.md): byte
    mismatches in outputs (and layers), largest difference. ``second_opinion`` (ONNX models,
    where onnxruntime is installed): onnxruntime's mismatches against the same compiled run,
    which do not count in ``ok``."""

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
    second_opinion: dict | None = None  # name, mismatches, output_mismatches, explanation

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
        skipped = [la for la in self.layers if not la.get("compared", True)]
        if skipped:
            lines.append(
                f"  {len(skipped)} layer(s) not compared, no twin in the model file: "
                + ", ".join(f"{la['layer']} ({la['kind']})" for la in skipped[:6])
                + (" ..." if len(skipped) > 6 else "")
            )
        if self.refusal is not None:
            lines.append("  " + self.refusal["line"])
        if (line := self.second_opinion_line()) is not None:
            lines.append("  " + line)
        return "\n".join(lines)

    def second_opinion_line(self) -> str | None:
        """onnxruntime's verdict on the same run, one line (ONNX models only)."""
        so = self.second_opinion
        if so is None:
            onnx_model = is_onnx_model(self.model)
            return "second opinion: none, onnxruntime is not installed" if onnx_model else None
        if not so["mismatches"]:
            return f"second opinion, {so['name']}: agrees"
        return (
            f"second opinion, {so['name']}: differs by {so['mismatches']} bytes"
            f" ({so['output_mismatches']} in outputs): {so['explanation']}"
        )


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
    inputs: list[np.ndarray] | UserInputs | None = None,
    n: int = 20,
    seed: int = 0,
    layers: bool = True,
    workdir: str | Path | None = None,
    portable: bool = False,
) -> CompareReport:
    """Generate ``model`` (planned: ``p``) for ``board``, run it, compare bit for bit with TFLM
    (an ONNX model: with the numpy reference, and with onnxruntime as a second opinion).

    ``portable`` (a board's emulator build): kernels on their portable C paths only."""
    onnx_model = is_onnx_model(model)
    if not onnx_model:  # the numpy reference of an ONNX model needs only the onnx package
        require_reference()  # before a build that could not be compared
    g = p.graph
    given = inputs.model if isinstance(inputs, UserInputs) else None  # the file's view
    if isinstance(inputs, UserInputs):
        inputs = inputs.arrays
    xs = inputs if inputs is not None else make_inputs(g, n, seed)
    steps = [p.lowering.ops[i].op for i in p.order]
    tids = compared_tensors(p) if layers else None
    tmap = tensor_map(g, model, tids or [])  # checked before a build that would be in vain
    twins = tmap if layers else None
    with tempfile.TemporaryDirectory(prefix="tc_cmp_") as td:
        project = generate(p, Path(workdir or td) / "project")
        if board == "host":
            res = run_host(p, project, xs, debug_layers=layers)
        else:
            res = run_board(p, project, board, xs, debug_layers=layers, portable=portable)
    ticked = res.ticks is not None and len(res.ticks) > 0
    prof = profile_of(res, p) if res.emulator is not None and ticked else None
    build_text = str(res.firmware.size) if res.firmware is not None else ""
    if onnx_model:
        ref = run_onnx_reference(model, xs, g, tensor_ids=tids, model_inputs=given)
    else:
        ref = run_tflm(model, xs, tensor_ids=tids, n_outputs=len(g.outputs),
                       stop_on_refusal=True, g=g)  # fmt: skip
    refusal = refusal_verdict(res.refused, ref.refused)
    n_in = samples.count(g.t(g.inputs[0]), xs[0])
    ran = min(x.sample if x else n_in for x in (res.refused, ref.refused))  # run in full
    if ran < n_in:
        res = _first(p, res, ran)
        outs = [o[: ran * _rows(g, t)] for o, t in zip(ref.outputs, g.outputs, strict=True)]
        ref = ReferenceResult(outs, ref.tensors[:ran])
    d = _diffs(p, res, ref, steps, twins)
    second = None
    if onnx_model:
        second = _second_opinion(p, model, xs, tids, given, res, ref, steps, twins)
    return CompareReport(
        str(model),
        ran,
        d["mismatches"],
        d["max_abs_diff"],
        d["output_mismatches"],
        d["layers"],
        res,
        ref.outputs,
        prof,
        build_text,
        d["state"],
        refusal,
        second,
    )


def _diffs(
    p: Plan, res: RunResult, ref: ReferenceResult, steps: list, layers: TensorMap | None
) -> dict:
    """A run against a reference: differing bytes (all, in outputs), the largest difference,
    per layer (``layers``: where their twins are) and per state tensor."""
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
            row = {"layer": k, "op_index": op.index, "kind": op.kind, "tensor": tid}
            if tid not in layers.tensors:
                # an ONNX model's tensor the frontend added (a layout transpose, a rescaled
                # Concat input): no twin in the file, said so rather than skipped
                lrep.append({**row, "compared": False, "mismatches": 0, "max_abs_diff": 0.0})
                continue
            refk = _samples(p, ref.tensors, tid)
            m, d = diff(res.layers[k].reshape(refk.shape), refk)
            lrep.append({**row, "compared": True, "mismatches": m, "max_abs_diff": d})
            mism += m
            maxd = max(maxd, d)
    srep = _compare_state(p, res, ref.tensors) if layers else []
    for x in srep:
        mism += x["mismatches"]
        maxd = max(maxd, x["max_abs_diff"])
    return {"mismatches": mism, "max_abs_diff": maxd, "output_mismatches": out_m,
            "layers": lrep, "state": srep}  # fmt: skip


def _second_opinion(p: Plan, model: str | Path, xs: list[np.ndarray], tids: list[int] | None,
                    given: list | None, res: RunResult, ref: ReferenceResult, steps: list,
                    layers: TensorMap | None) -> dict | None:  # fmt: skip
    """onnxruntime on the same inputs, against the same compiled run (None when it is not
    installed), and why it differs where it does (docs/onnx.md, "The reference")."""
    try:
        import onnxruntime
    except ImportError:
        return None
    ort = run_onnxruntime(model, xs, p.graph, tensor_ids=tids, model_inputs=given)
    d = _diffs(p, res, ort, steps, layers)
    same = all(np.array_equal(a, b) for a, b in zip(ref.outputs, ort.outputs, strict=True)) and all(
        np.array_equal(x[t], y[t]) for x, y in zip(ref.tensors, ort.tensors, strict=True) for t in x
    )
    if not d["mismatches"]:
        why = "agrees"
    elif same:
        why = "onnxruntime equals the reference: the compiled model differs from both"
    elif ort_saturates_u8s8() and uint8_activations(model):
        why = "this CPU's onnxruntime uses a saturating u8 x s8 kernel (AVX2 without VNNI)"
    elif ort_add_departs() and uses_op(model, "QLinearAdd", "Add"):
        why = ("this CPU's onnxruntime computes QLinearAdd otherwise than its x86-64 AVX2 kernel"
               " (SSE2: products rounded separately; ARM64: fixed point)")  # fmt: skip
    else:
        why = "onnxruntime departs from the documented arithmetic here (docs/onnx.md)"
    return {"name": f"onnxruntime {onnxruntime.__version__}", "mismatches": d["mismatches"],
            "output_mismatches": d["output_mismatches"], "explanation": why}  # fmt: skip


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
    return samples.rows(g.t(tid))


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


def _samples(p: Plan, ref: list[dict[int, np.ndarray]], tid: int) -> np.ndarray:
    """Tensor ``tid`` of every sample the reference ran, one row per sample."""
    t = p.graph.t(tid)
    if not ref:
        return np.zeros((0, t.size), np.dtype(t.dtype))
    return np.concatenate([s[tid].reshape(1, -1) for s in ref], axis=0)


def _compare_state(p: Plan, res: RunResult, ref: list[dict[int, np.ndarray]]) -> list[dict]:
    """Every variable tensor after every sample against TFLM's."""
    rows = []
    for tid, off in sorted(p.state.items()):
        t = p.graph.t(tid)
        if t.hidden:  # an op's internal state (signal_state): TFLM shows it in no tensor
            continue
        theirs = _samples(p, ref, tid)
        if res.state is None:  # no sample ran to its end (a refusal at the first)
            rows.append({"tensor": tid, "mismatches": 0, "max_abs_diff": 0.0})
            continue
        raw = np.ascontiguousarray(res.state[:, off : off + t.nbytes])
        mine = raw.view(t.dtype).reshape(len(ref), -1)
        m, d = diff(mine, theirs)
        rows.append({"tensor": tid, "mismatches": m, "max_abs_diff": d})
    return rows
