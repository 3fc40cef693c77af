"""The device's requantization primitive (firmware/kernels/tc_onnx.c, ``tc_onnx_requant``)
against onnxruntime's arithmetic modelled in numpy (float32 product, round half to even,
saturate): two million random and edge-case accumulators and scales, ties included, on the
host. The same C runs in QEMU on Cortex-M7 (FPU) and Cortex-M0+ (soft float) through
tests/test_onnx_models.py's emulator tests: the ``ties_u8`` model lands on halves, and ``wide``
has accumulators beyond 2^24 (where float(acc) itself rounds) with power-of-two scales."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from tinycompile.build.host import HOST_CFLAGS, host_cc
from tinycompile.ops.onnx_requant import requant_np

ROOT = Path(__file__).resolve().parent.parent
FW = ROOT / "firmware"

HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tc_onnx.h"
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb"), *o = fopen(argv[2], "wb");
    int32_t acc, zp;
    float scale;
    (void)argc;
    while (fread(&acc, 4, 1, f) == 1 && fread(&scale, 4, 1, f) == 1 && fread(&zp, 4, 1, f) == 1) {
        int8_t y = (int8_t)tc_onnx_requant(acc, scale, zp);
        fwrite(&y, 1, 1, o);
    }
    fclose(f);
    fclose(o);
    return 0;
}
"""


def _cases(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(13)
    edge = np.array([0, 1, -1, 2**31 - 1, -(2**31), 2**24, 2**24 + 1, -(2**24) - 1, 255, -256])
    acc = np.concatenate([
        rng.integers(-(2**31), 2**31, n // 4),
        rng.integers(-100_000, 100_000, n // 2),
        rng.integers(-300, 300, n // 4 - edge.size), edge,
    ]).astype(np.int32)  # fmt: skip
    pow2 = 2.0 ** rng.integers(-12, 3, n).astype(np.float64)  # ties: halves land exactly
    rand = np.exp(rng.uniform(np.log(1e-9), np.log(1e3), n))
    scale = np.where(rng.random(n) < 0.3, pow2, rand).astype(np.float32)
    zp = rng.integers(-128, 128, n).astype(np.int32)
    return acc, scale, zp


def test_requant_matches_numpy(tmp_path: Path) -> None:
    n = 2_000_000
    acc, scale, zp = _cases(n)
    src = tmp_path / "harness.c"
    src.write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run(
        [host_cc(), *HOST_CFLAGS, f"-I{FW / 'include'}", str(src),
         str(FW / "kernels" / "tc_onnx.c"), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    rec = np.zeros(n, dtype=[("a", "<i4"), ("s", "<f4"), ("z", "<i4")])
    rec["a"], rec["s"], rec["z"] = acc, scale, zp
    (tmp_path / "in.bin").write_bytes(rec.tobytes())
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8)
    want = np.empty(n, np.int8)
    for z in np.unique(zp):  # requant_np takes one zero point
        m = zp == z
        want[m] = requant_np(acc[m], scale[m], int(z))
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} differ, first acc={acc[bad[0]]} scale={scale[bad[0]]!r}"
    v = acc.astype(np.float32) * scale
    ties = np.count_nonzero((np.abs(v) < 300) & (v - np.floor(v) == 0.5))
    assert ties > 10_000, ties  # half-way cases were exercised


def test_requant_rounds_half_to_even() -> None:
    """The model itself: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 (not TFLite's half away from zero)."""
    got = requant_np(np.array([5, 7, -5, 1, -1]), np.float32(0.5), 0)
    assert got.tolist() == [2, 4, -2, 0, 0]
