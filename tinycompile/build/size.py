"""Size reports: a linked firmware's flash and SRAM use (from `size -A` sections and linker
symbols) against its board's budgets, and where its code goes (from the linker's map file):
each kernel file's share, so that what a fast path costs in flash is in every report."""

from __future__ import annotations

import re
import textwrap
from dataclasses import asdict, dataclass, field
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
    # code by origin (bytes of .text from the map file; sums to ``code``): "kernel:<file>" per
    # kernel source file, "model" (the generated inference loop), "runtime" (start-up, clock,
    # console, timers), "libraries" (libc, libgcc), "rest" (vectors, padding, veneers)
    code_parts: dict[str, int] = field(default_factory=dict)

    @property
    def kernel_code(self) -> dict[str, int]:
        """Code bytes per kernel source file (``tc_conv2d_dsp`` ...), largest first."""
        ks = [
            (k.split(":", 1)[1], v) for k, v in self.code_parts.items() if k.startswith("kernel:")
        ]
        return dict(sorted(ks, key=lambda kv: (-kv[1], kv[0])))

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
            *self._code_lines(),
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

    def _code_lines(self) -> list[str]:
        """The code line's breakdown: kernels (each file, ``tc_`` left off), model, runtime,
        libraries, rest."""
        if not self.code_parts:
            return []
        ks = self.kernel_code
        each = ", ".join(f"{k.removeprefix('tc_')} {v}" for k, v in ks.items())
        out = textwrap.wrap(
            each or "-",
            width=98,
            initial_indent=f"    kernels    {sum(ks.values()):>9}   ",
            subsequent_indent=" " * 27,
        )
        for name in ("model", "runtime", "libraries", "rest"):
            out.append(f"    {name:<11}{self.code_parts.get(name, 0):>9}")
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


_ENTRY = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(\S.*)$")


def _origin(obj: str) -> str:
    """The code_parts key of an input file named in a map file."""
    if obj.endswith(")") or obj.endswith(".a"):  # an archive member: libc, libgcc, libm
        return "libraries"
    path = obj.replace("\\", "/")
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if "/runtime/kernels/" in path:
        return f"kernel:{stem}"
    if "/model/" in path:
        return "model"
    if "/runtime/" in path:
        return "runtime"
    return "rest"


def code_by_origin(map_text: str) -> dict[str, int]:
    """Bytes of the output section ``.text`` per origin (``_origin``), from a GNU ld map file:
    each input section's line (name, then address, size and file, on one line or two)."""
    out: dict[str, int] = {}
    in_text = False
    name = ""
    for line in map_text.splitlines():
        if line[:1] not in ("", " "):  # an output section (or a heading) starts
            in_text = line.split()[0] == ".text"
            continue
        if not in_text:
            continue
        parts = line.split()
        if len(parts) == 1 and line.startswith(" ") and parts[0].startswith("."):
            name = parts[0]  # a long input section name: its figures are on the next line
            continue
        if line.startswith(" ") and parts and (parts[0].startswith(".") or parts[0] == "*fill*"):
            name, line = parts[0], line.split(None, 1)[1] if len(parts) > 1 else ""
        elif not name:
            continue
        m = _ENTRY.match(line)
        if name == "*fill*" and len(line.split()) == 2:
            size = int(line.split()[1], 16)
            out["rest"] = out.get("rest", 0) + size
        elif m:
            key = _origin(m.group(3).strip())
            out[key] = out.get(key, 0) + int(m.group(2), 16)
        name = ""
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
    code = flash_used - weights - rodata - data_board
    map_file = elf.with_suffix(".map")
    parts = code_by_origin(map_file.read_text(errors="replace")) if map_file.exists() else {}
    if parts:  # whatever .text leaves out (vectors, boot2, alignment) is "rest"
        parts["rest"] = code - sum(v for k, v in parts.items() if k != "rest")
    return SizeReport(
        board=board.name,
        variant=variant,
        flash_total=board.flash_bytes,
        flash_used=flash_used,
        sram_total=board.sram_bytes,
        sram_used=sram_used,
        weights=weights,
        code=code,
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
        code_parts=dict(sorted(parts.items())),
    )
