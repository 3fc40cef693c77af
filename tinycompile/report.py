"""Human-readable and JSON reports of plans and runs."""

from __future__ import annotations

from .planner import Plan


def fmt_bytes(n: int) -> str:
    return f"{n:,} B" if n < 10 * 1024 else f"{n / 1024:,.1f} KiB"


def plan_dict(p: Plan) -> dict:
    """The plan as a JSON-ready dict."""
    peak_ops = {la.op_index for la in p.peak_layers()}
    return {
        "model": p.graph.source,
        "peak_arena_bytes": p.arena_bytes,
        "peak_live_bytes": p.peak_bytes,
        "peak_step": p.peak_step,
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
    lines.append("")
    lines.append(f"peak arena (placed):   {p.arena_bytes:>10,} B   ({fmt_bytes(p.arena_bytes)})")
    lines.append(f"peak live (bound):     {p.peak_bytes:>10,} B   at step {p.peak_step}")
    lines.append(f"weights + tables:      {p.flash_bytes:>10,} B   ({fmt_bytes(p.flash_bytes)})")
    lines.append(f"MACs per inference:    {total_macs:>10,}")
    return "\n".join(lines)
