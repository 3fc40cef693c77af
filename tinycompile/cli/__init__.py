"""Command line: tinycompile check | plan | build | export | run | flash | validate | emulate |
boards.

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

import json
import os
import sys

from ..errors import CompileError, DeviceError, DoesNotFit
from .args import EXIT_DEVICE, EXIT_DOES_NOT_FIT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_MISTAKE
from .args import parser as _parser
from .commands import COMMANDS


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
    from ..procs import handle_signals  # SIGINT/SIGTERM: stop children, clean up, 130/143

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
