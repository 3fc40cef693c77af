"""Build recipes: the compiler and linker flags and the source list of one firmware variant of
one board (what build_firmware runs and the rendered Makefile repeats)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..boards import Board
from ..errors import CompileError

VARIANTS = ("board", "emulator")
DRIVER_SOURCES = {
    "stm32f4": "stm32/tc_uart_stm32.c",
    "stm32f7": "stm32/tc_uart_stm32.c",
    "stm32h7": "stm32/tc_uart_stm32.c",
    "stm32u5": "stm32/tc_uart_stm32.c",
    "samd21": "samd21/tc_uart_samd21.c",
    "nrf52": "nrf52/tc_uart_nrf52.c",
    "rp2040": "rp2040/tc_uart_rp2040.c",
    "rp2350": "rp2350/tc_uart_rp2350.c",
    "cmsdk": "mps2/tc_uart_cmsdk.c",
    "alif": "alif/tc_uart_alif.c",
}
# Clock set-up (tc_board_init and the clock queries); the cmsdk driver holds the fixed clock.
CLOCK_SOURCES = {
    "stm32f4": "stm32/tc_clock_stm32f.c",
    "stm32f7": "stm32/tc_clock_stm32f.c",
    "stm32h7": "stm32/tc_clock_stm32h7.c",
    "stm32u5": "stm32/tc_clock_stm32u5.c",
    "samd21": "samd21/tc_clock_samd21.c",
    "nrf52": "nrf52/tc_clock_nrf52.c",
    "rp2040": "rp2040/tc_clock_rp2040.c",
    "rp2350": "rp2350/tc_clock_rp2350.c",
    "alif": "alif/tc_clock_alif.c",
}


@dataclass(frozen=True)
class BuildRecipe:
    """How to build one variant: gcc flags, link flags, sources (relative to the project) and
    a one-line summary of the options for the Makefile."""

    cflags: list[str]
    ldflags: list[str]
    sources: list[str]
    options: str


def make_recipe(
    project_dir: Path,
    board: Board,
    variant: str,
    *,
    debug_layers: bool,
    profile: bool,
    opt: str,
    boot2_src: str | None,
    portable: bool = False,
    onnx_variant: bool = True,
    image_def_src: str | None = None,
) -> BuildRecipe:
    """The recipe of `variant` for the project `project_dir` (checks its sources exist).

    `portable`: -DTC_PORTABLE, every kernel on its portable C path (no DSP or ARMv6-M fast
    paths; firmware/kernels/tc_kernel_util.h): the benchmark's baseline. `onnx_variant` False:
    -DTC_ONNX_VARIANT=0, the kernels without ONNX layers' requantization (firmware/include/
    tc_qmath.h; a plan with no ONNX layer: ``Plan.onnx_variant``)."""
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
    if portable:
        defines.append("-DTC_PORTABLE")
    if not onnx_variant:
        defines.append("-DTC_ONNX_VARIANT=0")
    cflags = [
        *board.cpu_flags(),
        "-masm-syntax-unified",
        "-std=c99",
        opt,
        "-ffunction-sections",
        "-fdata-sections",
        "-fno-common",
        "-Wall",
        "-Wextra",
        f"-ffile-prefix-map={project_dir}/=",
        *defines,
        "-Imodel",
        "-Iruntime/include",
        "-Iruntime/boards/include",
        f"-Iboard/{name}",
        "-Iboard",
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
            common + f
            for f in (
                "tc_startup.c",
                "tc_semihost.c",
                "tc_main_emu.c",
                "tc_emu_glue.c",
                "tc_timer_systick.c",
            )
        ]
    else:
        board_srcs = [
            common + f
            for f in (
                "tc_startup.c",
                "tc_console.c",
                "tc_main_board.c",
                "tc_proto.c",
                "tc_timer_systick.c",  # the SysTick timer, or the DWT timer's fallback
            )
        ]
        if board.timer != "systick":
            board_srcs.append(common + f"tc_timer_{board.timer}.c")
        board_srcs.append("runtime/boards/" + DRIVER_SOURCES[board.uart.driver])
        if board.uart.driver in CLOCK_SOURCES:
            board_srcs.append("runtime/boards/" + CLOCK_SOURCES[board.uart.driver])
        if boot2_src:
            board_srcs.append(boot2_src)
        if image_def_src:  # the RP2350 boot ROM's IMAGE_DEF block (picobin.py)
            board_srcs.append(image_def_src)
    for s in board_srcs:
        if not (project_dir / s).is_file():
            raise CompileError(
                f"{project_dir}: missing {s} (copy the repository's firmware/ tree to runtime/)"
            )
    options = (
        f"{opt}, profile={'on' if profile else 'off'}, "
        f"debug_layers={'on' if debug_layers else 'off'}"
        + (", portable kernels" if portable else "")
    )
    return BuildRecipe(cflags, ldflags, model + rel("runtime/kernels/*.c") + board_srcs, options)
