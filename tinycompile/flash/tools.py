"""The programs the probe methods drive (OpenOCD, GDB for ARM): found on PATH, or a one-line
error naming the package that brings them."""

from __future__ import annotations

import os
import shutil

from ..errors import ToolchainError

# name(s) tried in order, the package to install, and the environment variable that overrides
TOOLS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "openocd": (("openocd",), "apt-get install openocd (Debian/Ubuntu)", "TINYCOMPILE_OPENOCD"),
    "gdb": (
        ("gdb-multiarch", "arm-none-eabi-gdb"),
        "apt-get install gdb-multiarch (Debian/Ubuntu; or Arm's arm-none-eabi-gdb)",
        "TINYCOMPILE_GDB",
    ),
}


def find_tool(tool: str) -> str:
    """The path of ``tool`` (a key of TOOLS); ToolchainError with the install line if absent."""
    names, package, env = TOOLS[tool]
    given = os.environ.get(env)
    if given:
        path = shutil.which(given)
        if path is None:
            raise ToolchainError(f"{env}={given}: no such program")
        return path
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    raise ToolchainError(f"{' or '.join(names)} not found on PATH: {package}")
