"""Command line: tinycompile plan | build | run | boards.

Exit codes: 0 success; 1 the model does not fit the board, or outputs differ from the reference;
2 bad input (model, board file, options) or a tool failure, reported as one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from . import api
from .errors import CompileError, DoesNotFit
from .paths import EXAMPLE_MODEL
from .report import plan_dict, plan_table

DEFAULT_BOARD = "stm32f746"


def _model_arg(p: argparse.ArgumentParser, required: bool = True) -> None:
    if required:
        p.add_argument("model", help="model file (.tflite)")
    else:
        p.add_argument(
            "model",
            nargs="?",
            default=None,
            help="model file (.tflite); default: the bundled example",
        )


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinycompile", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("plan", help="plan memory and report per-layer costs")
    _model_arg(p)
    p.add_argument("--board", help="check the plan against this board's SRAM and flash")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-reorder", action="store_true", help="keep the model's op order")

    p = sub.add_parser("build", help="generate C and compile it for a board (or the host)")
    _model_arg(p, required=False)
    p.add_argument(
        "--board", default=DEFAULT_BOARD, help=f"board name or file (default {DEFAULT_BOARD})"
    )
    p.add_argument("-o", "--output", help="output folder (default: build/<model>-<board>)")
    p.add_argument("--emulator", action="store_true", help="build the QEMU variant of the board")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("run", help="build, run, and compare with TensorFlow Lite Micro")
    _model_arg(p, required=False)
    p.add_argument("--board", default=DEFAULT_BOARD)
    p.add_argument("--emulator", action="store_true", help="run the board build in QEMU")
    p.add_argument(
        "--inputs", help=".npy (one input, batch on axis 0) or .npz (one array per input)"
    )
    p.add_argument("--outputs", help="write what the compiled code produced (.npy or .npz)")
    p.add_argument("-n", type=int, default=20, help="random inputs when --inputs is absent")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", action="store_true", help="also compare every intermediate tensor")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("boards", help="list the known boards")
    p.add_argument("--json", action="store_true")
    return ap


def _load_inputs(path: str, g) -> list[np.ndarray]:
    try:
        if path.endswith(".npz"):
            with np.load(path) as z:
                keys = list(z.keys())
                return [z[k] for k in keys]
        return [np.load(path)]
    except (OSError, ValueError) as e:
        raise CompileError(f"cannot read inputs: {e}", source=path) from None


def _save_outputs(path: str, outs: list[np.ndarray]) -> None:
    if path.endswith(".npz") or len(outs) > 1:
        np.savez(path, *outs)
    else:
        np.save(path, outs[0])


def cmd_plan(a: argparse.Namespace) -> int:
    p = api.plan(a.model, reorder=not a.no_reorder)
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
    return 0 if verdict is None or verdict.fits else 1


def cmd_boards(a: argparse.Namespace) -> int:
    from .boards import list_boards

    boards = list_boards()
    if a.json:
        print(json.dumps([b.summary() for b in boards], indent=1))
        return 0
    for b in boards:
        print(b.line())
    return 0


def cmd_build(a: argparse.Namespace) -> int:
    model = a.model or str(EXAMPLE_MODEL)
    out = Path(a.output or f"build/{Path(model).stem}-{Path(a.board).stem}")
    p = api.plan(model)
    if a.board == "host":
        project = api.generate(p, out)
        from .build import build_host

        exe = build_host(project)
        print(f"{project}: host build {exe.relative_to(project)}")
        print(f"arena {p.arena_bytes:,} B, weights {p.flash_bytes:,} B")
        return 0
    res = api.build_board(p, a.board, out, emulator=a.emulator)
    print(res.text() if not a.json else json.dumps(res.as_dict(), indent=1))
    return 0


def cmd_run(a: argparse.Namespace) -> int:
    model = a.model or str(EXAMPLE_MODEL)
    if a.board != "host" and not a.emulator:
        raise CompileError(f"board '{a.board}': runs need --emulator (QEMU), or use --board host")
    g = api.plan(model).graph
    xs = _load_inputs(a.inputs, g) if a.inputs else None
    r = api.compare(model, board=a.board, inputs=xs, n=a.n, seed=a.seed, layers=a.layers)
    if a.outputs:
        _save_outputs(a.outputs, r.result.outputs)
    d = {
        "model": model,
        "board": a.board,
        "samples": r.samples,
        "mismatches": r.mismatches,
        "output_mismatches": r.output_mismatches,
        "max_abs_diff": r.max_abs_diff,
        "bit_exact": r.ok,
    }
    if r.profile is not None:
        d.update(r.profile)
    if a.layers:
        d["layer_diffs"] = r.layers
    if a.json:
        print(json.dumps(d, indent=1))
    else:
        if r.build_text:
            print(r.build_text)
            print()
        if r.profile is not None:
            print(api.profile_table(r))
            print()
        verdict = "bit-exact with TFLM" if r.ok else "MISMATCH with TFLM"
        print(
            f"{verdict}: {r.samples} inputs, {r.output_mismatches} mismatching output bytes"
            + (f", {r.mismatches} in all layers" if a.layers else "")
            + f", max |diff| {r.max_abs_diff:g}"
        )
    return 0 if r.ok else 1


def main(argv: list[str] | None = None) -> int:
    from .procs import handle_signals  # SIGINT/SIGTERM: stop children, clean up, 130/143

    handle_signals()
    a = _parser().parse_args(argv)
    try:
        return {"plan": cmd_plan, "build": cmd_build, "run": cmd_run, "boards": cmd_boards}[a.cmd](
            a
        )
    except DoesNotFit as e:
        print(f"tinycompile: {e}", file=sys.stderr)
        return 1
    except CompileError as e:
        print(f"tinycompile: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tinycompile: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug in tinycompile, not in the user's input
        if os.environ.get("TINYCOMPILE_DEBUG"):
            raise
        print(
            f"tinycompile: internal error: {type(e).__name__}: {e} "
            "(set TINYCOMPILE_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 70


if __name__ == "__main__":
    sys.exit(main())
