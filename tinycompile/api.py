"""Python API: the pipeline stages wired together (the CLI is a thin layer over this)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import CompileError, RunError
from .frontend import load_model
from .ir import Graph
from .passes.lower import lower
from .passes.validate import validate
from .planner import Plan
from .planner import plan as make_plan

NP_DTYPES = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "float32": np.float32,
}


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
    """Write the C project for a model into ``out_dir`` atomically; returns the folder.

    The project is written to a temporary sibling folder and moved into place at the end, so an
    interrupted or failed generation never leaves a folder that looks like a valid one, and an
    earlier project in ``out_dir`` stays as it was. Only an earlier generated project or an empty
    folder is ever replaced: a file, a folder of other files, or the current folder (or one of
    its parents) is refused.
    """
    from .codegen import write_project

    p = model if isinstance(model, Plan) else plan(model)
    out = Path(out_dir).resolve()
    _check_output(out)
    tmp: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        write_project(p, tmp)
        replace_dir(tmp, out)
    except BaseException as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise CompileError(f"cannot write output folder {out}: {e.strerror or e}") from None
        raise
    return out


def _check_output(out: Path) -> None:
    """Refuse output folders whose replacement would destroy something that is not ours."""
    if out == Path.cwd().resolve() or out in Path.cwd().resolve().parents:
        raise CompileError(f"output folder {out} is the current folder or contains it")
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise CompileError(f"output path {out} exists and is not a folder")
    if any(out.iterdir()) and not (out / "model" / "tc_model.h").is_file():
        raise CompileError(
            f"output folder {out} exists and is not a tinycompile project; refusing to replace it"
        )


def replace_dir(src: Path, dst: Path) -> None:
    """Move ``src`` to ``dst``, replacing an existing ``dst`` (renames only, same filesystem).

    If the final rename fails, the previous ``dst`` is put back."""
    if dst.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".old", dir=dst.parent))
        os.replace(dst, old)
        try:
            os.replace(src, dst)
        except BaseException:
            os.replace(old, dst)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)


# ------------------------------------------------------------------------------- running


def make_inputs(g: Graph, n: int = 20, seed: int = 0) -> list[np.ndarray]:
    """Random inputs, batch on axis 0: uniform int8 codes, or for float inputs, values spanning
    the range of the quantization that follows them (so nothing is clipped away)."""
    rng = np.random.default_rng(seed)
    cons = g.consumers()
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        shape = (n, *t.shape[1:]) if t.shape else (n,)
        if t.dtype == "int8":
            xs.append(rng.integers(-128, 128, size=shape, dtype=np.int8))
        elif t.dtype == "float32":
            lo, hi = -1.0, 1.0
            for i in cons.get(tid, []):
                q = g.t(g.ops[i].outputs[0]).quant
                if q is not None and g.ops[i].kind == "QUANTIZE":
                    lo = q.s * (-128 - q.zp)
                    hi = q.s * (127 - q.zp)
            xs.append(rng.uniform(lo, hi, size=shape).astype(np.float32))
        else:
            raise CompileError(f"cannot make random inputs of type {t.dtype}")
    return xs


@dataclass
class RunResult:
    outputs: list[np.ndarray]  # per graph output, batch on axis 0
    layers: list[np.ndarray] = field(default_factory=list)  # per layer, batch on axis 0
    ticks: np.ndarray | None = None  # (samples, layers + 1): per layer, then whole invoke
    emulator: object | None = None  # emulate.EmulatorResult for emulator runs
    firmware: object | None = None  # firmware_build.FirmwareBuild for board runs


def pack_inputs(g: Graph, inputs: list[np.ndarray]) -> bytes:
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
    g = p.graph
    steps = [p.lowering.ops[i].op for i in p.order]
    layer_t = [g.t(op.outputs[0]) for op in steps]
    out_t = [g.t(t) for t in g.outputs]
    per = sum(t.nbytes for t in out_t)
    if debug_layers:
        per += sum(t.nbytes for t in layer_t)
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
    off = 0
    for _ in range(n):
        if debug_layers:
            for k, t in enumerate(layer_t):
                a, off = take(mv, off, t)
                layers[k].append(a)
        for k, t in enumerate(out_t):
            a, off = take(mv, off, t)
            outs[k].append(a)
        if profile:
            ticks.append(np.frombuffer(mv[off : off + 4 * (len(steps) + 1)], dtype="<u4"))
            off += 4 * (len(steps) + 1)
    return RunResult(
        outputs=[np.concatenate(o, axis=0) if o else np.zeros(0) for o in outs],
        layers=[np.concatenate(la, axis=0) for la in layers] if debug_layers else [],
        ticks=np.stack(ticks).astype(np.int64) if profile else None,
    )


def run_host(
    p: Plan,
    project: Path,
    inputs: list[np.ndarray],
    *,
    debug_layers: bool = False,
    timeout_s: float = 120.0,
) -> RunResult:
    """Build the project for the host, run it on ``inputs`` and read back its results."""
    from .build import build_host

    exe = build_host(
        project, debug_layers=debug_layers, name="tc_host_debug" if debug_layers else "tc_host"
    )
    with tempfile.TemporaryDirectory(prefix="tc_run_") as wd:
        Path(wd, "tc_in.bin").write_bytes(pack_inputs(p.graph, inputs))
        try:
            r = subprocess.run([str(exe)], cwd=wd, capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise RunError(f"host run timed out after {timeout_s:g} s") from None
        if r.returncode != 0:
            raise RunError(
                f"host run failed with exit code {r.returncode}: "
                f"{r.stderr.decode(errors='replace')[:500]}"
            )
        data = Path(wd, "tc_out.bin").read_bytes()
    return unpack_outputs(p, data, inputs[0].shape[0], debug_layers=debug_layers, profile=False)


# --------------------------------------------------------------------------- comparing


@dataclass
class CompareReport:
    model: str
    samples: int
    mismatches: int  # differing bytes over outputs (and layers when compared)
    max_abs_diff: float
    output_mismatches: int
    layers: list[dict] = field(default_factory=list)
    result: RunResult | None = None
    reference_outputs: list[np.ndarray] = field(default_factory=list)
    profile: dict | None = None  # emulator runs: instructions per inference and per layer
    build_text: str = ""  # board runs: the size report

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

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
    from .reference import run_tflm

    p = plan(model)
    g = p.graph
    xs = inputs if inputs is not None else make_inputs(g, n, seed)
    steps = [p.lowering.ops[i].op for i in p.order]
    with tempfile.TemporaryDirectory(prefix="tc_cmp_") as td:
        project = generate(p, Path(workdir or td) / "project")
        if board == "host":
            res = run_host(p, project, xs, debug_layers=layers)
        else:
            res = run_board(p, project, board, xs, debug_layers=layers)
    prof = profile_of(res, p) if res.emulator is not None else None
    build_text = str(res.firmware.size) if res.firmware is not None else ""
    tids = [op.outputs[0] for op in steps] if layers else None
    ref = run_tflm(model, xs, tensor_ids=tids, n_outputs=len(g.outputs))
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
    return CompareReport(
        str(model), xs[0].shape[0], mism, maxd, out_m, lrep, res, ref.outputs, prof, build_text
    )


@dataclass
class BoardBuild:
    """A firmware build for a board, with its size report."""

    firmware: object  # firmware_build.FirmwareBuild
    project: Path

    def text(self) -> str:
        fw = self.firmware
        files = ", ".join(
            str(f.relative_to(self.project)) for f in (fw.elf, fw.bin, fw.hex) if f is not None
        )
        where = self.project
        if where.is_relative_to(Path.cwd()):
            where = where.relative_to(Path.cwd())
        return f"{where}: {files}\n{fw.size}"

    def as_dict(self) -> dict:
        fw = self.firmware
        return {
            "project": str(self.project),
            "elf": str(fw.elf),
            "bin": str(fw.bin),
            "hex": str(fw.hex),
            "size": fw.size.as_dict(),
        }


def _fail_if_too_big(p: Plan, board: str) -> None:
    """Refuse before compiling when the plan alone exceeds the board, naming the peak layers."""
    from .fit import check_fit, raise_if_too_big

    raise_if_too_big(check_fit(p, board), source=p.graph.source or None)


def build_board(
    p: Plan,
    board: str,
    out_dir: str | Path,
    *,
    emulator: bool = False,
    debug_layers: bool = False,
    profile: bool = True,
    test_inputs: list[np.ndarray] | None = None,
) -> BoardBuild:
    """Generate the project and cross-compile it for ``board`` (or its emulator variant)."""
    from .build import build_firmware
    from .errors import DoesNotFit
    from .fit import peak_description

    _fail_if_too_big(p, board)
    project = generate(p, out_dir)
    if test_inputs is None and not emulator:
        test_inputs = [x[0] for x in make_inputs(p.graph, 1, 0)]
    try:
        fw = build_firmware(
            project,
            board,
            variant="emulator" if emulator else "board",
            debug_layers=debug_layers,
            profile=profile,
            test_inputs=None if emulator else test_inputs,
        )
    except DoesNotFit as e:
        raise DoesNotFit(
            f"{e.reason}; peak SRAM set by {peak_description(p)}", source=p.graph.source or None
        ) from None
    return BoardBuild(fw, project)


def run_board(
    p: Plan,
    project: Path,
    board: str,
    inputs: list[np.ndarray],
    *,
    debug_layers: bool = False,
    timeout_s: float = 600.0,
) -> RunResult:
    """Build the emulator variant for ``board`` and run it in QEMU (with per-layer ticks)."""
    from .build import build_firmware
    from .emulate import run_emulator

    _fail_if_too_big(p, board)
    fw = build_firmware(project, board, variant="emulator", debug_layers=debug_layers, profile=True)
    with tempfile.TemporaryDirectory(prefix="tc_emu_") as wd:
        Path(wd, "tc_in.bin").write_bytes(pack_inputs(p.graph, inputs))
        er = run_emulator(fw, wd, timeout_s=timeout_s)
    res = unpack_outputs(p, er.output, inputs[0].shape[0], debug_layers=debug_layers, profile=True)
    res.emulator = er
    res.firmware = fw
    return res


def profile_of(res: RunResult, p: Plan) -> dict:
    """Instructions per inference and per layer (first sample; all samples agree or the
    spread is reported)."""
    er = res.emulator
    over = er.timer_overhead_ticks or 0
    ticks = res.ticks
    totals = [er.instructions(int(t), subtract_overhead=True) for t in ticks[:, -1]]
    per_layer = [er.instructions(max(int(t) - over, 0)) for t in ticks[0, :-1]]
    steps = [p.lowering.ops[i] for i in p.order]
    return {
        "instructions": totals[0],
        "instructions_min": min(totals),
        "instructions_max": max(totals),
        "layers": [
            {
                "layer": k,
                "op_index": lo.op.index,
                "op": lo.op.kind,
                "macs": lo.macs,
                "instructions": n,
            }
            for k, (lo, n) in enumerate(zip(steps, per_layer, strict=True))
        ],
    }


def profile_table(r: CompareReport) -> str:
    prof = r.profile or {}
    rows = [
        f"{'layer':>5}  {'op#':>4}  {'op':<18} {'MACs':>11} {'instructions':>13} {'instr/MAC':>9}"
    ]
    for la in prof.get("layers", []):
        ipm = f"{la['instructions'] / la['macs']:.2f}" if la["macs"] else "-"
        rows.append(
            f"{la['layer']:>5}  {la['op_index']:>4}  {la['op']:<18} {la['macs']:>11,} "
            f"{la['instructions']:>13,} {ipm:>9}"
        )
    spread = ""
    if prof.get("instructions_min") != prof.get("instructions_max"):
        spread = f" (range {prof['instructions_min']:,}..{prof['instructions_max']:,})"
    rows.append(f"instructions per inference: {prof.get('instructions', 0):,}{spread}")
    return "\n".join(rows)
