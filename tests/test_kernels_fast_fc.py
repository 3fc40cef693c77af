"""FULLY_CONNECTED int8 (tc_fc_s8) on the compiler's weight layout, bit-exact with TFLM.

The compiler emits the weights re-laid out (ops/fully_connected.py, ``weight_quads``): quads of
four output channels interleaved by groups of four depth values, each byte w + 128. Every path
reads that layout: the portable C (host, and ``-DTC_PORTABLE`` on a Cortex-M), the Cortex-M4/M7
assembly (QEMU stm32f407 / stm32f746), the ARMv6-M assembly (QEMU samd21) and the Cortex-M55's
Helium row (QEMU qemu-m55: VLD4 deinterleaving four groups of a quad, depths in fours; the
other depths on the DSP path). The models here
(written with the flatbuffer writer, random weights) cover output channel counts that are not a
multiple of four (1, 3, 5, 7, 10: partial quads), depths that are not a multiple of 4 or 8 (1, 3,
5, 7, 13: no group at all, odd group counts, tails), a deep layer (640: an even group count),
one, two and three input rows, per-tensor and per-channel weights, and the fused activations
NONE, RELU and RELU6. ``test_weight_layout`` checks the emitted array against the documented
layout computed here independently, and that the model's own weight tensor is not emitted.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.tflite_writer import Node, T, write
from test_kernels_fast_conv import _fc_opts

from tinycompile import api

QEMU_BOARDS = ["stm32f407", "stm32f746", "samd21", "qemu-m55"]  # M4, M7, M0+, M55 (Helium)


class _Chain:
    """FULLY_CONNECTED layers one after another; per-tensor or per-channel int8 weights, output
    scales following the accumulators' spread so that outputs use the int8 range."""

    def __init__(self, rows: int, depth: int, seed: int, per_channel: bool) -> None:
        self.rng = np.random.default_rng(seed)
        self.per_channel = per_channel
        self.tensors = [T("x", (rows, depth), quant=(0.05, -3))]
        self.nodes: list[Node] = []
        self.cur = 0

    def fc(self, oc: int, act: str = "NONE", mult: float = 0.0, wmax: int = 127) -> _Chain:
        """``mult`` > 0: the layer's (per-tensor) multiplier in_scale * 0.02 / out_scale, with
        weights in [-wmax, wmax] (so that outputs stay in range); RELU6 outputs span [0, 6]."""
        rows, depth = self.tensors[self.cur].shape
        in_s = self.tensors[self.cur].quant[0]
        w = self.rng.integers(-wmax, wmax + 1, (oc, depth)).astype(np.int8)
        acc_std = np.sqrt(depth) * 60.0 * (73.0 if wmax == 127 else wmax * 0.6)
        w_s = 0.02 if act != "RELU6" else float(np.float32(2.5 / (in_s * acc_std)))
        if self.per_channel:
            ws = [float(np.float32(s)) for s in self.rng.uniform(0.3 * w_s, 1.7 * w_s, oc)]
            wq: tuple = (ws, [0] * oc)
        else:
            ws = [w_s] * oc
            wq = (w_s, 0)
        bs = [float(np.float32(np.float32(in_s) * np.float32(s))) for s in ws]
        bias = self.rng.integers(-3000, 3000, oc).astype(np.int32)
        if mult:
            bias //= 100
            out_q = (float(np.float32(in_s * w_s / mult)), int(self.rng.integers(-20, 20)))
        elif act == "RELU6":
            out_q = (float(np.float32(8.0 / 255)), -100)
        else:
            out_q = (
                float(np.float32(in_s * w_s * acc_std / 45.0)),
                int(self.rng.integers(-20, 20)),
            )
        n = len(self.tensors)
        bq: tuple = (bs, [0] * oc) if self.per_channel else (bs[0], 0)
        self.tensors += [
            T(f"w{n}", (oc, depth), quant=wq, data=w),
            T(f"b{n}", (oc,), "int32", quant=bq, data=bias),
            T(f"y{n}", (rows, oc), quant=out_q),
        ]
        self.nodes.append(
            Node("FULLY_CONNECTED", [self.cur, n, n + 1], [n + 2], "FullyConnectedOptions",
                 _fc_opts(act))
        )  # fmt: skip
        self.cur = n + 2
        return self

    def save(self, path: Path) -> Path:
        path.write_bytes(write(self.tensors, self.nodes, [0], [self.cur]))
        return path


