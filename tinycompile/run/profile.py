"""Emulator profiles: instructions per inference and per layer, and their table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..pipeline import Plan
from .ioformat import RunResult

if TYPE_CHECKING:
    from .compare import CompareReport


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


def profile_table(r: CompareReport, est_ms: list[float] | None = None, est_line: str = "") -> str:
    """The per-layer instruction table printed by `tinycompile run --emulator`; with ``est_ms``
    (tinycompile/estimate/: per layer, on the board) an estimated-milliseconds column and
    ``est_line`` under it."""
    prof = r.profile or {}
    layers = prof.get("layers", [])
    est = est_ms if est_ms is not None and len(est_ms) == len(layers) else None
    head = (
        f"{'layer':>5}  {'op#':>4}  {'op':<18} {'MACs':>11} {'instructions':>13} {'instr/MAC':>9}"
    )
    rows = [head + (f" {'est. ms':>9}" if est else "")]
    for k, la in enumerate(layers):
        ipm = f"{la['instructions'] / la['macs']:.2f}" if la["macs"] else "-"
        rows.append(
            f"{la['layer']:>5}  {la['op_index']:>4}  {la['op']:<18} {la['macs']:>11,} "
            f"{la['instructions']:>13,} {ipm:>9}" + (f" {est[k]:>9.4f}" if est else "")
        )
    spread = ""
    if prof.get("instructions_min") != prof.get("instructions_max"):
        spread = f" (range {prof['instructions_min']:,}..{prof['instructions_max']:,})"
    rows.append(f"instructions per inference: {prof.get('instructions', 0):,}{spread}")
    if est and est_line:
        rows.append(est_line)
    return "\n".join(rows)
