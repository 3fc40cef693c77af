"""Cross-compiled firmware: render a board's files into a C project and build it with
arm-none-eabi-gcc into .elf/.bin/.hex (and .uf2 where the board has a UF2 family), with a size
report checked against the board's flash and SRAM budgets.

The project folder DIR holds ``model/`` (generated model), ``runtime/`` (a copy of the repo's
``firmware/`` tree, including ``boards/``) and gets ``board/NAME/`` (rendered: tc_board.h, the
linker scripts board.ld and emulator.ld, a Makefile running the same commands), ``board/
tc_testvec.h`` (the real-board firmware's built-in input) and ``build/NAME-VARIANT/`` (outputs).

Two variants:
- ``board``: the real part's memory map, startup, clock and console UART driver; main runs the
  built-in test vector once and prints outputs and cycle counts (firmware/boards/common/
  tc_main_board.c). Heap: none.
- ``emulator``: same core/FPU flags and kernels, linked for the QEMU machine's memory map with
  semihosting I/O; main runs ``tc_run_files()`` (tc_in.bin -> tc_out.bin). The board's own flash
  and SRAM budgets are enforced at link time by ASSERTs; the emulator-only I/O (newlib stdio, the
  semihosting library and their heap) sits beyond them and is reported apart.
All commands run in DIR with relative paths, so outputs carry no absolute path and two builds of
the same inputs are byte-identical.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import jinja2

from .boards import EMULATOR_MACHINES, Board, get_board
from .errors import CompileError, DoesNotFit, ToolchainError
from .paths import FIRMWARE_DIR
from .paths import TEMPLATES_DIR as _TEMPLATES

TEMPLATES_DIR = _TEMPLATES / "board"

VARIANTS = ("board", "emulator")
# Emulator-only room beyond the board's budgets (newlib stdio + semihosting code, their data and
# heap for two FILE buffers). Measured: about 10 KB of code and 2.3 KB of RAM with newlib-nano.
EMU_IO_FLASH = 64 * 1024
EMU_HEAP_BYTES = 4 * 1024
EMU_IO_SRAM = 8 * 1024
IO_LIBS = ("*libc_nano.a:*", "*libg_nano.a:*", "*librdimon_nano.a:*", "*librdimon.a:*", "*libc.a:*")
NO_MATCH = "*tc_no_such_object.o"

DRIVER_SOURCES = {
    "stm32f4": "stm32/tc_uart_stm32.c",
    "stm32f7": "stm32/tc_uart_stm32.c",
    "stm32h7": "stm32/tc_uart_stm32.c",
    "samd21": "samd21/tc_uart_samd21.c",
    "nrf52": "nrf52/tc_uart_nrf52.c",
    "rp2040": "rp2040/tc_uart_rp2040.c",
    "cmsdk": "mps2/tc_uart_cmsdk.c",
}
INSTALL_HINT = ("install the GNU Arm Embedded toolchain and newlib "
                "(Debian/Ubuntu: apt install gcc-arm-none-eabi libnewlib-arm-none-eabi)")
TOOLS = ("gcc", "objcopy", "size", "nm")
UF2_MAGIC = (0x0A324655, 0x9E5D5157, 0x0AB16F30)


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
            f"  stack        {self.stack:>9}",
        ]
        if self.variant == "emulator":
            out.append(f"emulator-only I/O (not counted): flash {self.emu_io_flash}, "
                       f"SRAM {self.emu_io_sram}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class FirmwareBuild:
    """A built firmware and where its files are (paths absolute)."""

    board: Board
    variant: str
    project_dir: Path
    build_dir: Path
    elf: Path
    bin: Path
    hex: Path
    uf2: Path | None
    map: Path
    size: SizeReport
    debug_layers: bool
    profile: bool
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# toolchain


def find_toolchain() -> dict[str, str]:
    """Paths of arm-none-eabi-{gcc,objcopy,size,nm}; ToolchainError (one line) when missing."""
    tools: dict[str, str] = {}
    for t in TOOLS:
        path = shutil.which(f"arm-none-eabi-{t}")
        if path is None:
            raise ToolchainError(f"arm-none-eabi-{t} not found on PATH: {INSTALL_HINT}")
        tools[t] = path
    return tools


def _run(cmd: Sequence[str], cwd: Path, what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ToolchainError(f"{cmd[0]} not found: {INSTALL_HINT}") from None
    except OSError as e:
        raise ToolchainError(f"{what}: cannot run {cmd[0]}: {e}") from None


def _tool_failure(proc: subprocess.CompletedProcess[str], what: str) -> ToolchainError:
    text = proc.stderr + proc.stdout
    if re.search(r"(stdint\.h|stdio\.h|string\.h|stdlib\.h): No such file|"
                 r"(nano|rdimon)\.specs|cannot find -l(c|c_nano|rdimon)", text):
        return ToolchainError(f"{what}: newlib for arm-none-eabi is missing: {INSTALL_HINT}")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
    err = ToolchainError(f"{what} failed: {first}")
    err.output = text  # type: ignore[attr-defined]
    return err


# ---------------------------------------------------------------------------------------------
# rendering


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _pin(text: str) -> tuple[int, int]:
    """'PA9' -> (0, 9); 'P0.06' -> (0, 6); 'GP1' -> (0, 1)."""
    if text.startswith("GP"):
        return 0, int(text[2:])
    m = re.fullmatch(r"P([A-K])(\d+)", text)
    if m:
        return ord(m.group(1)) - ord("A"), int(m.group(2))
    m = re.fullmatch(r"P(\d)\.(\d+)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    raise CompileError(f"cannot parse pin name {text!r}")


def board_defines(board: Board) -> list[tuple[str, str]]:
    """The tc_board.h macros describing the board's console UART."""
    uart = board.uart
    assert uart is not None
    defs = [
        ("TC_UART_BAUD", f"{uart.baud}u"),
        ("TC_UART_CLOCK_HZ", f"{uart.clock_hz or board.clock_hz}u"),
        ("TC_UART_INSTANCE", str(uart.instance)),
    ]
    family = {"stm32f4": "TC_STM32_F4", "stm32f7": "TC_STM32_F7", "stm32h7": "TC_STM32_H7"}
    if uart.driver in family:
        defs.append((family[uart.driver], "1"))
    if uart.tx and uart.rx:
        for key, pin in (("TX", uart.tx), ("RX", uart.rx)):
            port, num = _pin(pin)
            defs += [(f"TC_UART_{key}_PORT", str(port)), (f"TC_UART_{key}_PIN", str(num))]
    if "af" in uart.extra:
        defs.append(("TC_UART_AF", str(uart.extra["af"])))
    if "pmux" in uart.extra:
        defs.append(("TC_UART_PMUX", str(ord(uart.extra["pmux"]) - ord("A"))))
    for k in ("txpo", "rxpo"):
        if k in uart.extra:
            defs.append((f"TC_UART_{k.upper()}", str(uart.extra[k])))
    return defs


