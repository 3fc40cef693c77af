"""Python API: the façade over the pipeline stages (the CLI is a thin layer over this).

`plan` reads, validates, lowers and plans a model; `generate` writes its C project
(tinycompile/outdir.py); `compare` builds, runs and checks it against TFLM (tinycompile/run/).
The other names are re-exported from where they live.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import CompileError
from .frontend import load_model
from .ir import Graph
from .outdir import generate as _generate
from .outdir import replace_dir
from .passes.lower import lower
from .passes.validate import validate
from .planner import Plan
from .planner import plan as make_plan
from .run import (
    NP_DTYPES,
    BoardBuild,
    CompareReport,
    RunResult,
    build_board,
    compare_plan,
    diff,
    make_inputs,
    pack_inputs,
    profile_of,
    profile_table,
    run_board,
    run_host,
    unpack_outputs,
)

__all__ = [
    "NP_DTYPES",
    "BoardBuild",
    "CompareReport",
    "RunResult",
    "build_board",
    "compare",
    "diff",
    "generate",
    "make_inputs",
    "pack_inputs",
    "plan",
    "profile_of",
    "profile_table",
    "replace_dir",
    "run_board",
    "run_host",
    "unpack_outputs",
]


def plan(model: str | Path | Graph, *, reorder: bool = True) -> Plan:
    """Read, validate, lower and plan a model."""
    g = model if isinstance(model, Graph) else load_model(model)
    try:
        validate(g)
        p = make_plan(g, lower(g), reorder=reorder)
        p = _try_inplace(p, reorder)
        return _drop_peak_scratch(p, reorder)
    except CompileError as e:
        raise e.at(source=g.source or None) from None


def _inplace_candidates(g: Graph) -> list:
    from .ops import conv

    cand = getattr(conv, "inplace_candidate", None)
    return [op for op in g.ops if cand is not None and cand(op, g)]


def _try_inplace(p: Plan, reorder: bool) -> Plan:
    """Run convolutions in place (output over the dying input, TinyEngine-style) where that
    shrinks the arena: first all candidates at once, then drop those at the peak that cost more
    (their temporary) than they save. The planner only shares buffers whose input dies."""
    g = p.graph
    step = {p.lowering.ops[i].op.index: s for s, i in enumerate(p.order)}
    outputs = set(g.outputs)

    def input_dies(op) -> bool:
        b = p.buffers[p.storage[op.inputs[0]]]
        return b.last == step[op.index] and not outputs.intersection(b.tensors)

    ops = [op for op in _inplace_candidates(g) if op.inputs[0] in p.storage and input_dies(op)]
    if not ops:
        return p
    for op in ops:
        op.attrs["inplace"] = True
    q = make_plan(g, lower(g), reorder=reorder)
    if q.arena_bytes >= p.arena_bytes:
        for op in ops:
            op.attrs.pop("inplace", None)
        return p
    return q


def _drop_peak_scratch(p: Plan, reorder: bool) -> Plan:
    """Optional scratch (a convolution's im2col buffer) trades SRAM for speed. Where it sits at
    the SRAM peak, try the layer without it and keep whichever arena is smaller."""
    for _ in range(4):
        at_peak = [la for la in p.layers if la.live_bytes == p.peak_bytes and la.scratch_bytes]
        if not at_peak:
            return p
        g = p.graph
        by_index = {op.index: op for op in g.ops}
        for la in at_peak:
            by_index[la.op_index].attrs["no_scratch"] = True
        q = make_plan(g, lower(g), reorder=reorder)
        if q.arena_bytes >= p.arena_bytes:
            for la in at_peak:
                del by_index[la.op_index].attrs["no_scratch"]
            return p
        p = q
    return p


def generate(model: str | Path | Plan, out_dir: str | Path) -> Path:
    """Write the C project for a model (a path, or a plan) into ``out_dir`` atomically; returns
    the folder (see outdir.generate for what may be replaced)."""
    return _generate(model if isinstance(model, Plan) else plan(model), out_dir)


def compare(
    model: str | Path,
    *,
    board: str = "host",
    inputs: list[np.ndarray] | None = None,
    n: int = 20,
    seed: int = 0,
    layers: bool = True,
    workdir: str | Path | None = None,
) -> CompareReport:
    """Compile ``model`` for ``board``, run it, and compare bit for bit with TFLM."""
    return compare_plan(
        plan(model), model, board=board, inputs=inputs, n=n, seed=seed, layers=layers,
        workdir=workdir,
    )
