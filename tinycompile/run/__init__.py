"""Running compiled models: on the host (host.py), in QEMU (emulator.py, board.py), against
the reference (reference.py, compare.py; tensors mapped by tensor_map.py), through the
tc_in.bin/tc_out.bin format (outformat.py defines it, ioformat.py reads it into results). The
rules: docs/harness.md."""

from __future__ import annotations

from .board import BoardBuild, build_board, run_board, self_test_vector
from .compare import CompareReport, compare_plan, diff
from .host import run_host
from .inputs import UserInputs, make_inputs, user_inputs
from .ioformat import NP_DTYPES, RunResult, pack_inputs, unpack_outputs
from .profile import profile_of, profile_table
from .reference import require_reference

__all__ = [
    "NP_DTYPES",
    "BoardBuild",
    "CompareReport",
    "RunResult",
    "UserInputs",
    "build_board",
    "self_test_vector",
    "compare_plan",
    "diff",
    "make_inputs",
    "pack_inputs",
    "profile_of",
    "profile_table",
    "require_reference",
    "run_board",
    "run_host",
    "unpack_outputs",
    "user_inputs",
]