def rp2040_boot2_crc32(data: bytes) -> int:
    """CRC-32 as the RP2040 boot ROM checks boot2: poly 0x04C11DB7, init 0xFFFFFFFF, MSB first,
    no reflection, no final XOR."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


def _make_boot2(project_dir: Path, board: Board, tools: dict[str, str]) -> str:
    """Assemble the project's boot2, pad it to 252 bytes, append the CRC; returns the .S path."""
    src = "runtime/boards/rp2040/tc_boot2.S"
    with tempfile.TemporaryDirectory(prefix="tc_boot2_") as tmp:
        obj = Path(tmp) / "boot2.o"
        raw = Path(tmp) / "boot2.bin"
        proc = _run([tools["gcc"], *board.cpu_flags(), "-c", src, "-o", str(obj)], project_dir,
                    "assembling boot2")
        if proc.returncode:
            raise _tool_failure(proc, f"assembling {src}")
        proc = _run([tools["objcopy"], "-O", "binary", "-j", ".text.tc_boot2", str(obj), str(raw)],
                    project_dir, "boot2 objcopy")
        if proc.returncode:
            raise _tool_failure(proc, "objcopy of boot2")
        code = raw.read_bytes()
    if not 0 < len(code) <= 252:
        raise CompileError(f"{src}: boot2 is {len(code)} bytes; it must fit in 252")
    payload = code.ljust(252, b"\0")
    crc = rp2040_boot2_crc32(payload)
    block = payload + struct.pack("<I", crc)
    lines = [", ".join(f"0x{b:02x}" for b in block[i:i + 16]) for i in range(0, 256, 16)]
    text = _env().get_template("boot2_padded.S.j2").render(code_size=len(code), crc=crc,
                                                           lines=lines)
    rel = f"board/{board.name}/tc_boot2_padded.S"
    _write_if_changed(project_dir / rel, text)
    return rel


