"""Host runs: build a generated project with the host C compiler and run it on inputs."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..build import build_host
from ..errors import RunError
from ..planner import Plan
from .ioformat import RunResult, pack_inputs, unpack_outputs


def run_host(
    p: Plan,
    project: Path,
    inputs: list[np.ndarray],
    *,
    debug_layers: bool = False,
    timeout_s: float = 120.0,
) -> RunResult:
    """Build the project for the host, run it on ``inputs`` and read back its results."""
    exe = build_host(
        project, debug_layers=debug_layers, name="tc_host_debug" if debug_layers else "tc_host"
    )
    with tempfile.TemporaryDirectory(prefix="tc_run_") as wd:
        Path(wd, "tc_in.bin").write_bytes(pack_inputs(p.graph, inputs))
        try:
            r = subprocess.run([str(exe)], cwd=wd, capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise RunError(f"host run timed out after {timeout_s:g} s") from None
        if r.returncode != 0:
            raise RunError(
                f"host run failed with exit code {r.returncode}: "
                f"{r.stderr.decode(errors='replace')[:500]}"
            )
        data = Path(wd, "tc_out.bin").read_bytes()
    return unpack_outputs(p, data, inputs[0].shape[0], debug_layers=debug_layers, profile=False)
