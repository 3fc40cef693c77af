"""The command line's arguments: the parser (one-line errors), shared options and defaults."""

from __future__ import annotations

import argparse

import tinycompile

from ..errors import CompileError
from ..flash import HELP as FLASH_HELP

DEFAULT_BOARD = "stm32f746"
DEFAULT_SAMPLES = 20
EXIT_OK, EXIT_DOES_NOT_FIT, EXIT_MISTAKE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 70, 130
EXIT_DEVICE = 3


class UsageError(CompileError):
    """A command line the parser refuses (exit 2, one line)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (raised, so --json and the exit code are handled once)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("tinycompile").strip()
        raise UsageError(f"{command + ': ' if command else ''}{message} (see {self.prog} --help)")


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 sample, got {v}")
    return v


def _stream_mode(text: str) -> str | int:
    """``--stream``: auto, off, min, or a number of layers."""
    if text in ("auto", "off", "min"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--stream takes auto, off, min or a number of layers, not {text!r}"
        ) from None


def speed_bytes(text: str) -> int | None:
    """``--speed-sram``: a number of bytes (k/K for 1,024), or max (None: no limit)."""
    if text == "max":
        return None
    t = text[:-1] if text[-1:] in "kK" else text
    try:
        v = int(t) * (1024 if t != text else 1)
    except ValueError:
        v = -1
    if v < 0:
        raise argparse.ArgumentTypeError(
            f"--speed-sram takes a number of bytes (e.g. 2048 or 2k) or max, not {text!r}"
        )
    return v


def _plan_args(p: argparse.ArgumentParser) -> None:
    """The planner's options shared by plan, build and run."""
    _stream_arg(p)
    p.add_argument(
        "--speed-sram",
        type=speed_bytes,
        default=0,
        metavar="BYTES|max",
        help="arena bytes the planner may add to give layers the column buffers that make them "
        "faster (default 0: speed never costs memory; plan shows what was bought)",
    )
    p.add_argument(
        "--int8-io",
        action="store_true",
        help="a model with a float interface: the firmware takes and gives the int8 (int16) "
        "tensors beyond its QUANTIZE and DEQUANTIZE (no float buffer in the arena)",
    )


def _stream_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stream",
        type=_stream_mode,
        default="auto",
        metavar="auto|off|min|N",
        help="run the first layers one output row at a time, in windows of a few rows: auto "
        "(default) when the board's SRAM needs it, off, min (smallest arena), or the first N "
        "layers",
    )


def _model_arg(p: argparse.ArgumentParser, required: bool = True) -> None:
    if required:
        p.add_argument("model", help="model file (.tflite or .onnx)")
    else:
        p.add_argument(
            "model",
            nargs="?",
            default=None,
            help="model file (.tflite or .onnx); default: the bundled example",
        )