def write_testvec(project_dir: str | Path, inputs: Sequence[Any] | None) -> Path:
    """Write DIR/board/tc_testvec.h: the real-board firmware's built-in test input.

    `inputs` holds one entry per model input, in order (numpy arrays of any dtype, taken as raw
    C-order bytes, or bytes; a lone array or bytes object is one input); None or [] writes an
    empty vector (inputs stay zero).
    """
    if isinstance(inputs, bytes | bytearray | memoryview) or hasattr(inputs, "tobytes"):
        inputs = [inputs]  # a single input tensor
    arrays = []
    for x in inputs or []:
        data = bytes(x) if isinstance(x, bytes | bytearray | memoryview) else x.tobytes("C")
        if not data:
            raise CompileError("test vector input is empty")
        lines = [", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ","
                 for i in range(0, len(data), 16)]
        arrays.append({"size": len(data), "lines": lines})
    text = _env().get_template("tc_testvec.h.j2").render(count=len(arrays), arrays=arrays)
    path = Path(project_dir) / "board" / "tc_testvec.h"
    _write_if_changed(path, text)
    return path


@dataclass(frozen=True)
class _Plan:
    cflags: list[str]
    ldflags: list[str]
    sources: list[str]
    options: str


def _layout(board: Board, variant: str, *, measure: bool = False) -> dict[str, Any]:
    """Memory map values for linker.ld.j2."""
    assert board.flash is not None and board.emulator is not None
    if variant == "board":
        flash_origin, flash_len = board.flash.app_origin, board.flash.app_size
        ram_origin, ram_len = board.main_sram.origin, board.main_sram.size
        extra = list(board.sram[1:])
        heap = 0
        note = "Memory map of the real part."
    else:
        machine = EMULATOR_MACHINES[board.emulator.machine]
        (code_o, code_n), (ram_o, ram_n) = machine["code"], machine["ram"]
        if board.flash_bytes > code_n or board.sram_bytes > ram_n:
            raise CompileError(f"board {board.name}: its flash or SRAM is larger than the "
                               f"emulator machine {board.emulator.machine}'s memory")
        flash_origin, flash_len = code_o, min(board.flash_bytes + EMU_IO_FLASH, code_n)
        ram_origin, ram_len = ram_o, min(board.sram_bytes + EMU_IO_SRAM, ram_n)
        extra = []
        heap = EMU_HEAP_BYTES
        note = (f"QEMU {board.emulator.machine} memory map, board {board.name}'s budgets "
                f"({board.flash_bytes} bytes flash, {board.sram_bytes} bytes SRAM) enforced.")
    if measure:
        # Room for anything: used only to size a firmware that failed to fit.
        limit = ram_origin - flash_origin if ram_origin > flash_origin else 1 << 28
        flash_len = min(1 << 28, limit)
        ram_len = min(1 << 28, (1 << 32) - ram_origin)
        extra = []
    io = variant == "emulator"
    return {
        "memory_note": note,
        "flash_origin": flash_origin,
        "flash_length": flash_len,
        "ram_origin": ram_origin,
        "ram_length": ram_len,
        "extra_regions": extra,
        "stack_bytes": board.stack_bytes,
        "heap_bytes": heap,
        "board_flash_budget": board.flash_bytes,
        "board_sram_budget": board.sram_bytes,
        "boot2": variant == "board" and board.flash.boot2 is not None,
        "io_libs": list(IO_LIBS) if io else [],
        "exclude": " ".join(IO_LIBS) if io else NO_MATCH,
        "enforce": not measure,
    }


def _render_linker(board: Board, variant: str, *, measure: bool = False) -> str:
    return _env().get_template("linker.ld.j2").render(
        board=board, variant=variant, **_layout(board, variant, measure=measure))