def _chains() -> dict[str, _Chain]:
    def odd(rows: int, seed: int, pc: bool) -> _Chain:
        # depths 13, 7, 3, 5, 1, 10; out_c 7, 3, 5, 1, 10, 4
        return (
            _Chain(rows, 13, seed, pc).fc(7, "RELU").fc(3).fc(5, "RELU6").fc(1).fc(10, "RELU").fc(4)
        )

    def deep(rows: int, seed: int, pc: bool) -> _Chain:
        # depth 640 (160 groups), then 10 (two groups and a tail), 36, 8, 12 (9, 2, 3 groups:
        # each entry into the four-group loop)
        return _Chain(rows, 640, seed, pc).fc(10, "RELU").fc(36, "RELU6").fc(8).fc(12).fc(5)

    return {
        "odd_r1_pt": odd(1, 1, False),
        "odd_r1_pc": odd(1, 2, True),
        "odd_r2_pc": odd(2, 3, True),
        "odd_r3_pt": odd(3, 4, False),
        "deep_r1_pc": deep(1, 5, True),
        "deep_r1_pt": deep(1, 6, False),
        "deep_r2_pt": deep(2, 7, False),
        "deep_r3_pc": deep(3, 8, True),
        # multipliers >= 0.5 (shift >= 0): the generic requantization, not SMMLAR's
        "big_mult_pt": _Chain(1, 1, 9, False).fc(5, mult=0.7, wmax=1).fc(6, "RELU", 1.4, 1),
        "big_mult_pc": _Chain(2, 3, 10, True).fc(7, mult=0.9, wmax=1).fc(4, mult=0.6, wmax=1),
    }


def _relaid(w: np.ndarray) -> np.ndarray:
    """The documented layout, element by element: quad c0 at byte c0 * depth; per group g the
    n channels' four bytes; then the depth % 4 tails; each byte w + 128."""
    oc, depth = w.shape
    out = np.zeros(oc * depth, np.int64)
    groups, r = depth // 4, depth % 4
    for c in range(oc):
        c0, k = c - c % 4, c % 4
        n = min(4, oc - c0)
        for i in range(depth):
            g, j = divmod(i, 4)
            if g < groups:
                pos = c0 * depth + g * 4 * n + 4 * k + j
            else:
                pos = c0 * depth + groups * 4 * n + k * r + j
            out[pos] = int(w[c, i]) + 128
    return out


def test_weight_layout(tmp_path: Path) -> None:
    for name in ("odd_r2_pc", "deep_r1_pt"):
        chain = _chains()[name]
        p = api.plan(chain.save(tmp_path / f"{name}.tflite"))
        arrays = p.lowering.arrays
        for node_i, node in enumerate(chain.nodes):
            w = chain.tensors[node.inputs[1]].data
            got = arrays[f"tc_op{node_i}_weights"]
            assert got.ctype == "uint8_t"
            np.testing.assert_array_equal(np.asarray(got.values, np.int64), _relaid(w))
            # the model's own weights are not emitted (nothing reads them)
            assert f"tc_const_t{node.inputs[1]}" not in arrays
        assert not any(s.startswith("tc_const_t") for s in arrays), sorted(arrays)


def test_smmlar_only_where_exact() -> None:
    """The SMMLAR requantization is chosen only for right shifts and accumulators below 2^30
    (and R + h in int32); otherwise the kernel keeps the generic one."""
    from tinycompile.ops.conv_common import Requant
    from tinycompile.ops.fully_connected import smmlar_ok

    def rq(bias: int, shift: int, out_offset: int = -5) -> Requant:
        b = np.array([bias], np.int64)
        m, s = np.array([1 << 30], np.int64), np.array([shift], np.int64)
        return Requant(0, out_offset, -128, 127, b, b, m, s)

    w = np.full((1, 64), 127, np.int8)  # |sum| <= 64 * 127 * 128 = 1,040,384
    assert smmlar_ok(rq(1000, -8), w)
    assert not smmlar_ok(rq(1000, 0), w)  # left shift (or none): no division to fold
    assert not smmlar_ok(rq(1000, 1), w)
    assert not smmlar_ok(rq((1 << 30) - 1_000_000, -8), w)  # 2 * acc would overflow
    assert smmlar_ok(rq((1 << 30) - 1_100_000, -8), w)
    assert not smmlar_ok(rq(1000, -31, -128), w)  # R = -255 * 2^30 does not fit int32
    assert smmlar_ok(rq(1000, -21, -128), w)


def test_weight_layout_is_reproducible(tmp_path: Path) -> None:
    path = _chains()["odd_r1_pc"].save(tmp_path / "m.tflite")
    a = api.generate(api.plan(path), tmp_path / "a") / "model" / "tc_weights.c"
    b = api.generate(api.plan(path), tmp_path / "b") / "model" / "tc_weights.c"
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("name", sorted(_chains()))
def test_fc_host_matches_tflm(name: str, tmp_path: Path) -> None:
    path = _chains()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board="host", n=6, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("board", QEMU_BOARDS)
@pytest.mark.parametrize("name", sorted(_chains()))
def test_fc_fast_paths_match_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _chains()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board=board, n=4, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("name", ["odd_r3_pt", "deep_r2_pt", "odd_r2_pc"])
def test_fc_portable_build_matches_tflm(name: str, tmp_path: Path) -> None:
    path = _chains()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board="stm32f746", n=3, layers=True, portable=True)
    assert r.ok, str(r)
