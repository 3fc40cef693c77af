"""A board's files in a project: tc_board.h (clock and console UART macros), the linker scripts
for both variants, the Makefile and the built-in test vector header tc_testvec.h."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..boards import EMULATOR_MACHINES, Board, get_board
from ..errors import CompileError
from ..paths import FIRMWARE_DIR
from .boot2 import make_boot2
from .clocks import clock_defines
from .picobin import image_def_words, make_image_def
from .recipe import VARIANTS, BuildRecipe, make_recipe
from .templates import template_env, write_if_changed
from .toolchain import find_toolchain

EMU_IO_FLASH = 64 * 1024
EMU_HEAP_BYTES = 4 * 1024
EMU_IO_SRAM = 8 * 1024
IO_LIBS = ("*libc_nano.a:*", "*libg_nano.a:*", "*librdimon_nano.a:*", "*librdimon.a:*", "*libc.a:*")
NO_MATCH = "*tc_no_such_object.o"


def _pin(text: str) -> tuple[int, int]:
    """'PA9' -> (0, 9); 'P0.06' -> (0, 6); 'GP1' -> (0, 1); 'P12_1' -> (12, 1) (Alif)."""
    if text.startswith("GP"):
        return 0, int(text[2:])
    m = re.fullmatch(r"P(\d+)_(\d)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"P([A-K])(\d+)", text)
    if m:
        return ord(m.group(1)) - ord("A"), int(m.group(2))
    m = re.fullmatch(r"P(\d)\.(\d+)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    raise CompileError(f"cannot parse pin name {text!r}")


def board_defines(board: Board) -> list[tuple[str, str]]:
    """The tc_board.h macros: the clock set-up (clocks.py) and the console UART (its baud divisor
    is computed at run time from the clock the firmware really runs at)."""
    uart = board.uart
    assert uart is not None
    defs = [
        *clock_defines(board),
        ("TC_UART_BAUD", f"{uart.baud}u"),
        ("TC_UART_INSTANCE", str(uart.instance)),
    ]
    family = {
        "stm32f4": "TC_STM32_F4",
        "stm32f7": "TC_STM32_F7",
        "stm32h7": "TC_STM32_H7",
        "stm32u5": "TC_STM32_U5",
    }
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
    bl = board.bootloader
    if uart.driver in family and bl is not None and "stm32-uart" in bl.methods:
        # the ROM bootloader's USART and pins: the console's set-up resets that USART and
        # returns those of its pins the console does not use to their reset state (after GO)
        defs.append(("TC_BOOT_UART_INSTANCE", str(bl.usart)))
        console = {_pin(uart.tx), _pin(uart.rx)} if uart.tx and uart.rx else set()
        for key, pin in (("TX", bl.tx), ("RX", bl.rx)):
            if pin and _pin(pin) not in console:
                port, num = _pin(pin)
                defs += [(f"TC_BOOT_{key}_PORT", str(port)), (f"TC_BOOT_{key}_PIN", str(num))]
    return defs


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
        lines = [
            ", ".join(f"0x{b:02x}" for b in data[i : i + 16]) + "," for i in range(0, len(data), 16)
        ]
        arrays.append({"size": len(data), "lines": lines})
    text = template_env().get_template("tc_testvec.h.j2").render(count=len(arrays), arrays=arrays)
    path = Path(project_dir) / "board" / "tc_testvec.h"
    write_if_changed(path, text)
    return path


def linker_layout(
    board: Board, variant: str, *, measure: bool = False, stack_bytes: int | None = None
) -> dict[str, Any]:
    """Memory map values for linker.ld.j2 (``stack_bytes``: the stack reserve, default the
    board's)."""
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
        if board.sram_bytes > ram_n:
            raise CompileError(
                f"board {board.name}: its SRAM is larger than the "
                f"emulator machine {board.emulator.machine}'s memory"
            )
        flash_origin, flash_len = code_o, min(board.flash_bytes + EMU_IO_FLASH, code_n)
        ram_origin, ram_len = ram_o, min(board.sram_bytes + EMU_IO_SRAM, ram_n)
        extra = []
        heap = EMU_HEAP_BYTES
        note = (
            f"QEMU {board.emulator.machine} memory map, board {board.name}'s budgets "
            f"({board.flash_bytes} bytes flash, {board.sram_bytes} bytes SRAM) enforced."
        )
        if board.flash_bytes + EMU_IO_FLASH > code_n:  # a board flash larger than the machine's
            note += f"\n * The machine's {code_n} bytes of code memory hold less than the board."
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
        "stack_bytes": board.stack_bytes if stack_bytes is None else stack_bytes,
        "heap_bytes": heap,
        "board_flash_budget": board.flash_bytes,
        "board_sram_budget": board.sram_bytes,
        "boot2": variant == "board" and board.flash.boot2 is not None,
        "image_def": variant == "board" and board.flash.image_def is not None,
        "image_def_bytes": 4 * len(image_def_words(board.flash.image_def))
        if board.flash.image_def
        else 0,
        "io_libs": list(IO_LIBS) if io else [],
        "exclude": " ".join(IO_LIBS) if io else NO_MATCH,
        "enforce": not measure,
    }