def _plan(project_dir: Path, board: Board, variant: str, *, debug_layers: bool, profile: bool,
          opt: str, boot2_src: str | None) -> _Plan:
    assert board.uart is not None and board.emulator is not None
    name = board.name
    defines = [f"-DTC_VARIANT_{variant.upper()}"]
    if variant == "emulator":
        defines.append("-DTC_TIMER_SYSTICK")
        if board.emulator.unaligned_trap:
            defines.append("-DTC_EMU_UNALIGN_TRP")
    else:
        defines.append(f"-DTC_TIMER_{board.timer.upper()}")
        if board.caches:
            defines.append("-DTC_BOARD_ENABLE_CACHES")
    if profile:
        defines.append("-DTC_PROFILE")
    if debug_layers:
        defines.append("-DTC_DEBUG_LAYERS")
    cflags = [
        *board.cpu_flags(), "-masm-syntax-unified", "-std=c99", opt, "-ffunction-sections",
        "-fdata-sections",
        "-fno-common", "-Wall", "-Wextra", f"-ffile-prefix-map={project_dir}/=", *defines,
        "-Imodel", "-Iruntime/include", "-Iruntime/boards/include", f"-Iboard/{name}", "-Iboard",
    ]
    ldflags = [*board.cpu_flags(), "-nostartfiles", "-specs=nano.specs"]
    if variant == "emulator":
        ldflags.append("-specs=rdimon.specs")
    ldflags += ["-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments", f"-Tboard/{name}/{variant}.ld"]

    def rel(pattern: str) -> list[str]:
        return sorted(str(p.relative_to(project_dir)) for p in project_dir.glob(pattern))

    model = rel("model/*.c")
    if not model:
        raise CompileError(f"{project_dir}: no model/*.c to build")
    common = "runtime/boards/common/"
    if variant == "emulator":
        board_srcs = ["runtime/runtime/tc_runner.c"] + [
            common + f for f in ("tc_startup.c", "tc_semihost.c", "tc_main_emu.c",
                                 "tc_emu_glue.c", "tc_timer_systick.c")]
    else:
        board_srcs = [common + f for f in ("tc_startup.c", "tc_console.c", "tc_main_board.c",
                                           f"tc_timer_{board.timer}.c")]
        board_srcs.append("runtime/boards/" + DRIVER_SOURCES[board.uart.driver])
        if boot2_src:
            board_srcs.append(boot2_src)
    for s in board_srcs:
        if not (project_dir / s).is_file():
            raise CompileError(f"{project_dir}: missing {s} (copy the repository's firmware/ "
                               f"tree to runtime/)")
    options = (f"{opt}, profile={'on' if profile else 'off'}, "
               f"debug_layers={'on' if debug_layers else 'off'}")
    return _Plan(cflags, ldflags, model + rel("runtime/kernels/*.c") + board_srcs, options)


def render_board_files(project_dir: str | Path, board: Board | str, *, debug_layers: bool = False,
                       profile: bool = True, opt: str = "-O2") -> Path:
    """Render DIR/board/NAME/ (tc_board.h, board.ld, emulator.ld, Makefile) and, when missing,
    DIR/board/tc_testvec.h; return DIR/board/NAME."""
    project = Path(project_dir).resolve()
    b = get_board(board)
    if b.is_host:
        raise CompileError("board 'host' is built by the host toolchain, not arm-none-eabi-gcc")
    _ensure_runtime(project)
    out = project / "board" / b.name
    env = _env()
    src_name = b.source.name if b.source else f"{b.name}.toml"
    _write_if_changed(out / "tc_board.h", env.get_template("tc_board.h.j2").render(
        board=b, defines=board_defines(b), source_name=src_name))
    for v in VARIANTS:
        _write_if_changed(out / f"{v}.ld", _render_linker(b, v))
    if not (project / "board" / "tc_testvec.h").exists():
        write_testvec(project, None)
    boot2 = _make_boot2(project, b, find_toolchain()) if b.flash and b.flash.boot2 else None
    plans = []
    for v in VARIANTS:
        p = _plan(project, b, v, debug_layers=debug_layers, profile=profile, opt=opt,
                  boot2_src=boot2)
        cflags = [f.replace(f"{project}/", "$(CURDIR)/") for f in p.cflags]
        plans.append({"name": v, "cflags": cflags, "ldflags": p.ldflags, "sources": p.sources,
                      "options": p.options})
    _write_if_changed(out / "Makefile", env.get_template("Makefile.j2").render(
        board=b, variants=plans))
    return out


def _ensure_runtime(project: Path) -> None:
    """Make sure DIR/runtime/boards exists (a copy of the repo's firmware/boards)."""
    if not (project / "runtime").is_dir():
        raise CompileError(f"{project}: no runtime/ folder (a copy of the repo's firmware/)")
    if not (project / "runtime" / "boards").is_dir():
        shutil.copytree(FIRMWARE_DIR / "boards", project / "runtime" / "boards")


