"""Which kernel sources a model needs on a core: compiled for that core, read with nm.

A kernel file is needed when it defines a symbol that the model's code, or another needed
kernel file, leaves undefined. Objects are compiled with the core's flags at -O2 and at -O0 (a
kernel may take its portable path at -O0, where an inline-asm constraint cannot be met:
firmware/kernels/tc_kernel_util.h), and the two sets are joined, so the export builds at every
optimization level. Compiles go through the object cache (``build.objcache``) as a build's do.
Host exports (board ``host``) use the host compiler and its nm.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import procs
from ..boards import Board
from ..build.host import host_cc
from ..build.objcache import compile_cached, object_key
from ..build.toolchain import find_toolchain
from ..errors import ToolchainError
from ..paths import FIRMWARE_DIR

LEVELS = ("-O2", "-O0")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _tools(board: Board) -> tuple[str, str, list[str]]:
    """(C compiler, nm, core flags) for the board."""
    if board.core is None:
        cc = host_cc()
        nm = shutil.which("nm")
        if nm is None:
            raise ToolchainError("nm not found: install binutils (apt-get install binutils)")
        return cc, nm, []
    tools = find_toolchain()
    return tools["gcc"], tools["nm"], [*board.cpu_flags(), "-masm-syntax-unified"]


def _symbols(nm: str, obj: Path) -> tuple[set[str], set[str]]:
    """(defined external, undefined) symbols of an object."""
    r = procs.run([nm, "-P", str(obj)], text=True, timeout_s=120)
    if r.returncode != 0:
        raise ToolchainError(f"nm {obj.name}: {r.stderr.strip()[:500]}")
    defined, undefined = set(), set()
    for ln in r.stdout.splitlines():
        parts = ln.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def used_kernels(model_sources: dict[str, str], board: Board) -> list[str]:
    """File names (in firmware/kernels) of the .c kernels the model's sources need on the
    board's core, at every optimization level."""
    cc, nm, core = _tools(board)
    kernels = sorted((FIRMWARE_DIR / "kernels").glob("*.c"))
    headers = sorted(
        [*(FIRMWARE_DIR / "include").glob("*.h"), *(FIRMWARE_DIR / "kernels").glob("*.h")]
    )
    needed: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="tc-export-") as tmp:
        work = Path(tmp)
        for rel, text in model_sources.items():
            (work / Path(rel).name).write_text(text, encoding="ascii")
        model_c = sorted(work.glob("*.c"))
        for level in LEVELS:
            flags = [*core, "-std=c99", level, "-ffunction-sections", "-fdata-sections"]
            flags += [f"-I{FIRMWARE_DIR / 'include'}", f"-I{FIRMWARE_DIR / 'kernels'}"]
            objdir = work / level.lstrip("-")
            objdir.mkdir()

            def compile_one(
                src: Path, flags: list[str] = flags, objdir: Path = objdir, level: str = level
            ) -> Path:
                obj = objdir / f"{src.stem}.o"
                cmd = [cc, *flags, f"-I{work}", "-c", str(src), "-o", str(obj)]

                def run() -> subprocess.CompletedProcess[str]:
                    return procs.run(cmd, text=True, timeout_s=600)

                key = object_key(cc, flags, src, headers, FIRMWARE_DIR) if src in kernels else None
                proc = compile_cached(key, obj, run)
                if proc.returncode != 0:
                    why = proc.stderr.strip()[:3000]
                    raise ToolchainError(f"compiling {src.name} ({level}) for the export:\n{why}")
                return obj

            with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
                objs = list(pool.map(compile_one, [*model_c, *kernels]))
            table = {o: _symbols(nm, o) for o in objs}
            by_symbol = {}
            for src, obj in zip(kernels, objs[len(model_c) :], strict=True):
                for s in table[obj][0]:
                    by_symbol.setdefault(s, src.name)
            want = set().union(*(table[o][1] for o in objs[: len(model_c)]))
            seen: set[str] = set()
            while want:
                sym = want.pop()
                name = by_symbol.get(sym)
                if name is None or name in seen:
                    continue
                seen.add(name)
                want |= table[objdir / f"{Path(name).stem}.o"][1]
            needed |= seen
    return sorted(needed)


def included_headers(sources: list[Path]) -> list[Path]:
    """The firmware headers (include/ and kernels/) that ``sources`` include, transitively."""
    where = {h.name: h for d in ("include", "kernels") for h in (FIRMWARE_DIR / d).glob("*.h")}
    todo, found = list(sources), {}
    while todo:
        for name in _INCLUDE.findall(todo.pop().read_text(encoding="utf-8")):
            if name in where and name not in found:
                found[name] = where[name]
                todo.append(where[name])
    return sorted(found.values())
