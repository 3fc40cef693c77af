"""Size reports: a linked firmware's flash and SRAM use (from `size -A` sections and linker
symbols) against its board's budgets."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..boards import Board
from ..errors import CompileError
from .stack import stack_bound
from .toolchain import find_toolchain, run_tool, tool_failure


@dataclass(frozen=True)
class SizeReport:
    """Flash and SRAM use of a firmware against its board's budgets (bytes).

    flash_used = code + rodata + weights + data_init; sram_used = data + bss + arena + stack
    (code and bss include vectors, boot2 and alignment padding). The emulator-only I/O (emu_io_*)
    is listed apart and counts against neither budget.
    """

    board: str
    variant: str
    flash_total: int
    flash_used: int
    sram_total: int
    sram_used: int
    weights: int
    code: int
    rodata: int
    data_init: int
    arena: int
    data: int
    bss: int
    stack: int
    emu_io_flash: int = 0
    emu_io_sram: int = 0
    stack_bound: int | None = None  # worst case from the call graph (build/stack.py), or None
    stack_note: str = ""  # how the bound was found, or why it is unknown

    @property
    def fits(self) -> bool:
        return self.flash_used <= self.flash_total and self.sram_used <= self.sram_total

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """A human-readable table, one line per item."""

        def pct(a: int, b: int) -> str:
            return f"{100.0 * a / b:5.1f}%" if b else "  -  "

        def over(a: int, b: int) -> str:
            return "" if a <= b else "  OVER BUDGET"

        fu, ft, su, st = self.flash_used, self.flash_total, self.sram_used, self.sram_total
        out = [
            f"board {self.board} ({self.variant} firmware)",
            f"flash {fu:>9} / {ft:<9} {pct(fu, ft)}{over(fu, ft)}",
            f"  weights      {self.weights:>9}",
            f"  code         {self.code:>9}",
            f"  other const  {self.rodata:>9}",
            f"  data init    {self.data_init:>9}",
            f"SRAM  {su:>9} / {st:<9} {pct(su, st)}{over(su, st)}",
            f"  arena        {self.arena:>9}",
            f"  other bss    {self.bss:>9}",
            f"  data         {self.data:>9}",
            f"  stack        {self.stack:>9}   reserve; "
            + (
                f"worst case from the call graph {self.stack_bound}"
                if self.stack_bound is not None
                else f"no bound: {self.stack_note}"
            ),
        ]
        if self.variant == "emulator":
            out.append(
                f"emulator-only I/O (not counted): flash {self.emu_io_flash}, "
                f"SRAM {self.emu_io_sram}"
            )
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _sections(tools: dict[str, str], elf: Path, cwd: Path) -> dict[str, tuple[int, int]]:
    proc = run_tool([tools["size"], "-A", "-d", str(elf)], cwd, "size")
    if proc.returncode:
        raise tool_failure(proc, "arm-none-eabi-size")
    out: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = (int(parts[1]), int(parts[2]))
    return out


def _symbols(tools: dict[str, str], elf: Path, cwd: Path) -> dict[str, tuple[int, int]]:
    proc = run_tool([tools["nm"], "-S", str(elf)], cwd, "nm")
    if proc.returncode:
        raise tool_failure(proc, "arm-none-eabi-nm")
    out: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        elif len(parts) == 3:
            out.setdefault(parts[2], (int(parts[0], 16), 0))
    return out


def size_report(
    board: Board, variant: str, elf: Path, tools: dict[str, str] | None = None
) -> SizeReport:
    """Measure a linked firmware (sections from `size -A`, boundaries from linker symbols)."""
    tools = tools or find_toolchain()
    cwd = elf.parent
    sec = _sections(tools, elf, cwd)
    sym = _symbols(tools, elf, cwd)

    def size(name: str) -> int:
        return sec.get(name, (0, 0))[0]

    def addr(name: str) -> int:
        if name not in sym:
            raise CompileError(f"{elf}: linker symbol {name} missing (not a tinycompile firmware?)")
        return sym[name][0]

    data_board = addr("_tc_data_board_end") - addr("_sdata")
    bss_board = addr("_tc_bss_board_end") - addr("_sbss")
    arena = sym.get("tc_arena", (0, 0))[1]
    weights, rodata = size(".tc_weights"), size(".rodata")
    stack = addr("_tc_stack_size")
    sb = stack_bound(elf, tools["objdump"], fpu=board.fpu != "none")
    flash_used, sram_used = addr("_tc_flash_board_used"), addr("_tc_sram_board_used")
    return SizeReport(
        board=board.name,
        variant=variant,
        flash_total=board.flash_bytes,
        flash_used=flash_used,
        sram_total=board.sram_bytes,
        sram_used=sram_used,
        weights=weights,
        code=flash_used - weights - rodata - data_board,
        rodata=rodata,
        data_init=data_board,
        arena=arena,
        data=data_board,
        bss=sram_used - arena - data_board - stack,
        stack=stack,
        emu_io_flash=size(".tc_emu_io") + size(".data") - data_board,
        emu_io_sram=size(".data") - data_board + size(".bss") - bss_board + size(".tc_heap"),
        stack_bound=sb.bound,
        stack_note=sb.note,
    )
