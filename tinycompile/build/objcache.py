"""Compiled kernel objects, kept between builds (a small ccache of our own).

Every generated project carries the same kernel sources, and compiling them is most of a build
(a host build: about 3 s of 3.5; a Cortex-M build: about 2 s of 2.5). A kernel's object depends
only on the compiler, the flags and the bytes of its source and of the headers it reads, never
on the model, so ``compile_cached`` keeps each object under such a key and copies it into the
project the next time:

- key: sha256 of the compiler's identity (resolved path and ``--version``), the flags (but
  ``-ffile-prefix-map``, whose only effect is to keep the project's path out of the object), the
  source's path relative to the folder the compiler runs in, and the name and bytes of the
  source and of every header given;
- safe by construction: a source (or one of those headers) that includes a header not among
  them is compiled every time, never cached;
- the object is compiled in the project, in its usual place, by the usual command, so the
  cached copy is byte for byte what that command makes (the project's Makefile reproduces it);
  the compiler's warnings are kept with it and reported again on every hit;
- place: ``$TINYCOMPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tinycompile`` or
  ``~/.cache/tinycompile``, then ``objects/``; ``TINYCOMPILE_CACHE_DIR=off`` disables it, and a
  folder that cannot be written means no cache. Entries are written to a private name and
  renamed into place, so concurrent builds never read half an object. The oldest entries are
  dropped beyond ``MAX_ENTRIES``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

CACHE_ENV = "TINYCOMPILE_CACHE_DIR"
MAX_ENTRIES = 2000  # objects (about 20 KB each); the oldest go first
_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.M)


def cache_dir() -> Path | None:
    """The objects' folder (not created here), or None when the cache is disabled."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return None if given == "off" else Path(given) / "objects"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tinycompile" / "objects"


@lru_cache(maxsize=8)
def _compiler_id(cc: str) -> str:
    path = shutil.which(cc) or cc
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        version = r.stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""  # unknown compiler: no key, no cache
    return f"{os.path.realpath(path)}\n{version}"


def kernel_headers(project: Path) -> list[Path]:
    """Every header a project's kernel source may read (runtime/include and runtime/kernels):
    what ``object_key`` is given for the kernels."""
    rt = project / "runtime"
    return sorted([*(rt / "include").glob("*.h"), *(rt / "kernels").glob("*.h")])


def object_key(
    cc: str, flags: Sequence[str], source: Path, headers: Sequence[Path], cwd: Path
) -> str | None:
    """The cache key of ``source``'s object, or None when it must not be cached (an include
    outside ``headers``, an unknown compiler)."""
    cid = _compiler_id(cc)
    if not cid:
        return None
    by_name = {h.name: h for h in headers}
    texts = {source.name: source.read_bytes()}
    for h in by_name.values():
        texts[h.name] = h.read_bytes()
    for text in texts.values():
        if any(inc.decode(errors="replace") not in by_name for inc in _INCLUDE.findall(text)):
            return None
    try:
        rel = str(source.relative_to(cwd))
    except ValueError:
        rel = str(source)
    h = hashlib.sha256()
    for part in (cid, *(f for f in flags if not f.startswith("-ffile-prefix-map=")), rel):
        h.update(part.encode() + b"\0")
    for name in sorted(texts):
        h.update(name.encode() + b"\0" + texts[name] + b"\0")
    return h.hexdigest()


def compile_cached(
    key: str | None, obj: Path, compile_it: Callable[[], subprocess.CompletedProcess[str]]
) -> subprocess.CompletedProcess[str]:
    """``obj`` from the cache under ``key`` (a CompletedProcess with the warnings the compiler
    gave when it made it), else ``compile_it()`` (which writes ``obj``), kept when it
    succeeded. ``key`` None: just ``compile_it()``."""
    folder = cache_dir() if key is not None else None
    if folder is not None:
        entry = folder / f"{key}.o"
        try:
            warnings = (folder / f"{key}.txt").read_text(encoding="utf-8")
            tmp = obj.with_name(f".{obj.name}.{os.getpid()}.tmp")
            shutil.copyfile(entry, tmp)
            os.replace(tmp, obj)
            os.utime(entry)  # recently used: pruned last
            return subprocess.CompletedProcess(["(cached)", str(obj)], 0, "", warnings)
        except OSError:
            pass
    proc = compile_it()
    if folder is not None and proc.returncode == 0 and obj.is_file():
        _store(folder, key, obj, proc.stderr or "")
    return proc


def _store(folder: Path, key: str | None, obj: Path, warnings: str) -> None:
    """Put ``obj`` and its warnings in the cache, each by a private name renamed into place (the
    warnings first: an object in place always has its warnings)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for suffix, write in (
            (".txt", lambda p: p.write_text(warnings, encoding="utf-8")),
            (".o", lambda p: shutil.copyfile(obj, p)),
        ):
            fd, tmp = tempfile.mkstemp(prefix=f".{key}.", dir=folder)
            os.close(fd)
            try:
                write(Path(tmp))
                os.replace(tmp, folder / f"{key}{suffix}")
            finally:
                Path(tmp).unlink(missing_ok=True)
        _prune(folder)
    except OSError:
        pass  # no cache this time


def _prune(folder: Path) -> None:
    objs = list(folder.glob("*.o"))
    if len(objs) <= MAX_ENTRIES:
        return
    objs.sort(key=lambda p: p.stat().st_mtime)
    for p in objs[: len(objs) - MAX_ENTRIES]:
        p.unlink(missing_ok=True)
        p.with_suffix(".txt").unlink(missing_ok=True)
