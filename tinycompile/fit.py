"""Will it fit? The verdict of a plan against a board, before any build.

SRAM need = the planned arena + the state region (variable tensors) + the board's stack reserve
(an upper bound: a build's reserve is its call graph's worst case, build/stack.py) + a small
runtime allowance; flash need = weights and tables + an allowance for code. The allowances are
estimates: `plan` prints them labelled as such, and only what is certain (arena + state + a
minimal stack > SRAM, weights alone > flash) refuses a build before compiling
(``raise_if_too_big``); the linked firmware's size report decides the rest (build/firmware.py).
How far the estimate is from the linked size: ``ESTIMATE_NOTE`` and docs/fit_estimate.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from .boards import Board, get_board, list_boards
from .errors import DoesNotFit
from .ir import Graph
from .pipeline import Plan, compile_graph
from .planner import naive_arena
from .planner import plan as place
from .planner.streams import streamed_ops

RUNTIME_SRAM_ALLOWANCE = 512  # .data/.bss of the runtime and board I/O
MIN_STACK = 512  # no firmware runs on less: what a certain refusal may count on
CODE_FLASH_ALLOWANCE = 24 * 1024  # kernels, startup, board I/O at -O2 (measured: 7-39 KB)
# measured (docs/fit_estimate.md): 5 models x 3 boards, linked flash minus this estimate
ESTIMATE_NOTE = (
    "estimates: on the test models the linked flash was 17 KB below to 18 KB above (code took\n"
    "  7-39 KB), SRAM 1.7-6.3 KB below (a build reserves its exact worst-case stack);\n"
    "  `tinycompile build` links and reports the exact figures (docs/fit_estimate.md)"
)


@dataclass
class Verdict:
    """A plan's SRAM and flash needs against one board (bytes), with the peak that sets SRAM.
    The needs are estimates (``fits``); ``certainly_too_big`` counts only what is certain."""

    board: Board
    arena: int
    state: int  # the state region (variable tensors), beside the arena
    stack: int
    sram_need: int
    sram_total: int
    weights: int
    flash_need: int
    flash_total: int
    peak_text: str
    peak_layers: list[int]

    @property
    def fits_sram(self) -> bool:
        return self.board.is_host or self.sram_need <= self.sram_total

    @property
    def fits_flash(self) -> bool:
        return self.board.is_host or self.flash_need <= self.flash_total

    @property
    def fits(self) -> bool:
        """The estimate fits (what `plan --board` says)."""
        return self.fits_sram and self.fits_flash

    @property
    def sram_certainly_over(self) -> bool:
        """arena + state + MIN_STACK > SRAM: the build's stack reserve is its call graph's
        worst case (build/stack.py), known only once linked, and the board's ``stack`` only
        bounds it from above."""
        need = self.arena + self.state + min(self.stack, MIN_STACK)
        return not self.board.is_host and need > self.sram_total

    @property
    def flash_certainly_over(self) -> bool:
        return not self.board.is_host and self.weights > self.flash_total

    @property
    def certainly_too_big(self) -> bool:
        """Too big whatever the code size: arena + state + stack > SRAM, or weights alone >
        flash."""
        return self.sram_certainly_over or self.flash_certainly_over

    def as_dict(self) -> dict:
        host = self.board.is_host
        return {
            "board": self.board.name,
            "fits": self.fits,
            "fits_sram": self.fits_sram,
            "fits_flash": self.fits_flash,
            "estimate": True,
            "sram_need_bytes": self.sram_need,
            "state_bytes": self.state,
            "sram_total_bytes": None if host else self.sram_total,
            "flash_need_bytes": self.flash_need,
            "flash_total_bytes": None if host else self.flash_total,
            "peak_layers": self.peak_layers,
        }

    def text(self) -> str:
        b = self.board
        if b.is_host:
            return (
                f"board host: no SRAM or flash budget (host C compiler); arena {self.arena:,} B,"
                + (f" state {self.state:,} B," if self.state else "")
                + f" weights+tables {self.weights:,} B"
            )

        def line(what: str, need: int, total: int, detail: str) -> str:
            ok = "ok  " if need <= total else "OVER"
            pct = 100.0 * need / total if total else float("inf")
            approx = "~" + format(need, ",")
            return f"  {ok} {what:<6}{approx:>10} of {total:>10,} B ({pct:5.1f}%)  {detail}"

        head = f"board {b.name}: " + ("FITS" if self.fits else "DOES NOT FIT") + " (estimate)"
        return "\n".join(
            [
                head,
                line(
                    "SRAM",
                    self.sram_need,
                    self.sram_total,
                    f"arena {self.arena:,}"
                    + (f" + state {self.state:,}" if self.state else "")
                    + f" + stack <={self.stack:,}"
                    f" + runtime ~{RUNTIME_SRAM_ALLOWANCE}",
                ),
                line(
                    "flash",
                    self.flash_need,
                    self.flash_total,
                    f"weights+tables {self.weights:,} + code ~{CODE_FLASH_ALLOWANCE:,}",
                ),
                f"  peak SRAM set by {self.peak_text}",
                f"  {ESTIMATE_NOTE}",
            ]
        )


def sram_budget(board: str | Board | None) -> int | None:
    """SRAM a board leaves for the arena and the state: its SRAM less its stack reserve (an
    upper bound of the build's) and the runtime allowance; None for the host or no board."""
    if board is None:
        return None
    b = get_board(board)
    if b.is_host:
        return None
    return b.sram_bytes - b.stack_bytes - RUNTIME_SRAM_ALLOWANCE


def plan_for(
    g: Graph,
    board: str | Board | None = None,
    *,
    reorder: bool = True,
    stream: str | int = "auto",
    speed: int | None = 0,
) -> Plan:
    """The plan of ``g`` for ``board``: with ``stream="auto"``, the first layers run by rows
    (``planner.streams``) only when the plain plan does not fit the board's SRAM; ``speed``
    arena bytes (None: any) may buy layers their optional scratch, as far as the board's SRAM
    allows (``planner.plan``)."""
    return compile_graph(g, reorder=reorder, stream=stream, budget=sram_budget(board), speed=speed)


def sram_advice(p: Plan, v: Verdict) -> list[str]:
    """When the arena does not fit: the memory strategies in order of cost, each with the arena
    it reaches and whether that fits the SRAM left for the arena (board SRAM - state - runtime
    - a minimal stack): nothing shared, in place, the best schedule (none of these adds MACs
    or time), then the first layers streamed by rows (time only: per-row calls and window
    moves), ending with the live-bytes lower bound of the smallest plan's schedule, which no
    placement of its tensors can beat. Plans anew from the plan's prepared ops (nothing is
    prepared or lowered again)."""
    g, prepared = p.model_graph, p.model_prepared
    room = v.sram_total - v.state - RUNTIME_SRAM_ALLOWANCE - min(v.stack, MIN_STACK)
    in_place_arena = place(g, prepared, reorder=False).arena_bytes
    smallest = place(g, prepared, stream="min")
    ops = streamed_ops(smallest.graph)
    rows = [
        ("model order, every tensor its own buffer", naive_arena(g, prepared)),
        ("+ shared and in-place layers, model order", in_place_arena),
        ("+ the best schedule", p.unstreamed_arena or p.arena_bytes),
    ]
    if ops:
        rows.append((f"+ ops {' '.join(f'#{i}' for i in ops)} by rows", smallest.arena_bytes))
    rows.append(("lower bound of that schedule (live bytes)", smallest.peak_bytes))
    out = [f"  SRAM left for the arena: {room:,} B (with a minimal stack of {MIN_STACK} B)"]
    for what, arena in rows:
        ok = "fits" if arena <= room else "over"
        out.append(f"    {what:<44}{arena:>10,} B  {ok}")
    if smallest.peak_bytes > room:
        out.append(
            "  no placement fits, even with the first layers run by rows: the model needs a\n"
            "  board with more SRAM (or smaller layers)"
        )
    elif ops:
        out.append(
            "  streaming adds no MACs, only time (per-row kernel calls, window moves): measured\n"
            "  on ResNet-8, ~1% more instructions on an M0+, ~30% on an M4/M7 without a column\n"
            "  buffer (docs/streaming.md); `plan --stream min` shows the smallest plan"
        )
    return out


def flash_advice(p: Plan, v: Verdict) -> list[str]:
    """When flash does not fit: what is over and what takes it (the largest weight layers, the
    code estimate), what would change it, and what streaming costs in flash."""
    over = v.flash_need - v.flash_total
    big = sorted(p.layers, key=lambda la: -la.flash_bytes)[:3]
    largest = ", ".join(f"op #{la.op_index} {la.kind} {la.flash_bytes:,} B" for la in big)
    return [
        f"  flash over by ~{over:,} B: weights and tables {v.weights:,} B, code"
        f" ~{CODE_FLASH_ALLOWANCE:,} B (estimated;\n  `build` links the exact figure)",
        f"  the largest weights: {largest}",
        "  every weight is stored as the model gives it (int8, no compression or pruning): a"
        " smaller\n  model (fewer channels) or a board with more flash",
        "  streaming layers by rows saves SRAM, not flash, and costs some: ResNet-8's first 8"
        " layers\n  streamed on an M4 took 4.8 KB more (per-band parameters and tables)",
    ]


def boards_that_fit(p: Plan) -> list[str]:
    """The listed boards (built in and $TINYCOMPILE_BOARDS) whose SRAM and flash this plan's
    estimate fits."""
    return [b.name for b in list_boards() if not b.is_host and check_fit(p, b).fits]


def peak_description(p: Plan) -> str:
    """The layers setting the SRAM peak and the live bytes there, for messages."""
    layers = p.peak_layers()
    names = ", ".join(f"op #{la.op_index} {la.kind} (step {la.step})" for la in layers[:4])
    more = f" and {len(layers) - 4} more" if len(layers) > 4 else ""
    return f"{names}{more}: {p.peak_bytes:,} live bytes"


def check_fit(p: Plan, board: str | Board) -> Verdict:
    """The verdict of plan `p` on `board` (the `host` board has no budget: it fits)."""
    b = get_board(board)
    if b.is_host:
        sram_total = flash_total = stack = 0
    else:
        sram_total, flash_total, stack = b.sram_bytes, b.flash_bytes, b.stack_bytes
    return Verdict(
        board=b,
        arena=p.arena_bytes,
        state=p.state_bytes,
        stack=stack,
        sram_need=p.arena_bytes + p.state_bytes + stack + RUNTIME_SRAM_ALLOWANCE,
        sram_total=sram_total,
        weights=p.flash_bytes,
        flash_need=p.flash_bytes + CODE_FLASH_ALLOWANCE,
        flash_total=flash_total,
        peak_text=peak_description(p),
        peak_layers=sorted({la.op_index for la in p.peak_layers()}),
    )


def raise_if_too_big(v: Verdict, source: str | None = None) -> None:
    """Raise DoesNotFit naming the overflow and the peak layers when `v` is certainly too big
    (arena + state + stack > SRAM, or weights and tables alone > flash); estimates never
    refuse."""
    parts = []
    if v.sram_certainly_over:
        state = f" + state {v.state:,}" if v.state else ""
        stack = min(v.stack, MIN_STACK)
        parts.append(
            f"SRAM needs at least {v.arena + v.state + stack:,} B (arena {v.arena:,}{state} +"
            f" stack {stack:,}) of {v.sram_total:,}; peak set by {v.peak_text}"
        )
    if v.flash_certainly_over:
        parts.append(
            f"flash needs {v.weights:,} B for weights and tables alone, of {v.flash_total:,}"
        )
    if parts:
        raise DoesNotFit(f"does not fit board {v.board.name}: " + "; ".join(parts), source=source)
