"""Host C builds (the cross builds for boards live in firmware.py).

The host build compiles the same kernel sources as the firmware with the machine's C compiler,
which makes bit-exact testing fast. It is reproducible: no absolute paths or timestamps enter
the binary beyond what the compiler itself adds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .. import procs
from ..errors import ToolchainError

HOST_CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]


def host_cc() -> str:
    """The host C compiler ($CC, default cc); ToolchainError when it is missing."""
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise ToolchainError(f"host C compiler '{cc}' not found: install gcc (apt-get install gcc)")
    return cc


def runtime_sources(project: Path) -> list[Path]:
    """The project's kernel sources and the file runner (the host main comes apart)."""
    rt = project / "runtime"
    return sorted((rt / "kernels").glob("*.c")) + [rt / "runtime" / "tc_runner.c"]


def build_host(
    project: Path, *, debug_layers: bool = False, profile: bool = False, name: str = "tc_host"
) -> Path:
    """Compile the generated project for the host; returns the executable's path."""
    project = Path(project)
    srcs = sorted((project / "model").glob("*.c")) + runtime_sources(project)
    srcs.append(project / "runtime" / "runtime" / "tc_main_host.c")
    defs = (["-DTC_DEBUG_LAYERS"] if debug_layers else []) + (["-DTC_PROFILE"] if profile else [])
    exe = project / "build" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{name}.tmp")  # renamed when complete: never a half-written exe
    cmd = [
        host_cc(),
        *HOST_CFLAGS,
        *defs,
        f"-ffile-prefix-map={project}=.",
        "-I",
        str(project / "model"),
        "-I",
        str(project / "runtime" / "include"),
        *map(str, srcs),
        "-o",
        str(tmp),
    ]
    try:
        r = procs.run(cmd, text=True, timeout_s=600)
        if r.returncode != 0:
            raise ToolchainError(f"host compile failed:\n{r.stderr.strip()[:4000]}")
        os.replace(tmp, exe)
    except subprocess.TimeoutExpired:
        raise ToolchainError("host compile timed out after 600 s") from None
    finally:
        tmp.unlink(missing_ok=True)
    return exe
