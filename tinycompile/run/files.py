"""The user's array files: ``--inputs`` (.npy, or .npz by input name) and ``--outputs`` (.npy
for one output, .npz keyed by output name), checked before a run and written atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import CompileError


def load_inputs(path: str) -> dict[str, np.ndarray] | list[np.ndarray]:
    """Arrays from a .npy (one) or .npz (by key) file."""
    if not path.endswith((".npy", ".npz")):
        raise CompileError(f"--inputs {path}: give a .npy or .npz file")
    try:
        if path.endswith(".npz"):
            with np.load(path, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        return [np.load(path, allow_pickle=False)]
    except OSError as e:
        raise CompileError(f"cannot read inputs: {e.strerror or e}", source=path) from None
    except ValueError as e:
        raise CompileError(f"cannot read inputs: {e}", source=path) from None


def check_outputs(path: str, n_outputs: int) -> Path:
    """The --outputs path, checked before any run: its suffix, its folder, that it can write."""
    p = Path(path)
    if p.suffix not in (".npy", ".npz"):
        raise CompileError(f"--outputs {path}: name a .npy or .npz file")
    if p.suffix == ".npy" and n_outputs > 1:
        raise CompileError(f"--outputs {path}: the model has {n_outputs} outputs; name a .npz file")
    folder = p.parent
    if not folder.is_dir():
        raise CompileError(f"--outputs {path}: folder {str(folder)!r} does not exist")
    if p.is_dir():
        raise CompileError(f"--outputs {path}: is a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".tc_outputs_")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        msg = f"--outputs {path}: cannot write in {str(folder)!r}: {e.strerror}"
        raise CompileError(msg) from None
    if p.exists() and not os.access(p, os.W_OK):
        raise CompileError(f"--outputs {path}: the file is read-only")
    return p


def save_outputs(path: Path, names: list[str], outs: list[np.ndarray]) -> None:
    """Write the outputs atomically (a temporary file beside it, then renamed)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tc_outputs_", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            if path.suffix == ".npz":
                keys = names if len(set(names)) == len(names) and all(names) else None
                if keys is None:
                    keys = [f"arr_{i}" for i in range(len(outs))]
                np.savez(f, **dict(zip(keys, outs, strict=True)))
            else:
                np.save(f, outs[0])
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
