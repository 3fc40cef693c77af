"""Build a compiled case for the host with -Werror and ASan/UBSan, and run it on random inputs.

The model-independent kernels are compiled once (tinycompile's object cache, keyed by their
contents and the flags) and linked into each case; plans too big to build and run quickly are
skipped.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SAN_FLAGS = [
    "-std=c99",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Werror",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
]
BUILD_MAX_ARENA = 8 << 20
BUILD_MAX_MACS = 50_000_000


def _unlimited() -> None:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))  # ASan reserves terabytes of shadow


def _kernel_objects(proj: Path, kernels: list[Path], workdir: Path) -> list[str]:
    """The model-independent kernels with the sanitizers, through tinycompile's object cache
    (compiled once per content and flags, shared by every worker and run)."""
    from tinycompile.build import host_cc
    from tinycompile.build.host import kernel_objects
    from tinycompile.errors import ToolchainError

    try:
        return [str(o) for o in kernel_objects(host_cc(), SAN_FLAGS, proj, kernels, workdir)]
    except ToolchainError as e:
        raise RuntimeError(f"kernel compile failed:\n{str(e)[-3000:]}") from None


def _random_inputs(g: Any, n: int, seed: int) -> list[Any]:
    """n samples per graph input as an IR batch (``run.samples``: the samples' tensors one after
    the other along axis 0, so a tensor of batch 3 gives 3n rows)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        shape = (n * t.shape[0], *t.shape[1:]) if len(t.shape) else (n,)
        if t.dtype == "float32":
            xs.append(rng.uniform(-4, 4, size=shape).astype(np.float32))
        elif t.dtype == "int16":
            xs.append(rng.integers(-32768, 32768, size=shape, dtype=np.int16))
        else:
            xs.append(rng.integers(-128, 128, size=shape, dtype=np.int8))
    return xs


def build_and_run(p: Any, seed: int) -> str | None:
    """Generate the project, build it for the host with ASan and UBSan, run it on two random
    inputs; returns what went wrong, or None. Skipped (None) for plans too big to run quickly."""
    from tinycompile import api
    from tinycompile.build import host_cc, runtime_sources

    if p.arena_bytes > BUILD_MAX_ARENA or sum(la.macs for la in p.layers) > BUILD_MAX_MACS:
        return None
    with tempfile.TemporaryDirectory(prefix="tc_fuzzb_") as td:
        proj = api.generate(p, Path(td) / "proj")
        kernels = [s for s in runtime_sources(proj) if s.parent.name == "kernels"]
        srcs = [s for s in runtime_sources(proj) if s not in kernels]
        srcs += sorted((proj / "model").glob("*.c"))
        srcs.append(proj / "runtime" / "runtime" / "tc_main_host.c")
        inc = ["-I", str(proj / "model"), "-I", str(proj / "runtime" / "include")]
        try:
            objs = _kernel_objects(proj, kernels, Path(td) / "objs")
        except RuntimeError as e:
            return str(e)
        exe = Path(td) / "tc_san"
        cmd = [host_cc(), *SAN_FLAGS, *inc, *map(str, srcs), *objs, "-o", str(exe)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            return f"host compile (-Werror, sanitizers) failed:\n{r.stderr[-3000:]}"
        xs = _random_inputs(p.graph, 2, seed)
        Path(td, "tc_in.bin").write_bytes(api.pack_inputs(p.graph, xs))
        env = dict(
            os.environ,
            ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
            UBSAN_OPTIONS="print_stacktrace=1",
        )
        try:
            r = subprocess.run(
                [str(exe)],
                cwd=td,
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
                preexec_fn=_unlimited,
            )
        except subprocess.TimeoutExpired:
            return "generated program ran for more than 60 s"
        if r.returncode != 0:
            return f"generated program failed (exit {r.returncode}):\n{r.stderr[-3000:]}"
        data = Path(td, "tc_out.bin").read_bytes()
        api.unpack_outputs(p, data, 2, debug_layers=False, profile=False)
    return None