# ---------------------------------------------------------------------------------------------
# size report


def _sections(tools: dict[str, str], elf: Path, cwd: Path) -> dict[str, tuple[int, int]]:
    proc = _run([tools["size"], "-A", "-d", str(elf)], cwd, "size")
    if proc.returncode:
        raise _tool_failure(proc, "arm-none-eabi-size")
    out: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = (int(parts[1]), int(parts[2]))
    return out


def _symbols(tools: dict[str, str], elf: Path, cwd: Path) -> dict[str, tuple[int, int]]:
    proc = _run([tools["nm"], "-S", str(elf)], cwd, "nm")
    if proc.returncode:
        raise _tool_failure(proc, "arm-none-eabi-nm")
    out: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        elif len(parts) == 3:
            out.setdefault(parts[2], (int(parts[0], 16), 0))
    return out


def size_report(board: Board, variant: str, elf: Path, tools: dict[str, str] | None = None
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
    )


# ---------------------------------------------------------------------------------------------
# build


def _compile_all(tools: dict[str, str], project: Path, plan: _Plan, obj_root: str
                 ) -> tuple[list[str], list[str]]:
    objs = [f"{obj_root}/{os.path.splitext(s)[0]}.o" for s in plan.sources]
    for o in objs:
        (project / o).parent.mkdir(parents=True, exist_ok=True)

    def one(src_obj: tuple[str, str]) -> subprocess.CompletedProcess[str]:
        src, obj = src_obj
        return _run([tools["gcc"], *plan.cflags, "-c", src, "-o", obj], project, f"compiling {src}")

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        results = list(pool.map(one, zip(plan.sources, objs, strict=True)))
    warnings = []
    for src, proc in zip(plan.sources, results, strict=True):
        if proc.returncode:
            raise _tool_failure(proc, f"arm-none-eabi-gcc on {src}")
        warnings += [ln for ln in proc.stderr.splitlines() if ": warning: " in ln]
    return objs, warnings


def _link(tools: dict[str, str], project: Path, objs: list[str], ldflags: list[str],
          map_path: str, elf: str) -> subprocess.CompletedProcess[str]:
    return _run([tools["gcc"], *objs, *ldflags, f"-Wl,-Map={map_path}", "-o", elf], project,
                "linking")


_OVERFLOW = re.compile(r"region `?\w+'? overflowed|will not fit in region|tinycompile-budget:")


def _uf2(image: bytes, base: int, family: int) -> bytes:
    """UF2 container (256-byte payloads) for drag-and-drop flashing."""
    n = (len(image) + 255) // 256
    out = bytearray()
    for i in range(n):
        chunk = image[i * 256:(i + 1) * 256].ljust(256, b"\0")
        out += struct.pack("<8I", UF2_MAGIC[0], UF2_MAGIC[1], 0x00002000, base + 256 * i, 256, i,
                           n, family)
        out += chunk.ljust(476, b"\0") + struct.pack("<I", UF2_MAGIC[2])
    return bytes(out)


