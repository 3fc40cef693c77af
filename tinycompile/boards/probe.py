"""The optional ``[probe]`` table of a board file: the debug probe its users flash it through
(an on-board ST-LINK, DAPLink, J-Link OB or EDBG; a Raspberry Pi Debug Probe), for the
`tinycompile flash` methods openocd, gdb and probe-drive.

[probe]
openocd = ["board/stm32f7discovery.cfg"]   # OpenOCD's own scripts (-f) and commands (-c), in
                                           # order: an entry ending in .cfg is a script
gdb_port = 3333                            # the GDB server's default port (OpenOCD, pyOCD)
drive_label = "DIS_F746NG"                 # the probe's USB drive (ST-LINK/V2-1, DAPLink)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import CompileError
from .spec import ProbeSpec

_KEYS = {"openocd", "gdb_port", "drive_label"}
# OpenOCD script paths and commands: no quotes, braces, brackets, $ or ; (a board file names
# them; they reach OpenOCD's Tcl as written)
_OPENOCD = re.compile(r"[A-Za-z0-9 _./+=-]{1,80}")
_LABEL = re.compile(r"[A-Za-z0-9 _-]{1,32}")


def _fail(source: Path, key: str, why: str) -> CompileError:
    return CompileError(f"field 'probe.{key}': {why}", source=str(source))


def parse_probe(raw: Any, source: Path) -> ProbeSpec:
    """Validate ``[probe]``; errors name the file and the field."""
    if not isinstance(raw, dict):
        raise _fail(source, "", "expected a table")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise _fail(source, unknown[0], "unknown field")
    ocd = raw.get("openocd", [])
    if not isinstance(ocd, list) or not all(
        isinstance(x, str) and _OPENOCD.fullmatch(x) for x in ocd
    ):
        raise _fail(source, "openocd", "expected an array of OpenOCD script paths and commands")
    port = raw.get("gdb_port", 3333)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise _fail(source, "gdb_port", f"expected a TCP port, got {port!r}")
    label = raw.get("drive_label")
    if label is not None and (not isinstance(label, str) or not _LABEL.fullmatch(label)):
        raise _fail(source, "drive_label", f"{label!r} is not a volume label")
    return ProbeSpec(openocd=tuple(ocd), gdb_port=port, drive_label=label)
