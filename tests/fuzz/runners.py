"""The case runners: one model or one board file through the compiler, the way the CLI uses
it, with the outcome classified as ok, rejected (a clean CompileError) or fail.

They run in the worker process (worker.py) or, to replay one case, in-process.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from .checks import check_board_output, check_message, check_plan, check_sources
from .sanitizer_build import build_and_run
from .verdicts import certainly_invalid

ROOT = Path(__file__).resolve().parents[2]


def run_model_case(path: str, build: bool = False, seed: int = 0) -> dict[str, Any]:
    """Compile one model (.tflite or .onnx) as far as it goes; classify the outcome (a model
    that compiles although it is certainly invalid, ``verdicts``, is a failure)."""
    from tinycompile import api
    from tinycompile.codegen import render_model
    from tinycompile.errors import CompileError
    from tinycompile.fit import check_fit
    from tinycompile.report import plan_dict, plan_table

    try:
        p = api.plan(path)
        json.dumps(plan_dict(p))
        plan_table(p)
        verdict = check_fit(p, "stm32f746")  # what `plan --board` prints
        verdict.text()
        json.dumps(verdict.as_dict())
        files = render_model(p)  # may still refuse the plan (CompileError)
        bad = check_plan(p)
        if bad:
            return {"status": "fail", "kind": "unsafe plan", "detail": bad}
        bad = check_sources(files)
        if bad:
            return {"status": "fail", "kind": "unsafe output", "detail": bad}
        bad = certainly_invalid(path)
        if bad:
            return {"status": "fail", "kind": "accepted invalid model", "detail": bad}
        if build:
            bad = build_and_run(p, seed)
            if bad:
                return {"status": "fail", "kind": "unsafe program", "detail": bad}
        return {"status": "ok", "ops": len(p.order)}
    except CompileError as e:
        bad = check_message(e, path)
        if bad:
            return {"status": "fail", "kind": "bad message", "detail": bad}
        return {"status": "rejected", "reason": e.reason}
    except MemoryError:
        return {"status": "fail", "kind": "MemoryError", "detail": traceback.format_exc()}
    except RecursionError:
        tb = traceback.format_exc()[-3000:]
        return {"status": "fail", "kind": "RecursionError", "detail": tb}
    except Exception as e:  # noqa: BLE001 - any other exception is the bug we hunt
        return {"status": "fail", "kind": type(e).__name__, "detail": traceback.format_exc()}


_PLANS: list[Any] = []  # the example model's plan, made once per process
_BOARD_RUNTIME: list[Path] = []  # one runtime copy for all the scratch board projects


def _digits_plan() -> Any:
    from tinycompile import api

    if not _PLANS:
        _PLANS.append(api.plan(ROOT / "examples" / "digits.tflite"))
    return _PLANS[0]


def _board_project() -> Path:
    """A scratch project (model stub + runtime link) for rendering one board's files."""
    from tinycompile.paths import FIRMWARE_DIR

    if not _BOARD_RUNTIME:
        _BOARD_RUNTIME.append(Path(tempfile.mkdtemp(prefix="tc_fuzz_rt_")))
        shutil.copytree(FIRMWARE_DIR, _BOARD_RUNTIME[0] / "runtime")
    proj = Path(tempfile.mkdtemp(prefix="tc_fuzz_bp_"))
    (proj / "model").mkdir()
    (proj / "model" / "tc_model.c").write_text("/* stub */\n")
    (proj / "runtime").symlink_to(_BOARD_RUNTIME[0] / "runtime")
    return proj


def remove_board_runtime() -> None:
    """Remove the runtime copy behind the scratch board projects (the worker does it at exit)."""
    for d in _BOARD_RUNTIME:
        shutil.rmtree(d, ignore_errors=True)


def run_board_case(path: str) -> dict[str, Any]:
    """Read one board file and use it the way the CLI does: list it, check a fit, render its
    linker scripts, header and Makefile."""
    from tinycompile import fit
    from tinycompile.boards import load_board_file
    from tinycompile.build import render_board_files
    from tinycompile.errors import CompileError

    proj = None
    try:
        board = load_board_file(Path(path))
        json.dumps(board.summary())
        board.line()
        board.cpu_flags()
        verdict = fit.check_fit(_digits_plan(), board)  # what `plan --board FILE` prints
        verdict.text()
        json.dumps(verdict.as_dict())
        for arena, flash in ((1000, 1000), (1 << 31, 0), (0, 1 << 40)):
            v = replace(
                verdict,
                arena=arena,
                sram_need=arena + verdict.stack,
                weights=flash,
                flash_need=flash,
            )
            try:
                fit.raise_if_too_big(v, source="m.tflite")
            except CompileError as e:  # DoesNotFit
                bad = check_message(e, "m.tflite")
                if bad:
                    return {"status": "fail", "kind": "bad message", "detail": bad}
        proj = _board_project()
        try:
            render_board_files(proj, board)
        except CompileError as e:
            # raised after loading: the message names the board rather than the file
            if "\n" in str(e) or (path not in str(e) and board.name not in str(e)):
                return {
                    "status": "fail",
                    "kind": "bad message",
                    "detail": f"neither file nor board named: {str(e)[:300]!r}",
                }
            return {"status": "rejected", "reason": e.reason}
        bad = check_board_output(proj, board, path)
        if bad:
            return {"status": "fail", "kind": "unsafe board output", "detail": bad}
        return {"status": "ok"}
    except CompileError as e:
        bad = check_message(e, path)
        if bad:
            return {"status": "fail", "kind": "bad message", "detail": bad}
        return {"status": "rejected", "reason": e.reason}
    except MemoryError:
        return {"status": "fail", "kind": "MemoryError", "detail": traceback.format_exc()}
    except Exception as e:  # noqa: BLE001
        return {"status": "fail", "kind": type(e).__name__, "detail": traceback.format_exc()}
    finally:
        if proj is not None:
            shutil.rmtree(proj, ignore_errors=True)
