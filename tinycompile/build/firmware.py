"""Cross-compiled firmware: compile a project for a board variant with arm-none-eabi-gcc, link
it against the board's budgets (re-linking unbounded to measure one that overflows), report its
size and write its images.

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
the same inputs are byte-identical, and DIR can be built in a temporary folder and moved into
place afterwards (`FirmwareBuild.moved`). Compilers are tracked children (tinycompile/procs.py):
an exception or interruption stops them, the parallel ones too.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import procs
from ..boards import EMULATOR_MACHINES, Board, get_board
from ..errors import CompileError, DoesNotFit
from .board_files import render_linker, write_board_files, write_testvec
from .images import alif_atoc_config, write_images
from .objcache import compile_cached, kernel_headers, object_key
from .recipe import VARIANTS, BuildRecipe
from .size import SizeReport, size_report
from .toolchain import find_toolchain, run_tool, tool_failure


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

    def moved(self, project_dir: Path) -> FirmwareBuild:
        """The same build after its project folder was moved to `project_dir` (paths rebased)."""
        new = Path(project_dir).resolve()

        def at(p: Path | None) -> Path | None:
            return None if p is None else new / p.relative_to(self.project_dir)

        paths = ("project_dir", "build_dir", "elf", "bin", "hex", "uf2", "map")
        return dataclasses.replace(self, **{k: at(getattr(self, k)) for k in paths})


def _compile_all(
    tools: dict[str, str], project: Path, recipe: BuildRecipe, obj_root: str
) -> tuple[list[str], list[str]]:
    objs = [f"{obj_root}/{os.path.splitext(s)[0]}.o" for s in recipe.sources]
    for o in objs:
        (project / o).parent.mkdir(parents=True, exist_ok=True)

    headers = kernel_headers(project)

    def one(src_obj: tuple[str, str]) -> subprocess.CompletedProcess[str]:
        src, obj = src_obj

        def compile_it() -> subprocess.CompletedProcess[str]:
            return run_tool(
                [tools["gcc"], *recipe.cflags, "-c", src, "-o", obj],
                project,
                f"compiling {src}",
                _tool_tmp(project),
            )

        if not src.startswith("runtime/kernels/"):  # the model's and the board's: every time
            return compile_it()
        key = object_key(tools["gcc"], recipe.cflags, project / src, headers, project)
        return compile_cached(key, project / obj, compile_it)  # the same for every model

    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
    try:
        results = list(pool.map(one, zip(recipe.sources, objs, strict=True)))
    except BaseException:  # interrupted: start no more compiles, stop the running ones
        pool.shutdown(wait=False, cancel_futures=True)
        procs.stop_all()
        raise
    finally:
        pool.shutdown(wait=True)
    warnings = []
    for src, proc in zip(recipe.sources, results, strict=True):
        if proc.returncode:
            raise tool_failure(proc, f"arm-none-eabi-gcc on {src}")
        warnings += [ln for ln in proc.stderr.splitlines() if ": warning: " in ln]
    return objs, warnings


def _link(
    tools: dict[str, str],
    project: Path,
    objs: list[str],
    ldflags: list[str],
    map_path: str,
    elf: str,
) -> subprocess.CompletedProcess[str]:
    return run_tool(
        [tools["gcc"], *objs, *ldflags, f"-Wl,-Map={map_path}", "-o", elf],
        project,
        "linking",
        _tool_tmp(project),
    )


def _tool_tmp(project: Path) -> Path:
    """The compilers' TMPDIR: inside the project (see run_tool), removed after the build."""
    return project / "build" / ".tmp"


_OVERFLOW = re.compile(r"region `?\w+'? overflowed|will not fit in region|tinycompile-budget:")


