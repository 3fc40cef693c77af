"""The device's requantization primitive (firmware/kernels/tc_onnx.c, ``tc_onnx_requant``)
against onnxruntime's arithmetic modelled in numpy (float32 product, round half to even,
saturate): two million random and edge-case accumulators and scales, ties included, on the
host. The same C runs in QEMU on Cortex-M7 (FPU) and Cortex-M0+ (soft float) through
tests/test_onnx_models.py's emulator tests: the ``ties_u8`` model lands on halves, and ``wide``
has accumulators beyond 2^24 (where float(acc) itself rounds) with power-of-two scales.

The integer forms of the same arithmetic (firmware/include/tc_qmath.h's ONNX variant of the
convolutions' requantization): ``tc_onnx_requant_exact`` (any accumulator and scale) and
``tc_requant_conv`` with the compiler's (IEEE bits, mantissa << 7) pair (the layers
``onnx_requant.integer_form_ok`` lets through), against ``tc_onnx_requant`` over the same cases
plus accumulators placed at and around the halves of every scale's grid, and the 16-bit-product
sum (tc_mulacc16, the Thumb-1 form's C twin) against 64-bit products for the variant's
arguments. In QEMU the ``sweep``, ``wzp`` and calibrated models run both forms
(tests/test_onnx_fast.py, tests/test_onnx_models.py)."""

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


def _run_harness(
    tmp_path: Path,
    name: str,
    source: str,
    acc: np.ndarray,
    scale: np.ndarray,
    zp: np.ndarray,
    *flags: str,
) -> tuple[subprocess.CompletedProcess, bytes]:
    """Compile a C harness ``source`` with tc_onnx.c for the host, run it on the (acc, scale,
    zero point) records, and return the run and the bytes it wrote."""
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run(
        [host_cc(), *HOST_CFLAGS, *flags, f"-I{FW / 'include'}", str(src),
         str(FW / "kernels" / "tc_onnx.c"), "-o", str(exe)],
        check=True,
    )  # fmt: skip
    rec = np.zeros(acc.size, dtype=[("a", "<i4"), ("s", "<f4"), ("z", "<i4")])
    rec["a"], rec["s"], rec["z"] = acc, scale, zp
    (tmp_path / "in.bin").write_bytes(rec.tobytes())
    r = subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                       capture_output=True, text=True)  # fmt: skip
    return r, (tmp_path / "out.bin").read_bytes()


def test_requant_matches_numpy(tmp_path: Path) -> None:
    n = 2_000_000
    acc, scale, zp = _cases(n)
    r, out = _run_harness(tmp_path, "harness", HARNESS, acc, scale, zp)
    assert r.returncode == 0, r.stderr
    got = np.frombuffer(out, np.int8)
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


FORMS = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tc_onnx.h"
#include "tc_qmath.h"
static int8_t sat(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb"), *o = fopen(argv[2], "wb");
    int32_t acc, zp, bits, e;
    float scale;
    long mulacc_bad = 0;
    (void)argc;
    while (fread(&acc, 4, 1, f) == 1 && fread(&scale, 4, 1, f) == 1 && fread(&zp, 4, 1, f) == 1) {
        int8_t y[3];
        memcpy(&bits, &scale, 4);
        e = (bits >> 23) & 0xFF;
        y[0] = (int8_t)tc_onnx_requant(acc, scale, zp);
        y[1] = sat(tc_onnx_requant_exact(acc, bits) + zp);
        y[2] = y[0]; /* a case the compiler keeps from the integer form: the reference */
        if (e >= 110 && e <= 133 &&
            ((acc >= -(1 << 24) && acc <= (1 << 24)) || (double)scale * 16777216.0 >= 256.5)) {
            const int32_t m7 = ((bits & 0x7FFFFF) | 0x800000) << 7, i = e - 110;
            const int32_t xs = (int32_t)((uint32_t)acc << i);
            uint32_t lo;
            y[2] = sat(tc_requant_conv(acc, bits, m7) + zp);
            if ((xs >> i) == acc && tc_mulacc16(xs, m7, 0, (1 << 14) + 1, &lo) !=
                (int32_t)(((int64_t)xs * m7 + ((int64_t)((1 << 14) + 1) << 32)) >> 32)) {
                mulacc_bad++;
            }
        }
        fwrite(y, 1, 3, o);
    }
    fclose(f);
    fclose(o);
    printf("mulacc %ld\n", mulacc_bad);
    return mulacc_bad != 0;
}
"""


def _tie_cases(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Accumulators at and one or two steps around (k + 1/2) / scale for random k, scales of
    every exponent the integer form takes (power-of-two ones among them), zero points any."""
    rng = np.random.default_rng(17)
    e = rng.integers(-17, 7, n).astype(np.float64)
    mant = np.where(rng.random(n) < 0.4, 1.0, rng.uniform(1.0, 2.0, n))
    scale = (mant * 2.0**e).astype(np.float32)
    k = rng.integers(-300, 300, n) + 0.5
    acc = np.rint(k / scale.astype(np.float64)) + rng.integers(-2, 3, n)
    acc = np.clip(acc, -(2**31), 2**31 - 1).astype(np.int32)
    return acc, scale, rng.integers(-128, 128, n).astype(np.int32)


