"""Host C builds (the cross builds for boards live in firmware.py).

The host build compiles the same kernel sources as the firmware with the machine's C compiler,
which makes bit-exact testing fast (the kernels' objects are kept between builds: objcache.py).
It is reproducible: no absolute paths or timestamps enter the binary beyond what the compiler
itself adds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .. import procs
from ..errors import ToolchainError
from .objcache import compile_cached, kernel_headers, object_key

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
    """Compile the generated project for the host; returns the executable's path. The kernels
    (the same for every model) come from the object cache when it has them (``objcache``); the
    model, the runner and the host main are compiled each time."""
    project = Path(project).resolve()
    rt = project / "runtime"
    kernels = sorted((rt / "kernels").glob("*.c"))
    srcs = sorted((project / "model").glob("*.c"))
    srcs += [s for s in runtime_sources(project) if s not in kernels]
    srcs.append(rt / "runtime" / "tc_main_host.c")
    defs = (["-DTC_DEBUG_LAYERS"] if debug_layers else []) + (["-DTC_PROFILE"] if profile else [])
    exe = project / "build" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    tmp = exe.with_name(f".{name}.tmp")  # renamed when complete: never a half-written exe
    objdir = exe.with_name(f".{name}.obj")
    cc = host_cc()
    try:
        objs = kernel_objects(cc, [*HOST_CFLAGS, *defs], project, kernels, objdir)
        cmd = [
            cc,
            *HOST_CFLAGS,
            *defs,
            f"-ffile-prefix-map={project}=.",
            "-I",
            str(project / "model"),
            "-I",
            str(rt / "include"),
            *map(str, srcs),
            *map(str, objs),
            "-o",
            str(tmp),
        ]
        r = procs.run(cmd, text=True, timeout_s=600)
        if r.returncode != 0:
            raise ToolchainError(f"host compile failed:\n{r.stderr.strip()[:4000]}")
        os.replace(tmp, exe)
    except subprocess.TimeoutExpired:
        raise ToolchainError("host compile timed out after 600 s") from None
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(objdir, ignore_errors=True)
    return exe


def kernel_objects(
    cc: str, flags: list[str], project: Path, kernels: list[Path], objdir: Path
) -> list[Path]:
    """The kernels' objects in ``objdir``, each compiled with ``cc flags`` in the project by its
    relative path (so that no path of the project enters it) or copied from the object cache
    (``objcache``). ToolchainError when one does not compile."""
    headers = kernel_headers(project)
    flags = [*flags, f"-ffile-prefix-map={project}=.", "-Iruntime/include"]
    objdir.mkdir(parents=True, exist_ok=True)
    objs = []
    for src in kernels:
        obj = objdir / f"{src.stem}.o"
        rel = str(src.relative_to(project))
        cmd = [cc, *flags, "-c", rel, "-o", str(obj)]

        def compile_it(cmd: list[str] = cmd) -> subprocess.CompletedProcess[str]:
            return procs.run(cmd, cwd=project, text=True, timeout_s=600)

        proc = compile_cached(object_key(cc, flags, src, headers, project), obj, compile_it)
        if proc.returncode != 0:
            raise ToolchainError(f"host compile failed:\n{proc.stderr.strip()[:4000]}")
        objs.append(obj)
    return objs
