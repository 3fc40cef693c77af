"""Python API: the façade over the pipeline stages (the CLI is a thin layer over this).

`plan` reads, validates, lowers and plans a model; `generate` writes its C project
(tinycompile/outdir.py); `compare` builds, runs and checks it against TFLM (tinycompile/run/).
The other names are re-exported from where they live.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import CompileError
from .fit import plan_for
from .frontend import load_model
from .ir import Graph
from .outdir import generate as _generate
from .outdir import replace_dir
from .passes.int8_io import int8_io as boundary_int8
from .pipeline import Plan, check_graph
from .run import (
    NP_DTYPES,
    BoardBuild,
    CompareReport,
    RunResult,
    UserInputs,
    build_board,
    compare_plan,
    diff,
    make_inputs,
    pack_inputs,
    profile_of,
    profile_table,
    require_reference,
    run_board,
    run_host,
    self_test_vector,
    unpack_outputs,
    user_inputs,
)

__all__ = [
    "NP_DTYPES",
    "BoardBuild",
    "CompareReport",
    "RunResult",
    "UserInputs",
    "build_board",
    "self_test_vector",
    "check",
    "compare",
    "diff",
    "generate",
    "make_inputs",
    "pack_inputs",
    "plan",
    "profile_of",
    "profile_table",
    "replace_dir",
    "require_reference",
    "run_board",
    "run_host",
    "unpack_outputs",
    "user_inputs",
]


def plan(
    model: str | Path | Graph,
    *,
    reorder: bool = True,
    board: str | None = None,
    stream: str | int = "auto",
    speed: int | None = 0,
    int8_io: bool = False,
) -> Plan:
    """Read, check, prepare, plan and lower a model (``pipeline.compile_graph``; the planner
    makes every memory decision) for ``board`` (its SRAM decides whether the first layers run
    by rows, ``stream="auto"``; see planner.streams for "off", "min" and a number of layers).
    ``speed``: arena bytes layers may be given beyond the lean arena for their optional
    (speed-up) scratch; None, any.

    A model with problems raises the first of ``check``'s list (unsupported operators before
    what they would have produced), saying how many more there are. ``int8_io``: the firmware
    takes and gives the quantized tensors beyond a float interface's QUANTIZE / DEQUANTIZE
    (``passes.int8_io``)."""
    g = model if isinstance(model, Graph) else load_model(model)
    if int8_io:
        g = boundary_int8(g)
    return plan_for(g, board, reorder=reorder, stream=stream, speed=speed)


def check(model: str | Path | Graph) -> list[CompileError]:
    """Every problem of a model at once (unsupported operators, types, configurations), each
    naming its op; empty when the model can be compiled. A file the reader refuses gives one."""
    try:
        g = model if isinstance(model, Graph) else load_model(model)
    except CompileError as e:
        return [e]
    return [e.at(source=g.source or None) for e in check_graph(g)]


def generate(model: str | Path | Plan, out_dir: str | Path) -> Path:
    """Write the C project for a model (a path, or a plan) into ``out_dir`` atomically; returns
    the folder (see outdir.generate for what may be replaced)."""
    return _generate(model if isinstance(model, Plan) else plan(model), out_dir)


def compare(
    model: str | Path,
    *,
    board: str = "host",
    inputs: list[np.ndarray] | UserInputs | None = None,
    n: int = 20,
    seed: int = 0,
    layers: bool = True,
    workdir: str | Path | None = None,
    portable: bool = False,
    stream: str | int = "auto",
    speed: int | None = 0,
    int8_io: bool = False,
) -> CompareReport:
    """Compile ``model`` for ``board``, run it, and compare bit for bit with TFLM.

    ``inputs``: IR batches (``run.samples``), or a user's inputs as ``user_inputs`` checked
    them (an ONNX reference is then fed the user's own float data).

    ``portable``: build the kernels' portable C paths only (no DSP or ARMv6-M fast paths; a
    board's emulator build), the baseline `make bench` measures the fast paths against."""
    return compare_plan(
        plan(model, board=board, stream=stream, speed=speed, int8_io=int8_io),
        model,
        board=board,
        inputs=inputs,
        n=n,
        seed=seed,
        layers=layers,
        workdir=workdir,
        portable=portable,
    )