def test_integer_forms_match_the_float_arithmetic(tmp_path: Path) -> None:
    cases = [_cases(2_000_000), _tie_cases(1_000_000)]
    acc, scale, zp = (np.concatenate(parts) for parts in zip(*cases, strict=True))
    n = acc.size
    r, out = _run_harness(tmp_path, "forms", FORMS, acc, scale, zp, "-Werror")
    assert r.returncode == 0 and r.stdout.strip() == "mulacc 0", r.stdout
    got = np.frombuffer(out, np.int8).reshape(n, 3)
    for form, name in ((1, "tc_onnx_requant_exact"), (2, "tc_requant_conv")):
        bad = np.flatnonzero(got[:, form] != got[:, 0])
        assert bad.size == 0, (
            f"{name}: {bad.size} differ, first acc={acc[bad[0]]} scale={scale[bad[0]]!r}"
        )
    # the cases exercised what they should: halves, and the integer form on most of the ties
    v = acc.astype(np.float32) * scale
    halves = (np.abs(v) < 300) & (v - np.floor(v) == 0.5)
    assert np.count_nonzero(halves) > 50_000
    e = (scale.view(np.int32) >> 23) & 0xFF
    assert np.count_nonzero(halves & (e >= 110) & (e <= 133)) > 30_000


def test_compiler_encoding_of_the_variant() -> None:
    """``onnx_multipliers``: the scale's bits and its mantissa << 7 (a shift above 31, the
    variant's mark); ``integer_form_ok``: the exponent range and the float32(acc) condition."""
    from tinycompile.ops.onnx_requant import integer_form_ok, onnx_multipliers

    s = np.array([2.0**-17, 0.75, 1.5 * 2.0**6, 0.0123], np.float32)
    mult, shift = onnx_multipliers(s)
    assert mult.tolist() == s.view(np.int32).tolist()
    assert np.all((shift >= 2**30) & (shift < 2**31))
    m = shift.astype(np.float64) / 2**7 * 2.0 ** (((mult >> 23) & 0xFF) - 150)
    assert np.array_equal(m.astype(np.float32), s)
    small = np.array([1000])
    assert integer_form_ok(s, np.full(4, 1000))
    assert not integer_form_ok(np.array([2.0**-18], np.float32), small)  # below 2^-17
    assert not integer_form_ok(np.array([2.0**7], np.float32), small)  # 2^7 and above
    # past 2^24 the accumulator's float32 rounds: only where every such output saturates
    assert not integer_form_ok(np.array([2.0**-16], np.float32), np.array([2**24 + 1]))
    assert integer_form_ok(np.array([2.0**-16], np.float32), np.array([2**24]))
    assert integer_form_ok(np.array([2.0**-15], np.float32), np.array([2**31]))
