"""The plan as pictures: a memory timeline (SVG) and the build's report.html.

The timeline puts the schedule's steps across and arena offsets up, one rectangle per buffer
and run of steps over which it keeps its span (a buffer grown by an in-place layer gets a taller
rectangle from that step on; one growing downwards keeps its top). Tensors shared in place are
drawn apart from plain ones, scratch buffers (column buffers, in-place temps) apart again, and
the row windows of streamed layers (``planner.streams``) apart from those; the
placed arena and the live-bytes lower bound are drawn as lines and the peak step is shaded.
Hovering a rectangle names its tensors (a ``<title>``).

Everything from the model (tensor names) is escaped by Jinja's autoescape; the output depends
only on the plan (and the build's size report), so it is as reproducible as the build.
``report.html`` is one self-contained file (inline SVG and CSS, no script, no fetch): it opens
offline in any browser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from .paths import TEMPLATES_DIR
from .pipeline import Plan
from .planner.streams import streamed_ops
from .report import fmt_bytes, plan_dict

PLOT_H = 320  # px of the arena axis
LEFT, TOP, RIGHT, BOTTOM = 78, 24, 16, 136  # margins, px (op names under the steps)
LIMIT_SCALE = 3  # the SRAM limit is drawn when within 3x the arena, else named off the scale
MAX_W = 960  # px of the step axis at most


@dataclass(frozen=True)
class Rect:
    """One rectangle of the timeline (px) and what it shows."""

    x: float
    y: float
    w: float
    h: float
    kind: str  # "tensor", "inplace" (shared in place or by an alias), "scratch" or "rows"
    title: str


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR / "report")),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _runs(b, first: int, last: int) -> list[tuple[int, int, int, int]]:
    """(first step, last step, low byte, high byte) runs over which buffer b keeps its span."""
    runs: list[tuple[int, int, int, int]] = []
    for s in range(first, last + 1):
        lo, hi = b.span_at(b.offset, s)
        if runs and runs[-1][2:] == (lo, hi) and runs[-1][1] == s - 1:
            runs[-1] = (runs[-1][0], s, lo, hi)
        else:
            runs.append((s, s, lo, hi))
    return runs


def timeline(p: Plan, sram_limit: int | None = None) -> dict:
    """Geometry and labels of the memory timeline (what the SVG template draws).
    ``sram_limit``: the bytes the board leaves the arena (its SRAM less everything else the
    build links), drawn as a line when within ``LIMIT_SCALE`` times the arena."""
    g = p.graph
    steps = max(len(p.layers), 1)
    step_w = max(4.0, min(40.0, MAX_W / steps))
    top_bytes = max(p.arena_bytes, 1)
    drawn = sram_limit is not None and 0 < sram_limit <= LIMIT_SCALE * top_bytes
    if drawn:
        top_bytes = max(top_bytes, sram_limit)
    scale = PLOT_H / top_bytes

    def y(byte: int) -> float:
        return round(TOP + PLOT_H - byte * scale, 2)

    rects = []
    kinds = {la.op_index: la.kind for la in p.layers}
    streamed = " ".join(f"#{i}" for i in streamed_ops(g))
    for b in p.buffers:
        if b.scratch_of is not None and kinds.get(b.scratch_of) == "STREAM":
            kind = "rows"
            what = f"row windows of the streamed ops {streamed}"
        elif b.scratch_of is not None:
            kind = "scratch"
            what = f"scratch of op {b.scratch_of} ({kinds.get(b.scratch_of, '?')})"
        else:
            kind = "inplace" if len(b.tensors) > 1 else "tensor"
            what = ", ".join(
                f"t{t} {g.t(t).name} {'x'.join(map(str, g.t(t).shape))}" for t in b.tensors
            )
        for s0, s1, lo, hi in _runs(b, b.first, b.last):
            rects.append(
                Rect(
                    x=round(LEFT + s0 * step_w, 2),
                    y=y(hi),
                    w=round((s1 - s0 + 1) * step_w, 2),
                    h=round((hi - lo) * scale, 2),
                    kind=kind,
                    title=f"{what}: {hi - lo:,} B at {lo:,}, steps {s0}..{s1}",
                )
            )
    ticks = sorted({0, top_bytes // 2, top_bytes})
    every = max(1, steps // 24)
    return {
        "width": round(LEFT + steps * step_w + RIGHT),
        "height": TOP + PLOT_H + BOTTOM,
        "left": LEFT,
        "top": TOP,
        "plot_w": round(steps * step_w, 2),
        "plot_h": PLOT_H,
        "step_w": step_w,
        "rects": rects,
        "arena_y": y(p.arena_bytes),
        "bound_y": y(p.peak_bytes),
        "arena": p.arena_bytes,
        "bound": p.peak_bytes,
        "peak_x": round(LEFT + p.peak_step * step_w, 2),
        "y_ticks": [(y(t), fmt_bytes(t)) for t in ticks],
        "x_ticks": [
            (round(LEFT + (s + 0.5) * step_w, 2), s, p.layers[s].kind if s < len(p.layers) else "")
            for s in range(0, steps, every)
        ],
        "limit": sram_limit,
        "limit_y": y(sram_limit) if drawn else None,
        "model": Path(g.source).name if g.source else g.name,
    }


def timeline_svg(p: Plan, sram_limit: int | None = None) -> str:
    """The memory timeline as a standalone SVG document."""
    t = timeline(p, sram_limit)
    return _env().get_template("timeline.svg.j2").render(t=t, standalone=True)


def report_html(p: Plan, board: str, size: dict | None, latency: dict | None = None) -> str:
    """report.html: the timeline (with the board's SRAM limit for the arena, from the linked
    sizes) beside the per-layer table and the size report; ``latency`` (an estimate's
    ``as_dict``: tinycompile/estimate/) adds each layer's instructions in QEMU and estimated
    milliseconds."""
    env = _env()
    limit = None
    if size and size.get("sram_total") and size.get("sram_used") is not None:
        limit = size["sram_total"] - (size["sram_used"] - size.get("arena", 0))
    svg = env.get_template("timeline.svg.j2").render(t=timeline(p, limit), standalone=False)
    d = plan_dict(p)
    return env.get_template("report.html.j2").render(
        model=Path(p.graph.source).name if p.graph.source else p.graph.name,
        board=board,
        plan=d,
        svg=svg,
        size=size,
        in_place={la.op_index: p.in_place(la.op_index) for la in p.layers},
        latency=latency,
        est={la["step"]: la for la in (latency or {}).get("layers", [])},
    )
