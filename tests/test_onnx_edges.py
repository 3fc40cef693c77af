"""The three places where the compiled ONNX kernels once departed from onnxruntime 1.32 and the
numpy reference (docs/onnx.md, "The arithmetic matched, and how"), on hand-made models built to
hit them (tests/onnxgen/edges.py), compared bit for bit with the reference (``api.compare``),
outputs and every layer, on the host and in QEMU on the Cortex-M7 (stm32f746: FPU) and the
Cortex-M0+ (samd21: soft float, integer forms), with onnxruntime's second opinion agreeing:

- QLinearSoftmax: int8 outputs of 1.0 at scale 1/256 and zero point -128 saturate to 127 (not
  the low byte, -128), the product and quotient in double (``e * 1000`` overflows float32 at
  small depths; the double and float32 quotients round differently near halves), ``L`` rounded
  to float32; depths 1, 2, 3, 7, 100 and 1000, ties, int8 and uint8.
- QLinearMul: the output zero point added in float32 before the rounding, on all 65536 pairs
  (int8 and uint8; uint8 adds its own zero point, not the stored one minus 128).
- Resize (nearest): axes of scale 1 copied one to one under every coordinate transformation and
  nearest mode (``tf_half_pixel_for_nn`` with ``ceil`` / ``round_prefer_ceil`` shifted them), and
  opset 10 (inputs X, scales; asymmetric, "simple" rounding).

Also the softmax kernel alone (its decision from a float32 quotient, the double arithmetic near
halves) against the reference over random configurations, compiled for the host.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.build.host import HOST_CFLAGS, host_cc
from tinycompile.ops.onnx_resize import nearest_index, original
from tinycompile.ops.onnx_softmax import softmax_exp_table
from tinycompile.run import onnx_ref_ops as K
from tinycompile.run.compare import CompareReport

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from tests.onnxgen import edges as E  # noqa: E402

FW = Path(__file__).resolve().parent.parent / "firmware"
F32 = np.float32
MODELS = ["softmax", "softmax_u8", "mul", "mul_u8", "resize", "resize10", "conv_pads"]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return E.build_edges(tmp_path_factory.mktemp("onnx_edges"))


def _inputs(name: str, n: int) -> list[np.ndarray] | None:
    if name.startswith("softmax"):
        return E.softmax_inputs(n)
    if name.startswith("mul"):
        return E.pair_inputs()
    return None  # uniform random int8 after the QuantizeLinear


def _compare(path: Path, board: str, n: int) -> CompareReport:
    r = api.compare(path, board=board, inputs=_inputs(path.stem, n), n=n)
    assert r.ok, str(r)
    so = r.second_opinion
    assert so is not None and so["mismatches"] == 0, str(r)  # onnxruntime == the reference
    return r


@pytest.mark.parametrize("name", MODELS)
def test_host_bit_exact(models: dict[str, Path], name: str) -> None:
    r = _compare(models[name], "host", 30)
    if name.startswith("softmax"):  # outputs of 1.0 at scale 1/256 saturate (int8: to 127)
        d1 = r.result.outputs[0]  # depth 1, scale 1/256, the type's lowest zero point
        assert np.all(d1 == 127)  # int8 127 and uint8 255 (stored as int8 - 128)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("name", MODELS)
def test_emulator_bit_exact(models: dict[str, Path], name: str, board: str) -> None:
    _compare(models[name], board, 12)


def test_the_models_hit_the_cases() -> None:
    """Without the fixes these would pass unnoticed: the reference's outputs differ from the
    formulas the kernels once used on these very inputs."""
    # Mul: rounding before adding the zero point differs (int8: 8 and 300 pairs)
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int64)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int64)
    for sa, za, sb, zb, sc, zc in E.MUL_PARAMS[np.int8]:
        ref = K.mul(a.astype(np.int8), (F32(sa), za), b.astype(np.int8), (F32(sb), zb),
                    (F32(sc), zc), np.int8)  # fmt: skip
        ratio = (F32(sa) * F32(sb)) / F32(sc)
        first = np.clip(np.rint(((a - za) * (b - zb)).astype(F32) * ratio) + zc, -128, 127)
        assert np.count_nonzero(first != ref) >= 8
    # Softmax: float32 e * floor(1 / y_scale) overflows at depth 1 with y_scale 0.001
    e = K.softmax_table(F32(0.1), 1)[255]
    with np.errstate(over="ignore"):
        assert np.isinf(e * F32(1000.0))
    # Resize: tf_half_pixel_for_nn with ceil moves the rows of a scale-1 axis by one
    moved = [nearest_index(original(i, F32(1.0), 5, 5, "tf_half_pixel_for_nn"), "ceil", 5)
             for i in range(5)]  # fmt: skip
    assert moved == [1, 2, 3, 4, 4]


HARNESS = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tc_onnx.h"
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb"), *o = fopen(argv[2], "wb");
    int32_t head[5];
    tc_onnx_softmax_params_t p;
    float table[256];
    (void)argc;
    while (fread(head, 4, 5, f) == 5 && fread(&p.y_scale, 4, 1, f) == 1 &&
           fread(table, 4, 256, f) == 256) {
        const size_t n = (size_t)head[0] * (size_t)head[1];
        int8_t *x = malloc(n), *y = malloc(n);
        p.rows = head[0], p.depth = head[1], p.lo = head[2], p.hi = head[3];
        p.out_off = head[4], p.exp_table = table;
        if (fread(x, 1, n, f) != n) {
            return 1;
        }
        tc_onnx_softmax_s8(&p, x, y);
        fwrite(y, 1, n, o);
        free(x);
        free(y);
    }
    fclose(f);
    fclose(o);
    return 0;
}
"""


