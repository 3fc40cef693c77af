"""Human-readable and JSON reports of plans and runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tinycompile

from .ir import Graph
from .pipeline import Plan
from .planner.streams import describe as describe_streams
from .planner.streams import streamed_ops

REPORT_VERSION = 1


def fmt_bytes(n: int) -> str:
    return f"{n:,} B" if n < 10 * 1024 else f"{n / 1024:,.1f} KiB"


def tensor_dicts(g: Graph, tids: list[int]) -> list[dict[str, Any]]:
    """Graph inputs or outputs: name, shape, dtype, scale and zero point (None: not quantized)."""
    out = []
    for tid in tids:
        t = g.t(tid)
        q = t.quant
        out.append(
            {
                "name": t.name,
                "tensor": tid,
                "shape": list(t.shape),
                "dtype": t.dtype,
                "scale": q.s if q is not None else None,
                "zero_point": q.zp if q is not None else None,
            }
        )
    return out


def io_lines(g: Graph) -> list[str]:
    """One line per graph input and output, for the plan's text."""
    lines = []
    for what, tids in (("input", g.inputs), ("output", g.outputs)):
        for d in tensor_dicts(g, tids):
            q = ""
            if d["scale"] is not None:
                q = f"  scale {d['scale']:.9g} zero point {d['zero_point']}"
            shape = "x".join(map(str, d["shape"])) or "scalar"
            lines.append(f"{what:<6} {d['name']!r}  {shape} {d['dtype']}{q}")
    return lines


def plan_dict(p: Plan) -> dict:
    """The plan as a JSON-ready dict."""
    peak_ops = {la.op_index for la in p.peak_layers()}
    return {
        "model": p.graph.source,
        "inputs": tensor_dicts(p.graph, p.graph.inputs),
        "outputs": tensor_dicts(p.graph, p.graph.outputs),
        "peak_arena_bytes": p.arena_bytes,
        "state_bytes": p.state_bytes,
        "state_tensors": [
            {"tensor": t, "offset": off, "bytes": p.graph.t(t).nbytes, "dtype": p.graph.t(t).dtype}
            for t, off in sorted(p.state.items())
        ],
        "peak_live_bytes": p.peak_bytes,
        "peak_step": p.peak_step,
        "streamed_ops": streamed_ops(p.graph),  # run one output row at a time (STREAM)
        "unstreamed_arena_bytes": p.unstreamed_arena,
        "lean_arena_bytes": p.lean_arena,  # before the scratch bought for speed (--speed-sram)
        "speed_ops": list(p.speed_ops),  # the ops given that scratch
        "peak_layers": sorted(peak_ops),
        "weight_flash_bytes": p.flash_bytes,
        "total_macs": sum(la.macs for la in p.layers),
        "layers": [
            {
                "step": la.step,
                "op_index": la.op_index,
                "op": la.kind,
                "output_shape": list(la.out_shape),
                "macs": la.macs,
                "weight_bytes": la.flash_bytes,
                "live_bytes": la.live_bytes,
                "scratch_bytes": la.scratch_bytes,
                "peak": la.op_index in peak_ops,
            }
            for la in p.layers
        ],
    }


def plan_table(p: Plan) -> str:
    peak_ops = {la.op_index for la in p.peak_layers()}
    rows = [("step", "op#", "op", "output shape", "MACs", "weights B", "live B", "")]
    for la in p.layers:
        rows.append(
            (
                str(la.step),
                str(la.op_index),
                la.kind,
                "x".join(map(str, la.out_shape)) or "scalar",
                f"{la.macs:,}",
                f"{la.flash_bytes:,}",
                f"{la.live_bytes:,}",
                "<- peak" if la.op_index in peak_ops else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {0, 1, 4, 5, 6}
    lines = []
    for r in rows:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    total_macs = sum(la.macs for la in p.layers)
    lines = [*io_lines(p.graph), "", *lines]
    lines.append("")
    lines.append(f"peak arena (placed):   {p.arena_bytes:>10,} B   ({fmt_bytes(p.arena_bytes)})")
    lines.append(f"peak live (bound):     {p.peak_bytes:>10,} B   at step {p.peak_step}")
    if p.lean_arena is not None:
        ops = " ".join(f"#{i}" for i in p.speed_ops)
        more = p.arena_bytes - p.lean_arena
        lines.append(
            f"  bought for speed:    {more:>10,} B   column buffers of {ops} (--speed-sram);"
            f" lean arena {p.lean_arena:,} B"
        )
    if p.state_bytes:
        tensors = ", ".join(f"t{t} {p.graph.t(t).dtype}" for t in sorted(p.state))
        lines.append(f"state (own region):    {p.state_bytes:>10,} B   {tensors}")
    lines.append(f"weights + tables:      {p.flash_bytes:>10,} B   ({fmt_bytes(p.flash_bytes)})")
    lines.append(f"MACs per inference:    {total_macs:>10,}")
    lines += describe_streams(p)
    return "\n".join(lines)


def build_report(
    p: Plan, board: str, variant: str, size: dict | None, estimate: dict | None
) -> dict[str, Any]:
    """report.json of a build: the plan (with inputs, outputs and the per-layer table), the
    linked sizes, the board and options. Deterministic: the model by file name, no paths or
    times (builds are reproducible byte for byte)."""
    d = plan_dict(p)
    d["model"] = Path(p.graph.source).name if p.graph.source else p.graph.name
    return {
        "report_version": REPORT_VERSION,
        "tool": f"tinycompile {tinycompile.__version__}",
        "model": d["model"],
        "model_sha256": p.graph.sha256 or None,  # the file's bytes (validate's fingerprint)
        "board": board,
        "options": {"variant": variant},
        "plan": d,
        "size": size,
        "plan_estimate": estimate,
    }


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON with a final newline (keys in insertion order)."""
    Path(path).write_text(json.dumps(obj, indent=1) + "\n")
