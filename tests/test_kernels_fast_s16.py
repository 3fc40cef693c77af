"""The 16x8 fast kernels (firmware/include/tc_s16.h: tc_conv_s16q, tc_fc_s16q, tc_dwconv_s16q,
tc_add_s16q, tc_avgpool_s16q, tc_maxpool_s16q), bit-exact with TFLM on the host (portable C) and
in QEMU on the Cortex-M7 and M4 (DSP paths) and the Cortex-M0+ (ARMv6-M paths).

Single-layer models from the sweep's generator (benchmarks/sweep_models.py, 16x8: int16
activations, per-channel int8 weights, int64 biases) cover the kernels' edges: 1, 3, 5, 7
input channels (window rows not a multiple of four taps), non-square filters, strides 1 and 2,
SAME borders and VALID, RELU / RELU6 / none; depthwise multipliers 1 to 4 and channel counts not
a multiple of four; FULLY_CONNECTED depths of 7 and 13 (tails) and 600 (a dot product of more
than 511 taps, in int32 because the compiler proved it fits), 1 to 3 rows; ADD with and without
broadcasting, equal and unequal scales; pools with partial windows. Inputs include the int16
extremes (every value -32768, every value 32767). A layer whose weights are all +-127 over 576
taps cannot be proved to fit int32 and keeps the int64 kernel (checked, and run).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
import zlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.ops import s16_fast
from tinycompile.ops.s16 import Requant64

QEMU_BOARDS = ["stm32f746", "stm32f407", "samd21"]  # Cortex-M7, Cortex-M4, Cortex-M0+


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


SM = _load("sweep_models")
I16 = "int16"


def _big_conv() -> bytes:
    """CONV_2D 4x4x64, 3x3 SAME, 3 channels, every weight +-127: 576 taps whose sum bound
    (32768 * 576 * 127) passes 2^31, so the layer keeps tc_conv_s16 (int64)."""
    rng = np.random.default_rng(zlib.crc32(b"big"))
    xq = (float(np.float32(6 / 32767)), 0)
    w = (rng.integers(0, 2, (3, 3, 3, 64)) * 254 - 127).astype(np.int8)
    ws = [float(np.float32(0.01))] * 3
    bs = [float(np.float32(xq[0] * 0.01))] * 3
    std = 18918.0 * 127 * np.sqrt(576) * xq[0] * 0.01
    yq = (float(np.float32(3 * std / 32767)), 0)
    opts = SM._opts(
        "Conv2DOptions", Padding=0, StrideW=1, StrideH=1, FusedActivationFunction=0,
        DilationWFactor=1, DilationHFactor=1,
    )  # fmt: skip
    tensors = [
        T("x", (1, 4, 4, 64), I16, quant=xq),
        T("w", (3, 3, 3, 64), "int8", quant=(ws, [0] * 3), data=w),
        T("b", (3,), "int64", quant=(bs, [0] * 3), data=rng.integers(-9999, 9999, 3)),
        T("y", (1, 4, 4, 3), I16, quant=yq),
    ]
    return write(tensors, [Node("CONV_2D", [0, 1, 2], [3], "Conv2DOptions", opts)], [0], [3])


# name -> (kernel the layer must call, model bytes)
CASES = {
    "conv_c1_k3_same_relu": ("tc_conv_s16q", lambda: SM.conv("c", (9, 11, 1), (3, 3), 8)),
    "conv_c3_k3x2_s2_valid": (
        "tc_conv_s16q",
        lambda: SM.conv("c", (10, 9, 3), (3, 2), 5, 2, "valid", "none"),
    ),
    "conv_c5_k1x3_relu6": ("tc_conv_s16q", lambda: SM.conv("c", (6, 7, 5), (1, 3), 7, act="relu6")),
    "conv_c1_k10x4_s2": ("tc_conv_s16q", lambda: SM.conv("c", (13, 10, 1), (10, 4), 6, 2)),
    "conv_c16_pointwise": ("tc_conv_s16q", lambda: SM.conv("c", (5, 6, 16), (1, 1), 9, act="none")),
    "conv_c8_k5_s2": ("tc_conv_s16q", lambda: SM.conv("c", (9, 9, 8), (5, 5), 4, 2)),
    "conv_c7_k3_relu6": ("tc_conv_s16q", lambda: SM.conv("c", (6, 6, 7), (3, 3), 13, act="relu6")),
    "conv_c64_k3_576taps": ("tc_conv_s16q", lambda: SM.conv("c", (5, 5, 64), (3, 3), 3)),
    "conv_big_weights_int64": ("tc_conv_s16(", None),
    "dw_c5_k3": ("tc_dwconv_s16q", lambda: SM.dw("d", (7, 8, 5), (3, 3), act="none")),
    "dw_c8_k3_s2_relu6": ("tc_dwconv_s16q", lambda: SM.dw("d", (9, 9, 8), (3, 3), 2, act="relu6")),
    "dw_c3_dm2_k3x2": ("tc_dwconv_s16q", lambda: SM.dw("d", (6, 7, 3), (3, 2), dm=2)),
    "dw_c2_dm4_k5_s2": ("tc_dwconv_s16q", lambda: SM.dw("d", (9, 8, 2), (5, 5), 2, dm=4)),
    "dw_c6_dm3_valid": ("tc_dwconv_s16q", lambda: SM.dw("d", (6, 6, 6), (3, 3), dm=3, pad="valid")),
    "dw_c12_k7x1": ("tc_dwconv_s16q", lambda: SM.dw("d", (8, 5, 12), (7, 1), act="relu6")),
    "fc_i13_o7": ("tc_fc_s16q", lambda: SM.fc("f", 13, 7, "none")),
    "fc_i600_o5_relu": ("tc_fc_s16q", lambda: SM.fc("f", 600, 5)),
    "fc_i7_o3_r3": ("tc_fc_s16q", lambda: SM.fc("f", 7, 3, "relu6", rows=3)),
    "fc_i64_o9_pertensor": ("tc_fc_s16q", lambda: SM.fc("f", 64, 9, "none", per_channel=False)),
    "add_same": ("tc_add_s16q", lambda: SM.binary("add", (5, 6, 7))),
    "add_bcast_relu": ("tc_add_s16q", lambda: SM.binary("add", (4, 5, 6), (1, 1, 6), "relu")),
    "add_bcast_rows_relu6": (
        "tc_add_s16q",
        lambda: SM.binary("add", (3, 4, 5), (3, 1, 5), "relu6"),
    ),
    "maxpool_c5_k3_s2_same": (
        "tc_maxpool_s16q",
        lambda: SM.pool("max", (9, 10, 5), (3, 3), 2, "same"),
    ),
    "maxpool_c8_k2_s2": ("tc_maxpool_s16q", lambda: SM.pool("max", (8, 8, 8), (2, 2), 2)),
    "avgpool_c6_k3_same": ("tc_avgpool_s16q", lambda: SM.pool("avg", (7, 9, 6), (3, 3), 1, "same")),
    "avgpool_c8_k5x3": ("tc_avgpool_s16q", lambda: SM.pool("avg", (10, 6, 8), (5, 3), 2, "same")),
    # odd channels: the M0+ walks them one by one (even ones two per word)
    "avgpool_c5_k2_s2_same": (
        "tc_avgpool_s16q",
        lambda: SM.pool("avg", (7, 7, 5), (2, 2), 2, "same"),
    ),
    # one output pixel, 64 taps: a global average as the 16x8 classifiers end with
    "avgpool_c32_global": ("tc_avgpool_s16q", lambda: SM.pool("avg", (8, 8, 32), (8, 8), 1)),
}


def _model(name: str, tmp_path: Path) -> Path:
    make = CASES[name][1]
    data = _big_conv() if make is None else _with_dtype(make).data
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def _with_dtype(make):
    """The generator call, in 16x8 (the builders take dtype as a keyword)."""
    orig = {f: getattr(SM, f) for f in ("conv", "dw", "fc", "pool", "binary")}
    try:
        for f, fn in orig.items():
            setattr(SM, f, functools.partial(fn, dtype=I16))
        return make()
    finally:
        for f, fn in orig.items():
            setattr(SM, f, fn)


def _inputs(path: Path, n: int, seed: int) -> list[np.ndarray]:
    """n samples per input: every value -32768, every value 32767, then uniform int16."""
    g = load_model(path)
    rng = np.random.default_rng(seed)
    out = []
    for tid in g.inputs:
        shape = g.t(tid).shape  # samples follow each other along the first axis
        x = rng.integers(-32768, 32768, size=(n * shape[0], *shape[1:]), dtype=np.int16)
        x[: shape[0]] = -32768
        x[shape[0] : 2 * shape[0]] = 32767
        out.append(x)
    return out


def test_kernel_choice(tmp_path: Path) -> None:
    for name, (fn, _) in CASES.items():
        p = api.plan(_model(name, tmp_path))
        stmts = " ".join(op.stmt for op in p.lowering.ops)
        assert fn in stmts, (name, stmts)
        if fn.endswith("q"):  # the fast kernels read their own layout only
            assert not any(s.startswith("tc_const_t") for s in p.lowering.arrays), name


def test_requant32_equals_tflm_int64() -> None:
    """fast_requant's 32-bit form against TFLM's MultiplyByQuantizedMultiplier(int64), on the
    whole range of total shifts it takes (18..46) and random accumulators and multipliers."""
    rng = np.random.default_rng(5)
    for ts in range(s16_fast.MIN_TS, 47):
        rm = rng.integers(0, 0x8000, 64)
        rq = Requant64(-32768, 32767, np.zeros(64, np.int64), rm.astype(np.int32),
                       np.full(64, ts, np.int32))  # fmt: skip
        f = s16_fast.fast_requant(np.zeros((64, 1), np.int8), rq)
        assert f is not None
        b, m, rnd, sh = (f.rq.reshape(64, 4).T).astype(np.int64)
        acc = rng.integers(-(2**31), 2**31, (64, 200))
        acc[:, :4] = [-(2**31), 2**31 - 1, -1, 0]
        want = (acc * rm[:, None] + (1 << (ts - 1))) >> ts
        got = (((acc * m[:, None]) >> 32) + rnd[:, None]) >> sh[:, None]
        np.testing.assert_array_equal(got, want)
    bad = Requant64(0, 1, np.zeros(1, np.int64), np.array([100], np.int32), np.array([17]))
    assert s16_fast.fast_requant(np.ones((1, 4), np.int8), bad) is None
    big = Requant64(0, 1, np.array([2**31 - 1 - 32768 * 4]), np.array([100]), np.array([30]))
    assert s16_fast.fast_requant(np.ones((1, 4), np.int8), big) is not None
    assert s16_fast.fast_requant(np.ones((1, 5), np.int8), big) is None


def test_quad_layout() -> None:
    """quads(): element by element as tc_s16.h describes it."""
    rng = np.random.default_rng(1)
    oc, rows, seg, segp = 6, 3, 5, 8
    w = rng.integers(-128, 128, (oc, rows * seg)).astype(np.int8)
    got = s16_fast.quads(w, seg, segp)
    ng = rows * segp // 4
    assert got.size == 2 * ng * 16
    for c in range(8):
        for j in range(rows * segp):
            r, t = divmod(j, segp)
            want = int(w[c, r * seg + t]) if c < oc and t < seg else 0
            pos = ((c // 4) * ng + j // 4) * 16 + (c % 4) * 4 + (0, 2, 1, 3)[j % 4]
            assert int(got[pos]) - 128 == want


@pytest.mark.parametrize("name", sorted(CASES))
def test_host_matches_tflm(name: str, tmp_path: Path) -> None:
    path = _model(name, tmp_path)
    r = api.compare(path, board="host", inputs=_inputs(path, 6, 1), layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("board", QEMU_BOARDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_paths_match_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _model(name, tmp_path)
    r = api.compare(path, board=board, inputs=_inputs(path, 4, 2), layers=True)
    assert r.ok, str(r)