def _softmax_configs(count: int) -> list[tuple]:
    """Random QLinearSoftmax parameters and rows: x scales from 0.002 to 2, output scales 1/256
    or from 1e-4 to 0.2 (odd and huge ``floor(1 / y_scale)``), depths 1 to 1000, rows random,
    narrow (many close terms), with repeated maxima and with one dominant value."""
    rng = np.random.default_rng(29)
    out = []
    for k in range(count):
        dtype = np.uint8 if k % 2 else np.int8
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        depth = int(np.exp(rng.uniform(0, np.log(1000)))) if k % 7 else 1 + k % 4
        xs = F32(np.exp(rng.uniform(np.log(0.002), np.log(2.0))))
        ys = F32(1 / 256 if k % 3 == 0 else np.exp(rng.uniform(np.log(1e-4), np.log(0.2))))
        yz = int(rng.integers(lo, hi + 1)) if k % 3 else lo
        rows = max(2, 3000 // depth)
        x = rng.integers(lo, hi + 1, (rows, depth))
        kind = np.arange(rows) % 4
        base = rng.integers(lo, hi + 1, (rows, 1))
        x = np.where((kind == 1)[:, None], np.minimum(base + rng.integers(0, 4, x.shape), hi), x)
        top = x.max(axis=1)
        x[kind == 2, 0] = top[kind == 2]
        x[kind == 2, -1] = top[kind == 2]
        x[kind == 3] = lo
        x[kind == 3, depth // 3] = hi
        out.append((dtype, depth, xs, ys, yz, x.astype(dtype)))
    return out


def test_softmax_kernel_against_the_reference(tmp_path: Path) -> None:
    """``tc_onnx_softmax_s8`` (the table as the unit builds it) against ``onnx_ref_ops.softmax``
    on 300 random configurations, about 900,000 values, int8 and uint8."""
    src = tmp_path / "harness.c"
    src.write_text(HARNESS)
    exe = tmp_path / "harness"
    subprocess.run([host_cc(), *HOST_CFLAGS, f"-I{FW / 'include'}", str(src),
                    str(FW / "kernels" / "tc_onnx.c"), "-o", str(exe)], check=True)  # fmt: skip
    configs = _softmax_configs(300)
    blob, want = bytearray(), []
    for dtype, depth, xs, ys, yz, x in configs:
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        off = -128 if dtype == np.uint8 else 0  # stored as int8 - 128
        inv = F32(np.floor(F32(1.0) / ys))
        head = np.array([x.shape[0], depth, lo - yz, hi - yz, yz + off], np.int32)
        blob += head.tobytes() + inv.tobytes() + softmax_exp_table(xs, depth).tobytes()
        blob += (x.astype(np.int64) + off).astype(np.int8).tobytes()
        ref = K.softmax(x, xs, ys, yz, dtype, axis=-1, opset=13)
        want.append((ref.astype(np.int64) + off).astype(np.int8).reshape(-1))
    (tmp_path / "in.bin").write_bytes(bytes(blob))
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8)
    ref = np.concatenate(want)
    assert got.size == ref.size
    bad = np.flatnonzero(got != ref)
    assert bad.size == 0, f"{bad.size} of {ref.size} differ"