def render_linker(
    board: Board, variant: str, *, measure: bool = False, stack_bytes: int | None = None
) -> str:
    """The linker script of `variant` (with `measure`, unbounded regions to size an overflow;
    `stack_bytes`: the stack reserve, default the board's)."""
    layout = linker_layout(board, variant, measure=measure, stack_bytes=stack_bytes)
    tpl = template_env().get_template("linker.ld.j2")
    return tpl.render(board=board, variant=variant, **layout)


def render_board_files(
    project_dir: str | Path,
    board: Board | str,
    *,
    debug_layers: bool = False,
    profile: bool = True,
    opt: str = "-O2",
    portable: bool = False,
    onnx_variant: bool = True,
) -> Path:
    """Render DIR/board/NAME/ (tc_board.h, board.ld, emulator.ld, Makefile) and, when missing,
    DIR/board/tc_testvec.h; return DIR/board/NAME."""
    project = Path(project_dir).resolve()
    b = get_board(board)
    write_board_files(
        project,
        b,
        debug_layers=debug_layers,
        profile=profile,
        opt=opt,
        portable=portable,
        onnx_variant=onnx_variant,
    )
    return project / "board" / b.name


def write_board_files(
    project: Path,
    b: Board,
    *,
    debug_layers: bool,
    profile: bool,
    opt: str,
    portable: bool = False,
    onnx_variant: bool = True,
) -> dict[str, BuildRecipe]:
    """Write the board's files into the (resolved) project `project`; return the build recipe
    of each variant, as the Makefile repeats them."""
    if b.is_host:
        raise CompileError("board 'host' is built by the host toolchain, not arm-none-eabi-gcc")
    _ensure_runtime(project)
    out = project / "board" / b.name
    env = template_env()
    src_name = b.source.name if b.source else f"{b.name}.toml"
    write_if_changed(
        out / "tc_board.h",
        env.get_template("tc_board.h.j2").render(
            board=b, defines=board_defines(b), source_name=src_name
        ),
    )
    for v in VARIANTS:
        write_if_changed(out / f"{v}.ld", render_linker(b, v))
    if not (project / "board" / "tc_testvec.h").exists():
        write_testvec(project, None)
    boot2 = make_boot2(project, b, find_toolchain()) if b.flash and b.flash.boot2 else None
    image_def = make_image_def(project, b) if b.flash and b.flash.image_def else None
    recipes = {
        v: make_recipe(
            project,
            b,
            v,
            debug_layers=debug_layers,
            profile=profile,
            opt=opt,
            boot2_src=boot2 if v == "board" else None,
            image_def_src=image_def if v == "board" else None,
            portable=portable,
            onnx_variant=onnx_variant,
        )
        for v in VARIANTS
    }
    variants = [
        {
            "name": v,
            "cflags": [f.replace(f"{project}/", "$(CURDIR)/") for f in r.cflags],
            "ldflags": r.ldflags,
            "sources": r.sources,
            "options": r.options,
        }
        for v, r in recipes.items()
    ]
    write_if_changed(
        out / "Makefile", env.get_template("Makefile.j2").render(board=b, variants=variants)
    )
    return recipes


def _ensure_runtime(project: Path) -> None:
    """Make sure DIR/runtime/boards exists (a copy of the repo's firmware/boards)."""
    if not (project / "runtime").is_dir():
        raise CompileError(f"{project}: no runtime/ folder (a copy of the repo's firmware/)")
    if not (project / "runtime" / "boards").is_dir():
        shutil.copytree(FIRMWARE_DIR / "boards", project / "runtime" / "boards")
