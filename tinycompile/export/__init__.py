"""`tinycompile export`: a planned model as a library for the user's own firmware.

The folder holds the model's generated C under a prefix of the user's (every external symbol,
macro and file name: several models link into one program), only the kernels the model needs on
the board's core (``kernels.used_kernels``), the headers they read, a README with the API and a
usage example, and the build file of the format:

- ``cmake``: ``CMakeLists.txt`` defining the static library target ``<prefix>`` (public
  include/, private src/), for ``add_subdirectory()``;
- ``arduino``: an Arduino library (``library.properties``, everything in ``src/``, an example
  sketch in ``examples/<prefix>_basic/``);
- ``zephyr``: a Zephyr module (``zephyr/module.yml``, ``CMakeLists.txt`` adding the sources to a
  ``zephyr_library`` when ``CONFIG_<PREFIX>`` is set, ``Kconfig``);
- ``plain``: include/ and src/ and the README, for any other build.

No board start-up, clock, console or timer code goes in: the user's firmware has its own. The
build flags are the user's; the kernels were chosen for the board's core (its fast paths) and
compile at every optimization level. Like a build, the folder is written beside its destination
and moved into place whole; only an earlier export or an empty folder is replaced.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import tinycompile

from ..boards import Board, get_board
from ..build.templates import template_env
from ..codegen import PREFIX, c_comment, render_model
from ..errors import CompileError
from ..outdir import write_folder
from ..paths import FIRMWARE_DIR, TEMPLATES_DIR
from ..pipeline import Plan
from .kernels import included_headers, used_kernels

FORMATS = ("cmake", "arduino", "zephyr", "plain")
MANIFEST = "tinycompile_export.json"


def default_prefix(model: str | Path) -> str:
    """A prefix from the model's file name: lower case, [a-z0-9_], a letter first, <= 31."""
    stem = re.sub(r"[^a-z0-9]+", "_", Path(model).stem.lower()).strip("_")
    if not stem:
        return "model"
    if not stem[0].isalpha():
        stem = "m_" + stem
    return stem[:31].rstrip("_")


@dataclass(frozen=True)
class ExportResult:
    """What `export_library` wrote."""

    out: Path
    fmt: str
    prefix: str
    board: str
    core: str
    kernels: list[str]
    files: list[str]
    arena_bytes: int
    state_bytes: int
    flash_bytes: int
    caller_arena: bool

    def as_dict(self) -> dict:
        return {
            "out": str(self.out),
            "format": self.fmt,
            "prefix": self.prefix,
            "board": self.board,
            "core": self.core,
            "kernels": self.kernels,
            "files": self.files,
            "arena_bytes": self.arena_bytes,
            "state_bytes": self.state_bytes,
            "const_bytes": self.flash_bytes,
            "arena": "caller" if self.caller_arena else "static",
        }

    def text(self) -> str:
        arena = (
            f"the caller's ({self.prefix}_init)" if self.caller_arena else "static (TC_ARENA_ATTR)"
        )
        return "\n".join(
            [
                f"{self.out}: {self.fmt} library '{self.prefix}' for {self.core} ({self.board})",
                f"  arena {self.arena_bytes:,} B, {arena}; state {self.state_bytes:,} B; "
                f"const data {self.flash_bytes:,} B",
                f"  {len(self.kernels)} kernel files: {', '.join(self.kernels)}",
                f"  API and example: {self.out / 'README.md'}",
            ]
        )


def export_library(
    p: Plan,
    board: str | Board,
    out_dir: str | Path,
    *,
    fmt: str = "cmake",
    prefix: str | None = None,
    caller_arena: bool = False,
) -> ExportResult:
    """Write the library folder of planned model ``p`` for ``board``'s core into ``out_dir``."""
    if fmt not in FORMATS:
        raise CompileError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
    b = get_board(board)
    ns = prefix if prefix is not None else default_prefix(p.graph.source or p.graph.name)
    if not PREFIX.fullmatch(ns):
        raise CompileError(
            f"prefix {ns!r}: lower-case letters, digits and _, at most 31, a letter first"
        )
    model_files = render_model(p, ns, caller_arena=caller_arena)
    kernels = used_kernels(model_files, b)
    kernel_paths = [FIRMWARE_DIR / "kernels" / k for k in kernels]
    api_headers = sorted((FIRMWARE_DIR / "include").glob("*.h"))  # the model's C reads them all
    headers = sorted({*api_headers, *included_headers([*kernel_paths, *api_headers])})
    core = b.core or "host"
    out = Path(out_dir).resolve()
    public = {f"{ns}_model.h", "tc_types.h"}
    flat = fmt == "arduino"
    files: dict[str, bytes] = {}
    for rel, text in model_files.items():
        name = Path(rel).name
        where = "src" if flat or name not in public else "include"
        files[f"{where}/{name}"] = text.encode("ascii")
    for path in [*kernel_paths, *headers]:
        where = "src" if flat or path.name not in public else "include"
        files[f"{where}/{path.name}"] = path.read_bytes()
    sources = sorted(f for f in files if f.endswith(".c"))
    ctx = {
        "ns": ns,
        "NS": ns.upper(),
        "fmt": fmt,
        "board": b.name,
        "core": core,
        "version": tinycompile.__version__,
        "model": c_comment(Path(p.graph.source).name if p.graph.source else p.graph.name),
        "sha256": p.graph.sha256,
        "sources": sources,
        "kernels": kernels,
        "arena_bytes": max(p.arena_bytes, 8),
        "state_bytes": p.state_bytes,
        "flash_bytes": p.flash_bytes,
        "caller_arena": caller_arena,
        "inputs": len(p.graph.inputs),
        "outputs": len(p.graph.outputs),
        "include_dir": "src" if flat else "include",
    }
    env = template_env(TEMPLATES_DIR / "export")
    templates = {"README.md": "README.md.j2"}
    if fmt == "cmake":
        templates["CMakeLists.txt"] = "CMakeLists.txt.j2"
    elif fmt == "zephyr":
        templates["CMakeLists.txt"] = "zephyr_CMakeLists.txt.j2"
        templates["Kconfig"] = "Kconfig.j2"
        templates["zephyr/module.yml"] = "module.yml.j2"
    elif fmt == "arduino":
        templates["library.properties"] = "library.properties.j2"
        templates[f"examples/{ns}_basic/{ns}_basic.ino"] = "example.ino.j2"
    for rel, name in templates.items():
        files[rel] = env.get_template(name).render(**ctx).encode("utf-8")
    manifest = {k: ctx[k] for k in ("ns", "fmt", "board", "core", "version", "model", "sha256")}
    manifest["kernels"] = kernels
    files[MANIFEST] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    write_folder(files, out, MANIFEST, "a tinycompile export")
    return ExportResult(
        out,
        fmt,
        ns,
        b.name,
        core,
        kernels,
        sorted(files),
        max(p.arena_bytes, 8),
        p.state_bytes,
        p.flash_bytes,
        caller_arena,
    )
