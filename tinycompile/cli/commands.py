"""The commands: each takes the parsed arguments and returns the exit code."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from .. import api
from ..paths import EXAMPLE_MODEL
from ..report import build_report, plan_dict, plan_table, write_json
from ..run.files import check_outputs, load_inputs, save_outputs
from ..run.reference import ONNX_REFERENCE
from ..run.samples import to_user
from ..timeline import report_html, timeline_svg
from .args import (
    DEFAULT_SAMPLES,
    EXIT_DOES_NOT_FIT,
    EXIT_MISTAKE,
    EXIT_OK,
    UsageError,
)


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
    p = api.plan(
        a.model,
        reorder=not a.no_reorder,
        board=a.board,
        stream=a.stream,
        speed=a.speed_sram,
        int8_io=a.int8_io,
    )
    if a.svg:
        Path(a.svg).write_text(timeline_svg(p), encoding="utf-8")
    d = plan_dict(p)
    verdict = None
    latency = None
    if a.board:
        from ..fit import check_fit

        verdict = check_fit(p, a.board)
        d.update(verdict.as_dict())
        latency = (
            _latency(p, a.board) if verdict.fits else "latency: not estimated (it does not fit)"
        )
        if latency is not None:
            d["latency"] = latency if isinstance(latency, str) else latency.as_dict()
    if a.json:
        print(json.dumps(d, indent=1))
    else:
        print(plan_table(p))
        if verdict is not None:
            print()
            print(verdict.text())
            if not verdict.fits_sram:
                from ..fit import sram_advice

                print("\n".join(sram_advice(p, verdict)))
            if not verdict.fits_flash:
                from ..fit import flash_advice

                print("\n".join(flash_advice(p, verdict)))
            if not verdict.fits:
                from ..fit import boards_that_fit

                fit = boards_that_fit(p)
                names = ", ".join(fit) if fit else "none"
                line = f"listed boards this plan fits (SRAM and flash, estimate): {names}"
                print(textwrap.fill(line, 96, initial_indent="  ", subsequent_indent="  "))
        if latency is not None:
            print()
            print(latency if isinstance(latency, str) else latency.text())
    return EXIT_OK if verdict is None or verdict.fits else EXIT_DOES_NOT_FIT


def _latency(p: api.Plan, board: str) -> object | None:
    """The latency estimate of ``p`` on ``board`` (tinycompile/estimate/), or a line saying why
    there is none (the host, TINYCOMPILE_ESTIMATE=off, a missing tool); None for the host."""
    from ..boards import get_board
    from ..errors import CompileError
    from ..estimate import ENV, enabled, estimate

    b = get_board(board)
    if b.core is None:
        return None
    if not enabled():
        return f"latency: not estimated ({ENV}=off)"
    try:
        return estimate(p, b)
    except CompileError as e:  # ToolchainError, DoesNotFit included
        return f"latency: not estimated ({str(e).splitlines()[0]})"


def cmd_boards(a: argparse.Namespace) -> int:
    from ..boards import Board, list_boards

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
    p = api.plan(model, board=a.board, stream=a.stream, speed=a.speed_sram, int8_io=a.int8_io)
    if a.board == "host":
        project = api.generate(p, out)
        from ..build import build_host

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
    lat = _latency(p, a.board)
    if lat is not None and not isinstance(lat, str):  # into report.json and report.html
        report = json.loads((res.project / "report.json").read_text(encoding="utf-8"))
        report["latency"] = lat.as_dict()
        write_json(res.project / "report.json", report)
        html = report_html(p, report["board"], report["size"], report["latency"])
        (res.project / "report.html").write_text(html, encoding="utf-8")
    if a.json:
        print(json.dumps(res.as_dict(), indent=1))
    else:
        print(res.text())
        if lat is not None:
            print(lat if isinstance(lat, str) else lat.text().splitlines()[0])
    return EXIT_OK


def cmd_export(a: argparse.Namespace) -> int:
    from ..export import default_prefix, export_library

    prefix = a.prefix or default_prefix(a.model)
    out = Path(a.output or f"build/{prefix}-{a.fmt}")
    p = api.plan(a.model, board=a.board, stream=a.stream, speed=a.speed_sram, int8_io=a.int8_io)
    res = export_library(
        p, a.board, out, fmt=a.fmt, prefix=prefix, caller_arena=a.arena == "caller"
    )
    print(json.dumps(res.as_dict(), indent=1) if a.json else res.text())
    return EXIT_OK


def cmd_run(a: argparse.Namespace) -> int:
    _no_emulator_on_host(a)
    if a.inputs and a.n is not None:
        raise UsageError("-n makes random inputs; it does not go with --inputs (drop one)")
    model = a.model or str(EXAMPLE_MODEL)
    from ..boards import get_board

    get_board(a.board)  # an unknown board is refused before anything is built
    onnx_model = str(model).lower().endswith(".onnx")  # the numpy ONNX reference is its reference
    ref_name = ONNX_REFERENCE if onnx_model else "TFLM"
    if not onnx_model:
        api.require_reference()
    planned = api.plan(model, board=a.board, stream=a.stream, speed=a.speed_sram, int8_io=a.int8_io)
    g = planned.graph
    out_path = check_outputs(a.outputs, len(g.outputs)) if a.outputs else None
    notes: list[str] = []
    xs = None
    if a.inputs:
        xs = api.user_inputs(g, load_inputs(a.inputs))
        notes = xs.notes
        for w in xs.warnings:
            print(f"warning: {w}", file=sys.stderr)
    n = a.n if a.n is not None else DEFAULT_SAMPLES
    r = api.compare(
        model,
        board=a.board,
        inputs=xs,
        n=n,
        seed=a.seed,
        layers=a.layers,
        stream=a.stream,
        speed=a.speed_sram,
        int8_io=a.int8_io,
    )
    if out_path is not None and r.refusal is None:
        outs = [to_user(g, t, o) for t, o in zip(g.outputs, r.result.outputs, strict=True)]
        save_outputs(out_path, [g.t(t).name for t in g.outputs], outs)
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
        "second_opinion": r.second_opinion,  # ONNX: onnxruntime on the same run (docs/onnx.md)
        "notes": notes,
    }
    lat = _latency(planned, a.board) if r.profile is not None else None
    if r.profile is not None:
        d.update(r.profile)
        if lat is not None:
            d["latency"] = lat if isinstance(lat, str) else lat.as_dict()
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
            if lat is None or isinstance(lat, str):
                print(api.profile_table(r))
            else:
                line = (
                    f"estimated on {lat.board} ({lat.core}, {lat.clock_hz / 1e6:g} MHz): ~"
                    f"{lat.ms:.3g} ms per inference (+-{100 * lat.band:.0f}%:"
                    " docs/latency_calibration.md)"
                )
                print(api.profile_table(r, [la.ms for la in lat.layers], line))
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
        if (second := r.second_opinion_line()) is not None:
            print(second)
    if not r.ok:
        return EXIT_DOES_NOT_FIT
    if r.refusal is None:
        return EXIT_OK
    # both refused the same input at the same op: the input is outside what the model accepts
    print(f"tinycompile: {model}: {r.refusal['line']}", file=sys.stderr)
    return EXIT_MISTAKE


def cmd_flash(a: argparse.Namespace) -> int:
    from ..flash import FlashOptions, Timeouts, flash

    if not 0 < a.wait <= 120:
        raise UsageError("flash: --wait takes 0 < SECONDS <= 120")
    if a.baud is not None and not 1200 <= a.baud <= 4_000_000:
        raise UsageError(f"flash: --baud {a.baud} is not a serial baud rate")
    opts = FlashOptions(
        port=a.port,
        baud=a.baud,
        go=not a.no_go,
        boot_lines=a.boot_lines,
        touch=a.touch,
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
    if not 0.1 <= a.timeout_factor <= 100:
        raise UsageError(f"--timeout-factor takes 0.1..100, got {a.timeout_factor:g}")
    if a.connect_timeout is not None and not 0 <= a.connect_timeout <= 3600:
        raise UsageError(f"--connect-timeout takes 0..3600 seconds, got {a.connect_timeout:g}")
    from ..validate.command import validate_command

    if a.int8_io:  # (its session plans the model again, from the file: issue 21's note)
        raise UsageError("validate does not take --int8-io yet: validate the float interface")
    api.plan(a.model, board=a.board, stream=a.stream, speed=a.speed_sram)  # refused: exit 2
    if not str(a.model).lower().endswith(".onnx"):  # onnxruntime is an .onnx model's reference
        api.require_reference()
    n = a.n if a.n is not None else DEFAULT_SAMPLES
    ok = validate_command(
        a.model, a.board, a.port, inputs_file=a.inputs, n=n, seed=a.seed, layers=a.layers,
        timeout_s=a.timeout, as_json=a.json, connect_s=a.connect_timeout, stream=a.stream,
        speed=a.speed_sram, timeout_factor=a.timeout_factor,
    )  # fmt: skip
    return EXIT_OK if ok else EXIT_DOES_NOT_FIT


def cmd_emulate(a: argparse.Namespace) -> int:
    from ..validate.command import emulate_command

    if a.gdb is not None and not 1024 <= a.gdb <= 65535:
        raise UsageError(f"emulate: --gdb {a.gdb}: give a TCP port from 1024 to 65535")
    if a.build_dir is None and (a.gdb is None or a.board is None):
        raise UsageError("emulate: give a build folder, or --board and --gdb PORT (empty flash)")
    emulate_command(a.build_dir, a.board, a.gdb)
    return EXIT_OK


COMMANDS = {
    "check": cmd_check,
    "plan": cmd_plan,
    "build": cmd_build,
    "export": cmd_export,
    "run": cmd_run,
    "validate": cmd_validate,
    "emulate": cmd_emulate,
    "boards": cmd_boards,
    "flash": cmd_flash,
}
