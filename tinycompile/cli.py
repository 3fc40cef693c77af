"""Command line: tinycompile check | plan | build | run | flash | validate | emulate | boards.

Exit codes:
  0    success
  1    the model does not fit the board (build: the linked firmware; plan --board: the
       estimate), or run's outputs differ from TensorFlow Lite Micro
  2    a mistake in what was given (model, board, option, file, missing tool or package, or
       an input a layer refuses at run time, as TFLM does), or
       check found problems: one line on stderr (with --json, also {"error": ...} on stdout),
       and nothing half-written left behind
  3    a port, bootloader or board failed (flash, validate): no answer, NACK, wrong chip,
       failed verify
  70   internal error (a bug in tinycompile; TINYCOMPILE_DEBUG=1 shows the traceback)
  130  interrupted
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import tinycompile

from . import api
from .errors import CompileError, DeviceError, DoesNotFit
from .flash import HELP as FLASH_HELP
from .paths import EXAMPLE_MODEL
from .report import build_report, plan_dict, plan_table, write_json
from .run.files import check_outputs, load_inputs, save_outputs
from .timeline import report_html, timeline_svg

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


def _parser() -> argparse.ArgumentParser:
    doc = __doc__ or ""
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
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "run",
        help="build, run, and compare with TensorFlow Lite Micro (onnxruntime for .onnx)",
        description="Build, run and compare with TFLM (onnxruntime for an .onnx model; see"
        " docs/onnx.md). A Cortex-M board runs in QEMU (its"
        " emulator build: there is no runner for physical boards), so --emulator is implied;"
        " --board host runs a host build.",
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
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "flash",
        help="program a board over its bootloader (STM32 UART, SAM-BA, UF2)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=FLASH_HELP,
    )
    p.add_argument("target", metavar="BUILD_DIR|FIRMWARE", help="build folder or .hex/.elf/.bin")
    p.add_argument("--board", required=True, help="board name or file (must match the build)")
    p.add_argument("--port", help="serial port (stm32-uart, sam-ba), e.g. /dev/ttyUSB0")
    p.add_argument("--method", help="stm32-uart, sam-ba or uf2 (default: the board's first)")
    p.add_argument("--baud", type=int, help="baud rate (default: the board file's)")
    p.add_argument("--no-go", action="store_true", help="do not start the application after")
    p.add_argument(
        "--boot-lines",
        default="none",
        choices=["none", "dtr-nrst-rts-boot0", "rts-nrst-dtr-boot0"],
        help="STM32: NRST and BOOT0 wired to the adapter's DTR/RTS pins (default none; ports"
        " without modem lines continue with a notice)",
    )
    p.add_argument("--no-touch", action="store_true", help="SAM-BA: skip the 1200-baud touch")
    p.add_argument(
        "--bootloader-port", help="SAM-BA: the name the port comes back under after the touch"
    )
    p.add_argument(
        "--wait",
        type=float,
        default=10.0,
        help="SAM-BA: seconds to wait for the bootloader's port after the touch (default 10)",
    )
    p.add_argument("--drive", help="UF2: the mounted UF2 drive (checked by its INFO_UF2.TXT)")

    p = sub.add_parser(
        "validate",
        help="run inputs on a board over its console UART, compare with TFLM, report cycles",
        description="Handshake with the board firmware `build` made for MODEL (it must run this"
        " model file), send inputs, invoke, read outputs, compare with TFLM. Exit 0: all match,"
        " 1: a mismatch, 3: the port or board failed.",
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
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "emulate",
        help="run a board build in QEMU with its console on a pseudo-terminal (until Ctrl-C)",
    )
    p.add_argument("build_dir", help="a `tinycompile build` output folder")
    p.add_argument("--board", help="which board build (default: the folder's only one)")

    p = sub.add_parser("boards", help="list the known boards")
    p.add_argument("--json", action="store_true")
    return ap


def _no_emulator_on_host(a: argparse.Namespace) -> None:
    if a.board == "host" and a.emulator:
        raise UsageError(
            "--emulator runs a Cortex-M board's firmware in QEMU; it does not apply to --board"
            " host (drop one of them)"
        )


def cmd_check(a: argparse.Namespace) -> int:
    problems = api.check(a.model)
    if a.json:
        print(
            json.dumps(
                {
                    "model": a.model,
                    "ok": not problems,
                    "problems": [
                        {"op_index": e.op_index, "op": e.op_kind, "reason": e.reason}
                        for e in problems
                    ],
                },
                indent=1,
            )
        )
    else:
        for e in problems:
            print(e.at(source=a.model).line())
        if not problems:
            print(f"{a.model}: no problems: every operator, type and configuration is supported")
    if problems:
        n = len(problems)
        print(f"tinycompile: {a.model}: {n} problem{'s' if n > 1 else ''}", file=sys.stderr)
        return EXIT_MISTAKE
    return EXIT_OK


def cmd_plan(a: argparse.Namespace) -> int:
    p = api.plan(a.model, reorder=not a.no_reorder)
    if a.svg:
        Path(a.svg).write_text(timeline_svg(p), encoding="utf-8")
    d = plan_dict(p)
    verdict = None
    if a.board:
        from .fit import check_fit

        verdict = check_fit(p, a.board)
        d.update(verdict.as_dict())
    if a.json:
        print(json.dumps(d, indent=1))
    else:
        print(plan_table(p))
        if verdict is not None:
            print()
            print(verdict.text())
            if not verdict.fits_sram:
                from .fit import sram_advice

                print("\n".join(sram_advice(p, verdict)))
    return EXIT_OK if verdict is None or verdict.fits else EXIT_DOES_NOT_FIT


def cmd_boards(a: argparse.Namespace) -> int:
    from .boards import Board, list_boards

    boards = list_boards(include_host=True)
    if a.json:
        print(json.dumps([b.summary() for b in boards], indent=1))
        return EXIT_OK
    print(Board.header())
    for b in boards:
        print(b.line())
    return EXIT_OK


def cmd_build(a: argparse.Namespace) -> int:
    _no_emulator_on_host(a)
    model = a.model or str(EXAMPLE_MODEL)
    out = Path(a.output or f"build/{Path(model).stem}-{Path(a.board).stem}")
    p = api.plan(model)
    if a.board == "host":
        project = api.generate(p, out)
        from .build import build_host

        exe = build_host(project)
        write_json(project / "report.json", build_report(p, "host", "host", None, None))
        (project / "report.html").write_text(report_html(p, "host", None), encoding="utf-8")
        if a.json:
            print(json.dumps({"project": str(project), "exe": str(exe)}, indent=1))
        else:
            print(f"{project}: host build {exe.relative_to(project)}, report.json, report.html")
            print(f"arena {p.arena_bytes:,} B, weights {p.flash_bytes:,} B")
        return EXIT_OK
    vec = api.self_test_vector(p) if a.test_vector and not a.emulator else None
    res = api.build_board(p, a.board, out, emulator=a.emulator, test_inputs=vec)
    print(res.text() if not a.json else json.dumps(res.as_dict(), indent=1))
    return EXIT_OK


def cmd_run(a: argparse.Namespace) -> int:
    _no_emulator_on_host(a)
    if a.inputs and a.n is not None:
        raise UsageError("-n makes random inputs; it does not go with --inputs (drop one)")
    model = a.model or str(EXAMPLE_MODEL)
    from .boards import get_board

    get_board(a.board)  # an unknown board is refused before anything is built
    onnx_model = str(model).lower().endswith(".onnx")  # onnxruntime is its reference
    ref_name = "onnxruntime" if onnx_model else "TFLM"
    if not onnx_model:
        api.require_reference()
    g = api.plan(model).graph
    out_path = check_outputs(a.outputs, len(g.outputs)) if a.outputs else None
    notes: list[str] = []
    xs = None
    if a.inputs:
        given = api.user_inputs(g, load_inputs(a.inputs))
        xs, notes = given.arrays, given.notes
    n = a.n if a.n is not None else DEFAULT_SAMPLES
    r = api.compare(model, board=a.board, inputs=xs, n=n, seed=a.seed, layers=a.layers)
    if out_path is not None and r.refusal is None:
        save_outputs(out_path, [g.t(t).name for t in g.outputs], r.result.outputs)
    elif out_path is not None:
        notes.append(f"--outputs {a.outputs} not written: the run stopped at a refused input")
    d = {
        "model": model,
        "board": a.board,
        "emulator": a.board != "host",
        "samples": r.samples,
        "mismatches": r.mismatches,
        "output_mismatches": r.output_mismatches,
        "max_abs_diff": r.max_abs_diff,
        "bit_exact": r.ok,
        "refusal": r.refusal,
        "notes": notes,
    }
    if r.profile is not None:
        d.update(r.profile)
    if a.layers:
        d["layer_diffs"] = r.layers
        d["state_diffs"] = r.state  # variable tensors, after every input
    if a.json:
        print(json.dumps(d, indent=1))
    else:
        for note in notes:
            print(f"note: {note}")
        if r.build_text:
            print(r.build_text)
            print()
        if r.profile is not None:
            print(api.profile_table(r))
            print()
        verdict = f"bit-exact with {ref_name}" if r.ok else f"MISMATCH with {ref_name}"
        print(
            f"{verdict}: {r.samples} inputs, {r.output_mismatches} mismatching output bytes"
            + (f", {r.mismatches} in all layers" if a.layers else "")
            + (" and state" if a.layers and r.state else "")
            + f", max |diff| {r.max_abs_diff:g}"
        )
        if r.refusal is not None:
            print(("" if r.refusal_agrees else "MISMATCH with TFLM: ") + r.refusal["line"])
    if not r.ok:
        return EXIT_DOES_NOT_FIT
    if r.refusal is None:
        return EXIT_OK
    # both refused the same input at the same op: the input is outside what the model accepts
    print(f"tinycompile: {model}: {r.refusal['line']}", file=sys.stderr)
    return EXIT_MISTAKE


def cmd_flash(a: argparse.Namespace) -> int:
    from .flash import FlashOptions, Timeouts, flash

    if not 0 < a.wait <= 120:
        raise UsageError("flash: --wait takes 0 < SECONDS <= 120")
    if a.baud is not None and not 1200 <= a.baud <= 4_000_000:
        raise UsageError(f"flash: --baud {a.baud} is not a serial baud rate")
    opts = FlashOptions(
        port=a.port,
        baud=a.baud,
        go=not a.no_go,
        boot_lines=a.boot_lines,
        touch=not a.no_touch,
        bootloader_port=a.bootloader_port,
        drive=a.drive,
        timeouts=Timeouts(reappear=a.wait),
    )
    print(flash(a.target, a.board, opts, a.method))
    return EXIT_OK


def cmd_validate(a: argparse.Namespace) -> int:
    if a.inputs and a.n is not None:
        raise UsageError("-n makes random inputs; it does not go with --inputs (drop one)")
    if not a.timeout > 0:
        raise UsageError(f"--timeout must be positive (seconds), got {a.timeout:g}")
    if a.connect_timeout is not None and not 0 <= a.connect_timeout <= 3600:
        raise UsageError(f"--connect-timeout takes 0..3600 seconds, got {a.connect_timeout:g}")
    from .validate.command import validate_command

    api.plan(a.model)  # a model that cannot be compiled is refused here (exit 2)
    api.require_reference()
    n = a.n if a.n is not None else DEFAULT_SAMPLES
    ok = validate_command(
        a.model, a.board, a.port, inputs_file=a.inputs, n=n, seed=a.seed, layers=a.layers,
        timeout_s=a.timeout, as_json=a.json, connect_s=a.connect_timeout,
    )  # fmt: skip
    return EXIT_OK if ok else EXIT_DOES_NOT_FIT


def cmd_emulate(a: argparse.Namespace) -> int:
    from .validate.command import emulate_command

    emulate_command(a.build_dir, a.board)
    return EXIT_OK


COMMANDS = {
    "check": cmd_check,
    "plan": cmd_plan,
    "build": cmd_build,
    "run": cmd_run,
    "validate": cmd_validate,
    "emulate": cmd_emulate,
    "boards": cmd_boards,
    "flash": cmd_flash,
}


def _fail(line: str, code: int, as_json: bool) -> int:
    """Report a failure: one line on stderr, and a JSON object on stdout under --json."""
    if as_json:
        try:
            print(json.dumps({"error": line, "exit_code": code}))
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_to_devnull()
    print(f"tinycompile: {line}", file=sys.stderr)
    return code


def _stdout_to_devnull() -> None:
    """After a broken pipe, send what is left of stdout nowhere (no error at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    from .procs import handle_signals  # SIGINT/SIGTERM: stop children, clean up, 130/143

    handle_signals()
    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    try:
        a = _parser().parse_args(args)
        code = COMMANDS[a.cmd](a)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _stdout_to_devnull()
        return _fail("output closed early (broken pipe); nothing more written", 2, False)
    except DoesNotFit as e:
        return _fail(str(e), EXIT_DOES_NOT_FIT, as_json)
    except DeviceError as e:
        return _fail(str(e), EXIT_DEVICE, as_json)
    except CompileError as e:
        return _fail(str(e), EXIT_MISTAKE, as_json)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED, as_json)
    except Exception as e:  # a bug in tinycompile, not in the user's input
        if os.environ.get("TINYCOMPILE_DEBUG"):
            raise
        line = f"internal error: {type(e).__name__}: {e} (set TINYCOMPILE_DEBUG=1 for a traceback)"
        return _fail(" ".join(line.split()), EXIT_INTERNAL, as_json)


if __name__ == "__main__":
    sys.exit(main())
