"""Host runs: build a generated project with the host C compiler and run it on inputs. A run a
layer stopped by refusing its input (exit status 5) gives the samples before it and the
``RunResult.refused`` where it stopped."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .. import procs
from ..build import build_host
from ..errors import RunError
from ..pipeline import Plan
from . import samples
from .ioformat import (
    EXIT_REFUSED,
    RunResult,
    pack_inputs,
    sample_bytes,
    unpack_outputs,
    unpack_refused,
)


def run_host(
    p: Plan,
    project: Path,
    inputs: list[np.ndarray],
    *,
    debug_layers: bool = False,
    timeout_s: float = 120.0,
) -> RunResult:
    """Build the project for the host, run it on ``inputs`` and read back its results.

    Long runs show "inputs done/total" on a terminal's stderr (procs.Progress)."""
    exe = build_host(
        project, debug_layers=debug_layers, name="tc_host_debug" if debug_layers else "tc_host"
    )
    n = samples.count(p.graph.t(p.graph.inputs[0]), inputs[0])
    with tempfile.TemporaryDirectory(prefix="tc_run_") as wd:
        Path(wd, "tc_in.bin").write_bytes(pack_inputs(p.graph, inputs))
        progress = procs.Progress(n)
        poll = procs.file_progress(
            progress,
            Path(wd, "tc_out.bin"),
            sample_bytes(p, debug_layers=debug_layers, profile=False),
        )
        try:
            r = procs.run([str(exe)], cwd=wd, timeout_s=timeout_s, poll=poll)
        except subprocess.TimeoutExpired:
            raise RunError(f"host run timed out after {timeout_s:g} s") from None
        finally:
            progress.close()
        if r.returncode == EXIT_REFUSED:
            data = Path(wd, "tc_out.bin").read_bytes()
            err = r.stderr.decode(errors="replace")
            return unpack_refused(p, data, err, debug_layers=debug_layers, profile=False)
        if r.returncode != 0:
            raise RunError(
                f"host run failed with exit code {r.returncode}: "
                f"{r.stderr.decode(errors='replace')[:500]}"
            )
        data = Path(wd, "tc_out.bin").read_bytes()
    return unpack_outputs(p, data, n, debug_layers=debug_layers, profile=False)
