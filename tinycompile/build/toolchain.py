"""The arm-none-eabi toolchain: finding its tools, running one, and turning a failure into a
one-line ToolchainError (naming a missing newlib when that is the cause)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .. import procs
from ..errors import ToolchainError

INSTALL_HINT = (
    "install the GNU Arm Embedded toolchain and newlib "
    "(Debian/Ubuntu: apt install gcc-arm-none-eabi libnewlib-arm-none-eabi)"
)
TOOLS = ("gcc", "objcopy", "size", "nm", "objdump")


def find_toolchain() -> dict[str, str]:
    """Paths of arm-none-eabi-{gcc,objcopy,size,nm,objdump}; ToolchainError (one line) when
    missing."""
    tools: dict[str, str] = {}
    for t in TOOLS:
        path = shutil.which(f"arm-none-eabi-{t}")
        if path is None:
            raise ToolchainError(f"arm-none-eabi-{t} not found on PATH: {INSTALL_HINT}")
        tools[t] = path
    return tools


def run_tool(
    cmd: Sequence[str], cwd: Path, what: str, tmpdir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a tool in `cwd` (a tracked child, see procs), capturing its text output;
    ToolchainError if it cannot start.

    `tmpdir`: the tool's TMPDIR. gcc's driver names its temporary files before it records them
    for deletion, so a signal between the two leaves one behind: a build gives its compilers a
    folder of its own, removed with the build's staging folder."""
    env = None if tmpdir is None else {**os.environ, "TMPDIR": str(tmpdir)}
    try:
        return procs.run(cmd, cwd=cwd, text=True, env=env)
    except FileNotFoundError:
        raise ToolchainError(f"{cmd[0]} not found: {INSTALL_HINT}") from None
    except OSError as e:
        raise ToolchainError(f"{what}: cannot run {cmd[0]}: {e}") from None


def tool_failure(proc: subprocess.CompletedProcess[str], what: str) -> ToolchainError:
    """The one-line error for a failed tool run (its full output kept in `.output`)."""
    text = proc.stderr + proc.stdout
    if re.search(
        r"(stdint\.h|stdio\.h|string\.h|stdlib\.h): No such file|"
        r"(nano|rdimon)\.specs|cannot find -l(c|c_nano|rdimon)",
        text,
    ):
        return ToolchainError(f"{what}: newlib for arm-none-eabi is missing: {INSTALL_HINT}")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
    err = ToolchainError(f"{what} failed: {first}")
    err.output = text  # type: ignore[attr-defined]
    return err