def parser() -> argparse.ArgumentParser:
    import tinycompile.cli as package  # its docstring is the help text (exit codes)

    doc = package.__doc__ or ""
    ap = _Parser(
        prog="tinycompile",
        description=doc.splitlines()[0],
        epilog=doc[doc.index("Exit codes") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"tinycompile {tinycompile.__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser(
        "check", help="list every unsupported operator, type and configuration of a model"
    )
    _model_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("plan", help="plan memory and report per-layer costs")
    _model_arg(p)
    p.add_argument(
        "--board", help="estimate the fit against this board's SRAM and flash (exit 1: too big)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-reorder", action="store_true", help="keep the model's op order")
    _plan_args(p)
    p.add_argument(
        "--svg", metavar="FILE", help="also write the memory timeline (steps x arena) as SVG"
    )

    p = sub.add_parser(
        "build",
        help="generate C and compile it for a board (or the host); writes report.json and "
        "report.html (per-layer table, size report, memory timeline)",
    )
    _model_arg(p, required=False)
    p.add_argument(
        "--board", default=DEFAULT_BOARD, help=f"board name or file (default {DEFAULT_BOARD})"
    )
    p.add_argument("-o", "--output", help="output folder (default: build/<model>-<board>)")
    p.add_argument("--emulator", action="store_true", help="build the QEMU variant of the board")
    p.add_argument(
        "--test-vector",
        action="store_true",
        help="build a generated input sample into the board image for its start-up inference "
        "(default: none, the start-up inference runs on zero inputs)",
    )
    _plan_args(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "export",
        help="write the model as a library for your own firmware (CMake, Arduino, Zephyr, plain)",
        description="Write the model's C, only the kernels it needs on the board's core, the"
        " headers, a README with the API and an example, and the build file of the format, into"
        " one folder (no board start-up, clock or console code).",
    )
    _model_arg(p)
    p.add_argument(
        "--board",
        default=DEFAULT_BOARD,
        help=f"board whose core the kernels are chosen for, or host (default {DEFAULT_BOARD})",
    )
    p.add_argument(
        "--format", choices=("cmake", "arduino", "zephyr", "plain"), default="cmake", dest="fmt"
    )
    p.add_argument("-o", "--output", help="output folder (default: build/<prefix>-<format>)")
    p.add_argument(
        "--prefix",
        help="name of every symbol, macro (upper case) and file of the model (default: the model"
        " file's name, sanitized): several models link into one program",
    )
    p.add_argument(
        "--arena",
        choices=("static", "caller"),
        default="static",
        help="static: an array placed by TC_ARENA_ATTR; caller: <prefix>_init(void *arena)",
    )
    _plan_args(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "run",
        help="build, run, and compare with TensorFlow Lite Micro (the ONNX reference for .onnx)",
        description="Build, run and compare with TFLM (an .onnx model: with the ONNX"
        " reference, and with onnxruntime as a second opinion; see docs/onnx.md). A Cortex-M"
        " board runs in QEMU (its emulator build: there is no runner for physical boards), so"
        " --emulator is implied; --board host runs a host build.",
    )
    _model_arg(p, required=False)
    p.add_argument(
        "--board",
        default=DEFAULT_BOARD,
        help=f"host, or a board to run in QEMU (default {DEFAULT_BOARD})",
    )
    p.add_argument(
        "--emulator", action="store_true", help="run the board build in QEMU (the default)"
    )
    p.add_argument(
        "--inputs",
        help=".npy (one input: a batch, batch on axis 0, or one sample) or .npz (one array per"
        " input, keyed by input name or in order); float data for an int8 input is quantized"
        " with the input's scale and zero point",
    )
    p.add_argument(
        "--outputs",
        help="write what the compiled code produced: .npy (one output) or .npz (keyed by"
        " output name); checked before the run",
    )
    p.add_argument(
        "-n",
        type=_positive,
        default=None,
        help=f"random inputs when --inputs is absent (default {DEFAULT_SAMPLES})",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", action="store_true", help="also compare every intermediate tensor")
    _plan_args(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "flash",
        help="program a board through its debug probe (OpenOCD, a GDB server, the probe's drive)"
        " or its bootloader (STM32 UART, SAM-BA, UF2)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=FLASH_HELP,
    )
    p.add_argument("target", metavar="BUILD_DIR|FIRMWARE", help="build folder or .hex/.elf/.bin")
    p.add_argument("--board", required=True, help="board name or file (must match the build)")
    p.add_argument(
        "--port",
        help="serial port (stm32-uart, sam-ba), e.g. /dev/ttyUSB0; gdb: the GDB server's"
        " HOST:PORT (default localhost:3333)",
    )
    p.add_argument(
        "--method",
        help="openocd, gdb, probe-drive, stm32-uart, sam-ba or uf2, those the board file names"
        " (default: its first)",
    )
    p.add_argument("--baud", type=int, help="baud rate (default: the board file's)")
    p.add_argument("--no-go", action="store_true", help="do not start the application after")
    p.add_argument(
        "--boot-lines",
        default="none",
        choices=["none", "dtr-nrst-rts-boot0", "rts-nrst-dtr-boot0"],
        help="STM32: NRST and BOOT0 wired to the adapter's DTR/RTS pins (default none; ports"
        " without modem lines continue with a notice)",
    )
    touch = p.add_mutually_exclusive_group()
    touch.add_argument(
        "--touch",
        action="store_const",
        const=True,
        dest="touch",
        help="SAM-BA: always send the 1200-baud touch (default: only when no bootloader answers"
        " on --port, i.e. an Arduino sketch runs)",
    )
    touch.add_argument(
        "--no-touch",
        action="store_const",
        const=False,
        dest="touch",
        help="SAM-BA: never send the 1200-baud touch",
    )
    p.add_argument(
        "--bootloader-port", help="SAM-BA: the name the port comes back under after the touch"
    )
    p.add_argument(
        "--wait",
        type=float,
        default=10.0,
        help="SAM-BA: seconds to wait for the bootloader's port after the touch (default 10)",
    )
    p.add_argument(
        "--drive",
        help="uf2: the mounted UF2 drive (checked by its INFO_UF2.TXT); probe-drive: the probe's"
        " drive (default: found by the board's drive label)",
    )

    p = sub.add_parser(
        "validate",
        help="run inputs on a board over its console UART, compare with TFLM, report cycles",
        description="Handshake with the board firmware `build` made for MODEL (it must run this"
        " model file), send inputs, invoke, read outputs, compare with TFLM (the ONNX"
        " reference for an .onnx model). --stream and --speed-sram: as the firmware was built"
        " (they name its layers; with --port qemu they build it). Exit 0: all match, 1: a"
        " mismatch, 3: the port or board failed.",
    )
    _model_arg(p)
    p.add_argument("--board", required=True, help="the board the firmware was built for")
    p.add_argument(
        "--port",
        required=True,
        help="the console's serial port (/dev/ttyACM0, the pty of `tinycompile emulate`), or"
        " 'qemu': build the board firmware and run it in QEMU on a pty",
    )
    p.add_argument("--inputs", help="as for run: .npy or .npz")
    p.add_argument("-n", type=_positive, help=f"random inputs (default {DEFAULT_SAMPLES})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", action="store_true", help="also read the cycles of every layer")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds an inference may take")
    p.add_argument(
        "--connect-timeout",
        type=float,
        help="seconds to wait for the first handshake; a board just reset runs its start-up"
        " inference first (default 10; 300 with --port qemu)",
    )
    p.add_argument(
        "--timeout-factor",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every deadline (replies, handshake, inference) by F, for a loaded machine"
        " or a slow link (default 1; replies already allow for the link's baud rate)",
    )
    _plan_args(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "emulate",
        help="run a board build in QEMU with its console on a pseudo-terminal (until Ctrl-C)",
    )
    p.add_argument(
        "build_dir", nargs="?", help="a `tinycompile build` output folder (none with --gdb: the"
        " chip starts with empty flash)",
    )  # fmt: skip
    p.add_argument("--board", help="which board build (default: the folder's only one)")
    p.add_argument(
        "--gdb",
        type=int,
        metavar="PORT",
        help="start halted with a GDB server on localhost:PORT, as a board with a debug probe"
        " (`tinycompile flash --method gdb --port localhost:PORT`)",
    )

    p = sub.add_parser("boards", help="list the known boards")
    p.add_argument("--json", action="store_true")
    return ap