def build_firmware(project_dir: str | Path, board: Board | str, *, variant: str = "board",
                   debug_layers: bool = False, profile: bool = True, opt: str = "-O2",
                   test_inputs: Sequence[Any] | None = None) -> FirmwareBuild:
    """Render the board's files into DIR/board/NAME and build DIR/build/NAME-VARIANT/firmware.*.

    `test_inputs` (board variant): the first sample's input tensors, rendered into
    DIR/board/tc_testvec.h (see write_testvec); without it an existing tc_testvec.h is kept.
    Raises DoesNotFit (with `.report`, a SizeReport) when the firmware exceeds the board's flash
    or SRAM (no .bin/.hex is left), ToolchainError when a tool is missing or fails.
    """
    if variant not in VARIANTS:
        raise CompileError(f"unknown firmware variant {variant!r} (board or emulator)")
    if opt not in ("-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"):
        raise CompileError(f"unsupported optimisation flag {opt!r}")
    b = get_board(board)
    if b.is_host:
        raise CompileError("board 'host' is built by the host toolchain, not arm-none-eabi-gcc")
    tools = find_toolchain()
    project = Path(project_dir).resolve()
    if test_inputs is not None:
        write_testvec(project, test_inputs)
    render_board_files(project, b, debug_layers=debug_layers, profile=profile, opt=opt)
    boot2 = f"board/{b.name}/tc_boot2_padded.S" if b.flash and b.flash.boot2 else None
    plan = _plan(project, b, variant, debug_layers=debug_layers, profile=profile, opt=opt,
                 boot2_src=boot2 if variant == "board" else None)

    rel_build = f"build/{b.name}-{variant}"
    build_dir = project / rel_build
    build_dir.mkdir(parents=True, exist_ok=True)
    names = {ext: build_dir / f"firmware.{ext}" for ext in ("elf", "bin", "hex", "uf2", "map")}
    for p in names.values():
        p.unlink(missing_ok=True)
    # Objects are rebuilt every time: the sources are small and stale objects are a risk.
    obj_root = f"{rel_build}/obj"
    shutil.rmtree(project / obj_root, ignore_errors=True)
    objs, warnings = _compile_all(tools, project, plan, obj_root)

    elf_rel, map_rel = f"{rel_build}/firmware.elf", f"{rel_build}/firmware.map"
    proc = _link(tools, project, objs, plan.ldflags, map_rel, elf_rel)
    if proc.returncode:
        text = proc.stderr + proc.stdout
        if _OVERFLOW.search(text):
            report = _measure(tools, project, b, variant, objs, plan, rel_build)
            for p in names.values():
                p.unlink(missing_ok=True)
            parts = []
            if report.flash_used > report.flash_total:
                parts.append(f"flash {report.flash_used} > {report.flash_total} bytes")
            if report.sram_used > report.sram_total:
                parts.append(f"SRAM {report.sram_used} > {report.sram_total} bytes (arena "
                             f"{report.arena}, stack {report.stack})")
            err = DoesNotFit(f"{variant} firmware does not fit board {b.name}: "
                             + ("; ".join(parts) or "linker region overflow"))
            err.report = report  # type: ignore[attr-defined]
            raise err
        raise _tool_failure(proc, "linking the firmware")

    warnings += [ln for ln in (proc.stderr + proc.stdout).splitlines() if "warning" in ln]
    report = size_report(b, variant, names["elf"], tools)
    if not report.fits:  # the linker ASSERTs should have caught it; belt and braces
        names["elf"].unlink(missing_ok=True)
        err = DoesNotFit(f"{variant} firmware does not fit board {b.name}")
        err.report = report  # type: ignore[attr-defined]
        raise err
    for fmt, ext in (("binary", "bin"), ("ihex", "hex")):
        proc = _run([tools["objcopy"], "-O", fmt, elf_rel, f"{rel_build}/firmware.{ext}"], project,
                    "objcopy")
        if proc.returncode:
            raise _tool_failure(proc, f"objcopy -O {fmt}")
    uf2 = None
    if variant == "board" and b.flash and b.flash.uf2_family_id is not None:
        uf2 = names["uf2"]
        uf2.write_bytes(_uf2(names["bin"].read_bytes(), b.flash.app_origin, b.flash.uf2_family_id))
    return FirmwareBuild(board=b, variant=variant, project_dir=project, build_dir=build_dir,
                         elf=names["elf"], bin=names["bin"], hex=names["hex"], uf2=uf2,
                         map=names["map"], size=report, debug_layers=debug_layers,
                         profile=profile, warnings=tuple(warnings))


def _measure(tools: dict[str, str], project: Path, board: Board, variant: str, objs: list[str],
             plan: _Plan, rel_build: str) -> SizeReport:
    """Relink with unbounded regions to size a firmware that overflowed its board."""
    script = f"{rel_build}/measure.ld"
    (project / script).write_text(_render_linker(board, variant, measure=True), encoding="utf-8")
    ldflags = [f if not f.startswith("-T") else f"-T{script}" for f in plan.ldflags]
    elf = f"{rel_build}/measure.elf"
    try:
        proc = _link(tools, project, objs, ldflags, f"{rel_build}/measure.map", elf)
        if proc.returncode:
            raise _tool_failure(proc, "linking the firmware (measure pass)")
        return size_report(board, variant, project / elf, tools)
    finally:
        for suffix in ("elf", "map", "ld"):
            (project / f"{rel_build}/measure.{suffix}").unlink(missing_ok=True)
