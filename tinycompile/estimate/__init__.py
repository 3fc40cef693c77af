"""Milliseconds on a board before any hardware: the model's emulator build run once in QEMU with
every instruction logged and classed per layer (``trace``), cycles per class from the core's
Technical Reference Manual, a board memory factor and a per-core calibration against published
measurements (``cost``), at the board's clock.

What it is not: a measurement. QEMU counts instructions exactly; the cycles they take on silicon
depend on pipeline pairing, flash wait states and caches, which the classes model only on
average. Each estimate carries its band (``cost.BAND``; docs/latency_calibration.md says where
each comes from). Estimates are cached by the generated code, the runtime and the board
(``$TINYCOMPILE_CACHE_DIR``/estimates, as the object cache); ``TINYCOMPILE_ESTIMATE=off`` turns
them off (plan then says so).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

import tinycompile

from ..boards import Board, get_board
from ..build.objcache import cache_dir
from ..codegen import render_model
from ..paths import FIRMWARE_DIR
from ..pipeline import Plan
from .cost import BAND, CALIBRATION, CORE_CYCLES, CoreCycles, memory_for

ENV = "TINYCOMPILE_ESTIMATE"


@dataclass(frozen=True)
class LayerEstimate:
    step: int
    op_index: int
    kind: str
    instructions: int
    cycles: float
    ms: float


@dataclass(frozen=True)
class Estimate:
    """Estimated latency of one inference of a plan on a board."""

    board: str
    core: str
    clock_hz: int
    layers: list[LayerEstimate]
    band: float  # relative: 0.25 is +-25%
    memory: str  # the memory factor's reason

    @property
    def cycles(self) -> float:
        return sum(la.cycles for la in self.layers)

    @property
    def ms(self) -> float:
        return sum(la.ms for la in self.layers)

    @property
    def instructions(self) -> int:
        return sum(la.instructions for la in self.layers)

    def as_dict(self) -> dict:
        return {
            "board": self.board,
            "core": self.core,
            "clock_hz": self.clock_hz,
            "ms": round(self.ms, 4),
            "band": self.band,
            "cycles": round(self.cycles),
            "instructions": self.instructions,
            "memory": self.memory,
            "layers": [
                {
                    "step": la.step,
                    "op": la.op_index,
                    "kind": la.kind,
                    "instructions": la.instructions,
                    "cycles": round(la.cycles),
                    "ms": round(la.ms, 5),
                }
                for la in self.layers
            ],
        }

    def text(self) -> str:
        mhz = self.clock_hz / 1e6
        lines = [
            f"latency on {self.board} ({self.core}, {mhz:g} MHz): ~{self.ms:.3g} ms per"
            f" inference, estimated (+-{100 * self.band:.0f}%: docs/latency_calibration.md)",
            f"  from {self.instructions:,} instructions (QEMU, exact) at ~"
            f"{self.cycles / max(self.instructions, 1):.2f} cycles each; memory: {self.memory}",
        ]
        rows = [("step", "op#", "op", "instructions", "est. cycles", "est. ms")]
        for la in self.layers:
            rows.append(
                (
                    str(la.step),
                    str(la.op_index),
                    la.kind,
                    f"{la.instructions:,}",
                    f"{la.cycles:,.0f}",
                    f"{la.ms:.4f}",
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            pairs = enumerate(zip(r, widths, strict=True))
            cells = [c.ljust(w) if i == 2 else c.rjust(w) for i, (c, w) in pairs]
            lines.append("  " + "  ".join(cells).rstrip())
        return "\n".join(lines)


def layer_cycles(counts: dict, c: CoreCycles) -> float:
    """Cycles of one layer's classed instruction counts on a core (before memory/calibration)."""
    g = counts.get
    return (
        g("alu", 0) * c.alu
        + g("mul", 0) * c.mul
        + g("div", 0) * c.div
        + g("load", 0) * c.load
        + g("load_pipelined", 0) * c.load_pipelined
        + g("store", 0) * c.store
        + (g("load_n", 0) + g("store_n", 0)) * c.multi_base
        + g("regs", 0) * c.per_reg  # registers moved by LDM/STM/PUSH/POP, returns included
        + g("branch_taken", 0) * c.branch_taken
        + g("branch_not_taken", 0) * c.branch_not_taken
        + g("call", 0) * c.call
        + g("ret", 0) * c.ret
    )


def enabled() -> bool:
    return os.environ.get(ENV, "").lower() not in ("off", "0", "no")


def _key(p: Plan, b: Board) -> str:
    h = hashlib.sha256()
    h.update(f"{tinycompile.__version__}\n{b.name}\n{b.core}\n".encode())
    for rel, text in sorted(render_model(p).items()):
        h.update(rel.encode() + b"\0" + text.encode() + b"\0")
    for path in sorted(FIRMWARE_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".c", ".h", ".S", ".inc"):
            h.update(str(path.relative_to(FIRMWARE_DIR)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def classed_layers(p: Plan, b: Board) -> list[dict]:
    """The per-layer class counts of ``trace.layer_classes``, from the cache when it has them."""
    folder = cache_dir()
    entry = None
    if folder is not None:
        entry = folder.parent / "estimates" / f"{_key(p, b)}.json"
        try:
            return json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    from .trace import layer_classes

    layers = layer_classes(p, b)
    if entry is not None:
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(layers), encoding="utf-8")
            os.replace(tmp, entry)
        except OSError:
            pass
    return layers


def estimate(p: Plan, board: str | Board) -> Estimate:
    """The estimated latency of ``p`` on ``board`` (ToolchainError without the toolchain or
    QEMU; CompileError for the host)."""
    from ..errors import CompileError

    b = get_board(board)
    if b.core is None or b.emulator is None:
        raise CompileError(f"board {b.name} has no Cortex-M core to estimate for")
    core = b.core
    if core not in CORE_CYCLES:
        raise CompileError(f"no cycle model for {core}")
    mem = memory_for(b.name, b.uart.driver if b.uart else None)
    scale = mem.factor * CALIBRATION.get(core, 1.0)
    counts = classed_layers(p, b)
    out = []
    for la, c in zip(p.layers, counts, strict=False):
        cyc = layer_cycles(c, CORE_CYCLES[core]) * scale
        out.append(
            LayerEstimate(
                la.step,
                la.op_index,
                la.kind,
                int(c.get("instructions", 0)),
                cyc,
                1e3 * cyc / b.clock_hz,
            )
        )
    return Estimate(b.name, core, b.clock_hz, out, BAND.get(core, 0.5), mem.why)