def build_firmware(
    project_dir: str | Path,
    board: Board | str,
    *,
    variant: str = "board",
    debug_layers: bool = False,
    profile: bool = True,
    opt: str = "-O2",
    test_inputs: Sequence[Any] | None = None,
    portable: bool = False,
    onnx_variant: bool = True,
) -> FirmwareBuild:
    """Render the board's files into DIR/board/NAME and build DIR/build/NAME-VARIANT/firmware.*.

    `test_inputs` (board variant): the first sample's input tensors, rendered into
    DIR/board/tc_testvec.h (see write_testvec); without it an existing tc_testvec.h is kept.
    `portable`: every kernel on its portable C path (-DTC_PORTABLE), the benchmark's baseline.
    `onnx_variant` False: the kernels without ONNX layers' requantization (-DTC_ONNX_VARIANT=0;
    ``Plan.onnx_variant`` says whether a model needs it).
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
    recipe = write_board_files(
        project,
        b,
        debug_layers=debug_layers,
        profile=profile,
        opt=opt,
        portable=portable,
        onnx_variant=onnx_variant,
    )[variant]

    rel_build = f"build/{b.name}-{variant}"
    build_dir = project / rel_build
    build_dir.mkdir(parents=True, exist_ok=True)
    names = {ext: build_dir / f"firmware.{ext}" for ext in ("elf", "bin", "hex", "uf2", "map")}
    (build_dir / "firmware.atoc.json").unlink(missing_ok=True)
    for p in names.values():
        p.unlink(missing_ok=True)
    # Objects are rebuilt every time (the kernels' from the object cache, objcache.py, keyed by
    # their contents): stale objects are a risk.
    obj_root = f"{rel_build}/obj"
    shutil.rmtree(project / obj_root, ignore_errors=True)
    _tool_tmp(project).mkdir(parents=True, exist_ok=True)
    try:
        objs, warnings = _compile_all(tools, project, recipe, obj_root)

        elf_rel, map_rel = f"{rel_build}/firmware.elf", f"{rel_build}/firmware.map"
        proc = _link(tools, project, objs, recipe.ldflags, map_rel, elf_rel)
        if proc.returncode and _OVERFLOW.search(proc.stderr + proc.stdout):
            # over budget with the board's fixed stack reserve: the exact one may fit
            exact = exact_stack(_measure(tools, project, b, variant, objs, recipe, rel_build))
            if exact is not None and exact < b.stack_bytes:
                proc = _relink(tools, project, b, variant, exact, objs, recipe, map_rel, elf_rel)
        if proc.returncode:
            text = proc.stderr + proc.stdout
            if _OVERFLOW.search(text):
                report = _measure(tools, project, b, variant, objs, recipe, rel_build)
                for p in names.values():
                    p.unlink(missing_ok=True)
                parts = []
                if report.flash_used > report.flash_total:
                    parts.append(f"flash {report.flash_used} > {report.flash_total} bytes")
                if report.sram_used > report.sram_total:
                    parts.append(
                        f"SRAM {report.sram_used} > {report.sram_total} bytes (arena "
                        f"{report.arena}, stack {report.stack})"
                    )
                if not parts and variant == "emulator":  # the board's flash exceeds the machine's
                    assert b.emulator is not None
                    code = EMULATOR_MACHINES[b.emulator.machine]["code"][1]
                    used = report.flash_used + report.emu_io_flash
                    parts.append(
                        f"flash {used} > {code} bytes, the code memory of its emulator machine "
                        f"{b.emulator.machine} (the board's own {report.flash_total} would hold it)"
                    )
                err = DoesNotFit(
                    f"{variant} firmware does not fit board {b.name}: "
                    + ("; ".join(parts) or "linker region overflow")
                )
                err.report = report  # type: ignore[attr-defined]
                raise err
            raise tool_failure(proc, "linking the firmware")

        warnings += [ln for ln in (proc.stderr + proc.stdout).splitlines() if "warning" in ln]
        report = size_report(b, variant, names["elf"], tools)
        exact = exact_stack(report)
        if exact is not None and exact != report.stack:
            proc = _relink(tools, project, b, variant, exact, objs, recipe, map_rel, elf_rel)
            if proc.returncode:
                raise tool_failure(proc, "linking the firmware (exact stack reserve)")
            report = size_report(b, variant, names["elf"], tools)
        if not report.fits:  # the linker ASSERTs should have caught it; belt and braces
            names["elf"].unlink(missing_ok=True)
            err = DoesNotFit(f"{variant} firmware does not fit board {b.name}")
            err.report = report  # type: ignore[attr-defined]
            raise err
        uf2_spec = None
        if variant == "board" and b.flash and b.flash.uf2_family_id is not None:
            uf2_spec = (b.flash.app_origin, b.flash.uf2_family_id, b.flash.uf2_abs_block)
        bin_path, hex_path, uf2 = write_images(tools, project, elf_rel, uf2_spec)
        if variant == "board" and b.flash and b.flash.atoc_cpu:  # Alif: the SE tools' entry
            atoc = alif_atoc_config(bin_path.name, b.flash.app_origin, b.flash.atoc_cpu)
            (build_dir / "firmware.atoc.json").write_text(atoc, encoding="utf-8")
    finally:
        shutil.rmtree(_tool_tmp(project), ignore_errors=True)
    return FirmwareBuild(
        board=b,
        variant=variant,
        project_dir=project,
        build_dir=build_dir,
        elf=names["elf"],
        bin=bin_path,
        hex=hex_path,
        uf2=uf2,
        map=names["map"],
        size=report,
        debug_layers=debug_layers,
        profile=profile,
        warnings=tuple(warnings),
    )


STACK_MARGIN = 64  # bytes added to the call graph's worst case


def exact_stack(report: SizeReport) -> int | None:
    """The stack reserve a firmware gets: its call graph's worst case (``report.stack_bound``)
    plus STACK_MARGIN, 8-byte aligned; None where the call graph gives no bound (recursion, an
    unknown callee, a variable stack frame: the board's fixed ``stack_bytes`` stays)."""
    if report.stack_bound is None:
        return None
    return (report.stack_bound + STACK_MARGIN + 7) // 8 * 8


def _relink(
    tools: dict[str, str],
    project: Path,
    board: Board,
    variant: str,
    stack: int,
    objs: list[str],
    recipe: BuildRecipe,
    map_rel: str,
    elf_rel: str,
) -> subprocess.CompletedProcess[str]:
    """Link again with a stack reserve of ``stack`` bytes (the call graph's, ``exact_stack``),
    through the project's own linker script, so that its Makefile builds the same image."""
    (project / "board" / board.name / f"{variant}.ld").write_text(
        render_linker(board, variant, stack_bytes=stack), encoding="utf-8"
    )
    return _link(tools, project, objs, recipe.ldflags, map_rel, elf_rel)


def _measure(
    tools: dict[str, str],
    project: Path,
    board: Board,
    variant: str,
    objs: list[str],
    recipe: BuildRecipe,
    rel_build: str,
) -> SizeReport:
    """Relink with unbounded regions to size a firmware that overflowed its board."""
    script = f"{rel_build}/measure.ld"
    (project / script).write_text(render_linker(board, variant, measure=True), encoding="utf-8")
    ldflags = [f if not f.startswith("-T") else f"-T{script}" for f in recipe.ldflags]
    elf = f"{rel_build}/measure.elf"
    try:
        proc = _link(tools, project, objs, ldflags, f"{rel_build}/measure.map", elf)
        if proc.returncode:
            raise tool_failure(proc, "linking the firmware (measure pass)")
        return size_report(board, variant, project / elf, tools)
    finally:
        for suffix in ("elf", "map", "ld"):
            (project / f"{rel_build}/measure.{suffix}").unlink(missing_ok=True)
