"""Output folders: a generated project is written (and, with `staged`, built) in a temporary
sibling folder and moved into place, and only an earlier generated project or an empty folder
is ever replaced."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import procs
from .codegen import write_project
from .errors import CompileError
from .pipeline import Plan


@dataclass(frozen=True)
class Stage:
    """A project being built in `path`, a temporary sibling of its destination `out`."""

    path: Path
    out: Path


@contextmanager
def _staging(out_dir: str | Path, marker: str, what: str) -> Iterator[Stage]:
    """A temporary sibling of ``out_dir`` to fill, moved into place when the block ends
    normally (`replace_dir`), removed on any exception (an interruption included); the
    destination is checked first (`_check_output`)."""
    out = Path(out_dir).resolve()
    _check_output(out, marker, what)
    tmp: Path | None = None
    try:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        except OSError as e:
            raise CompileError(f"cannot write output folder {out}: {e.strerror or e}") from None
        yield Stage(tmp, out)
        try:
            with procs.deferred():  # an interruption waits for the swap to finish
                replace_dir(tmp, out)
        except OSError as e:
            raise CompileError(f"cannot write output folder {out}: {e.strerror or e}") from None
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def staged(p: Plan, out_dir: str | Path) -> Iterator[Stage]:
    """Generate the C project for ``p`` into a temporary sibling of ``out_dir`` and yield it.

    The block may build in it (a firmware build); when the block ends normally the folder is
    moved into place (`replace_dir`). On any exception, an interruption included, it is removed
    and ``out_dir`` is left as it was: never a half project. Only an earlier generated project or
    an empty folder is ever replaced: a file, a folder of other files, or the current folder (or
    one of its parents) is refused.
    """
    with _staging(out_dir, "model/tc_model.h", "a tinycompile project") as stage:
        try:
            write_project(p, stage.path)
        except OSError as e:
            raise CompileError(
                f"cannot write output folder {stage.out}: {e.strerror or e}"
            ) from None
        yield stage


def generate(p: Plan, out_dir: str | Path) -> Path:
    """Write the C project for a planned model into ``out_dir`` atomically; returns the folder.

    The project is written to a temporary sibling folder and moved into place at the end, so an
    interrupted or failed generation never leaves a folder that looks like a valid one, and an
    earlier project in ``out_dir`` stays as it was (see `staged` for what may be replaced).
    """
    with staged(p, out_dir) as stage:
        pass
    return stage.out


def _check_output(out: Path, marker: str, what: str) -> None:
    """Refuse output folders whose replacement would destroy something that is not ours (ours:
    empty, or holding ``marker``)."""
    if out == Path.cwd().resolve() or out in Path.cwd().resolve().parents:
        raise CompileError(f"output folder {out} is the current folder or contains it")
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir():
        raise CompileError(f"output path {out} exists and is not a folder")
    if any(out.iterdir()) and not (out / marker).is_file():
        raise CompileError(f"output folder {out} exists and is not {what}; refusing to replace it")


def write_folder(files: dict[str, bytes], out_dir: str | Path, marker: str, what: str) -> Path:
    """Write ``files`` (relative path -> bytes) as the folder ``out_dir``, atomically as
    `staged` does; only an empty folder or one holding ``marker`` (one of ``files``: it says the
    folder is ours) is replaced."""
    with _staging(out_dir, marker, what) as stage:
        try:
            for rel, data in sorted(files.items()):
                path = stage.path / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        except OSError as e:
            raise CompileError(
                f"cannot write output folder {stage.out}: {e.strerror or e}"
            ) from None
    return stage.out


def replace_dir(src: Path, dst: Path) -> None:
    """Move ``src`` to ``dst``, replacing an existing ``dst`` (renames only, same filesystem).

    If the final rename fails, the previous ``dst`` is put back."""
    if dst.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".old", dir=dst.parent))
        os.replace(dst, old)
        try:
            os.replace(src, dst)
        except BaseException:
            os.replace(old, dst)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, dst)
