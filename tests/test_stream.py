"""Streamed segments (ops/rows.py, ops/stream.py, planner/streams.py): layers run one output
row at a time through windows of a few rows, bit for bit TFLM's whole layers.

- The row scheduler on made-up layers: bands, window sizes, and its own replay (``rows.check``)
  failing on a window one row too small.
- Random chains of CONV_2D (windows up to 5 rows, strides 1-2, dilation 2, SAME and VALID),
  DEPTHWISE_CONV_2D (depth multipliers 1-2), average and max pooling, residual ADDs, MUL
  gates and CONCATENATION along W and C,
  streamed whole or in part,
  compared with TFLM layer by layer on the host and in QEMU on Cortex-M4, M7 and M0+.
- ResNet-8: the arena the issue asks for (at most half of TFLM's 55,936 B), streamed
  automatically for the samd21 (32 KB of SRAM) with `plan --board samd21` explaining it; its
  board image links within the samd21's SRAM (the emulator build runs bit-exactly in
  tests/test_emulator_models.py).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import tflite
from conftest import MODELS, ROOT
from modelgen.tflite_writer import Node, T
from test_kernels_fast_conv import ACT, _Net

from tinycompile import api
from tinycompile.ops import rows
from tinycompile.ops.rows import Reach, RowLayer
from tinycompile.planner import streams
from tinycompile.planner.streams import streamed_ops

RESNET = MODELS / "ic_resnet8.tflite"
TFLM_RESNET_MIN_ARENA = 55_936  # benchmarks/bench_compile.py, `tflm min`


def test_bands_clip_to_the_input_and_count_the_padding() -> None:
    assert Reach(3, 1, 1, 1).band(0, 32) == (0, 2, 1)  # top: one padding row
    assert Reach(3, 1, 1, 1).band(5, 32) == (4, 3, 0)
    assert Reach(3, 1, 1, 1).band(31, 32) == (30, 2, 0)  # bottom: the last row is padding
    assert Reach(3, 2, 1, 0).band(15, 32) == (30, 2, 0)  # stride 2, SAME on an even size
    assert Reach(3, 1, 2, 2).band(0, 10) == (0, 3, 2)  # dilation 2: rows -2, 0, 2
    assert Reach().band(7, 8) == (7, 1, 0)


def _chain() -> tuple[list[RowLayer], dict[int, int], set[int]]:
    """t0 (whole, 12 rows) -k3-> t1 -k3-> t2 -(+ t1)-> t3 -k3 s2-> t4 (whole, 6 rows)."""
    k3, s2 = Reach(3, 1, 1, 1), Reach(3, 2, 1, 0)
    layers = [
        RowLayer(1, ((0, k3),)),
        RowLayer(2, ((1, k3),)),
        RowLayer(3, ((2, Reach()), (1, Reach()))),
        RowLayer(4, ((3, s2),)),
    ]
    return layers, {0: 12, 1: 12, 2: 12, 3: 12, 4: 6}, {1, 2, 3}


def test_schedule_keeps_windows_small_and_proves_itself() -> None:
    layers, heights, windowed = _chain()
    sched = rows.schedule(layers, heights, windowed)
    # t1 feeds a 3-row window and the ADD's same row (two rows behind): 3 rows; t2 is read by
    # the ADD as soon as it is written: 1 row; t3 feeds the stride-2 window: 3 rows
    assert sched.slots == {1: 3, 2: 1, 3: 3}
    calls = [s for s in sched.steps if isinstance(s, rows.RowCall)]
    assert sorted((c.layer, c.row) for c in calls) == sorted(
        (i, r) for i in range(4) for r in range(heights[layers[i].out])
    ), "every row of every layer exactly once"
    rows.check(layers, sched, windowed, heights)
    sched.slots[1] -= 1  # one row short: the replay must notice
    with pytest.raises(AssertionError):
        rows.check(layers, sched, windowed, heights)


def test_schedule_replay_catches_a_read_before_its_write() -> None:
    layers, heights, windowed = _chain()
    sched = rows.schedule(layers, heights, windowed)
    first_add = next(
        i for i, s in enumerate(sched.steps) if isinstance(s, rows.RowCall) and s.layer == 2
    )
    sched.steps[first_add - 1], sched.steps[first_add] = (
        sched.steps[first_add],
        sched.steps[first_add - 1],
    )
    sched.where[first_add - 1], sched.where[first_add] = (
        sched.where[first_add],
        sched.where[first_add - 1],
    )
    with pytest.raises(AssertionError):
        rows.check(layers, sched, windowed, heights)


class _Chain(_Net):
    """``_Net`` with depthwise convolutions, dilated convolutions and residual ADDs."""

    def conv_d(self, oc: int, k: int, stride: int, padding: str, dil: int, act: str) -> _Chain:
        _, h, w, c = self.tensors[self.cur].shape
        oh, ow = _out(h, k, stride, padding, dil), _out(w, k, stride, padding, dil)

        def opts(b) -> int:
            tflite.Conv2DOptionsStart(b)
            tflite.Conv2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
            tflite.Conv2DOptionsAddStrideW(b, stride)
            tflite.Conv2DOptionsAddStrideH(b, stride)
            tflite.Conv2DOptionsAddDilationWFactor(b, dil)
            tflite.Conv2DOptionsAddDilationHFactor(b, dil)
            tflite.Conv2DOptionsAddFusedActivationFunction(b, ACT[act])
            return tflite.Conv2DOptionsEnd(b)

        self._layer("CONV_2D", (oc, k, k, c), (1, oh, ow, oc), "Conv2DOptions", opts, k * k * c)
        return self

    def dw(self, k: int, stride: int, padding: str, dm: int, act: str) -> _Chain:
        _, h, w, c = self.tensors[self.cur].shape
        oh, ow = _out(h, k, stride, padding, 1), _out(w, k, stride, padding, 1)

        def opts(b) -> int:
            tflite.DepthwiseConv2DOptionsStart(b)
            tflite.DepthwiseConv2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
            tflite.DepthwiseConv2DOptionsAddStrideW(b, stride)
            tflite.DepthwiseConv2DOptionsAddStrideH(b, stride)
            tflite.DepthwiseConv2DOptionsAddDepthMultiplier(b, dm)
            tflite.DepthwiseConv2DOptionsAddFusedActivationFunction(b, ACT[act])
            return tflite.DepthwiseConv2DOptionsEnd(b)

        in_s = self.tensors[self.cur].quant[0]
        w_s, oc = 0.02, c * dm
        w = self.rng.integers(-127, 128, (1, k, k, oc)).astype(np.int8)
        bias = self.rng.integers(-3000, 3000, oc).astype(np.int32)
        out_s = float(np.float32(in_s * w_s * k * 60.0 * 73.0 / 45.0))
        n = len(self.tensors)
        self.tensors += [
            T(f"w{n}", (1, k, k, oc), quant=(w_s, 0), data=w),
            T(f"b{n}", (oc,), "int32", quant=(float(np.float32(in_s * w_s)), 0), data=bias),
            T(f"y{n}", (1, oh, ow, oc), quant=(out_s, int(self.rng.integers(-20, 20)))),
        ]
        self.nodes.append(
            Node("DEPTHWISE_CONV_2D", [self.cur, n, n + 1], [n + 2], "DepthwiseConv2DOptions", opts)
        )
        self.cur = n + 2
        return self

    def add(self, other: int, act: str) -> _Chain:
        a = self.tensors[self.cur]
        s = max(a.quant[0], self.tensors[other].quant[0]) * 1.5

        def opts(b) -> int:
            tflite.AddOptionsStart(b)
            tflite.AddOptionsAddFusedActivationFunction(b, ACT[act])
            return tflite.AddOptionsEnd(b)

        n = len(self.tensors)
        self.tensors.append(T(f"y{n}", a.shape, quant=(float(np.float32(s)), 3)))
        self.nodes.append(Node("ADD", [self.cur, other], [n], "AddOptions", opts))
        self.cur = n
        return self

    def mul(self, other: int, act: str) -> _Chain:
        a, b = self.tensors[self.cur], self.tensors[other]
        s = a.quant[0] * b.quant[0] * 300.0

        def opts(bld) -> int:
            tflite.MulOptionsStart(bld)
            tflite.MulOptionsAddFusedActivationFunction(bld, ACT[act])
            return tflite.MulOptionsEnd(bld)

        n = len(self.tensors)
        self.tensors.append(T(f"y{n}", a.shape, quant=(float(np.float32(s)), -5)))
        self.nodes.append(Node("MUL", [self.cur, other], [n], "MulOptions", opts))
        self.cur = n
        return self

    def cat(self, other: int, axis: int) -> _Chain:
        a, b = self.tensors[self.cur], self.tensors[other]
        shape = list(a.shape)
        shape[axis] += b.shape[axis]

        def opts(bld) -> int:
            tflite.ConcatenationOptionsStart(bld)
            tflite.ConcatenationOptionsAddAxis(bld, axis)
            return tflite.ConcatenationOptionsEnd(bld)

        n = len(self.tensors)
        self.tensors[self.cur] = replace(a, quant=b.quant)  # TFLM: one quantization for all
        self.tensors.append(T(f"y{n}", tuple(shape), quant=b.quant))
        self.nodes.append(
            Node("CONCATENATION", [self.cur, other], [n], "ConcatenationOptions", opts)
        )
        self.cur = n
        return self

    def pool(self, kind: str, k: int, stride: int, padding: str, act: str) -> _Chain:
        a = self.tensors[self.cur]
        _, h, w, c = a.shape
        oh, ow = _out(h, k, stride, padding, 1), _out(w, k, stride, padding, 1)

        def opts(b) -> int:
            tflite.Pool2DOptionsStart(b)
            tflite.Pool2DOptionsAddPadding(b, getattr(tflite.Padding, padding))
            tflite.Pool2DOptionsAddStrideW(b, stride)
            tflite.Pool2DOptionsAddStrideH(b, stride)
            tflite.Pool2DOptionsAddFilterWidth(b, k)
            tflite.Pool2DOptionsAddFilterHeight(b, k)
            tflite.Pool2DOptionsAddFusedActivationFunction(b, ACT[act])
            return tflite.Pool2DOptionsEnd(b)

        n = len(self.tensors)
        self.tensors.append(T(f"y{n}", (1, oh, ow, c), quant=a.quant))
        self.nodes.append(Node(kind, [self.cur], [n], "Pool2DOptions", opts))
        self.cur = n
        return self


def _out(size: int, k: int, stride: int, padding: str, dil: int) -> int:
    eff = (k - 1) * dil + 1
    return -(-size // stride) if padding == "SAME" else (size - eff) // stride + 1


def chain(seed: int) -> tuple[_Chain, int, str]:
    """A random streamable chain, the number of layers to stream, and a description."""
    r = random.Random(seed)
    h, w, c = r.randint(6, 14), r.randint(3, 9), r.choice([1, 3, 4, 8, 12])
    net = _Chain((1, h, w, c), seed)
    desc = [f"{h}x{w}x{c}"]
    n = r.randint(3, 5)
    for _ in range(n):
        x = net.cur
        _, ih, iw, ic = net.tensors[x].shape
        big = ih >= 5 and iw >= 5
        some = (
            ["conv", "conv", "dw", "add", "pool", "mul", "cat"] if big else ["conv", "dw", "pool"]
        )
        kind = r.choice(some)
        act = r.choice(["NONE", "RELU", "RELU6"])
        if kind == "conv":
            k, dil = r.choice([(1, 1), (3, 1), (3, 2), (5, 1), (2, 1)])
            stride = 1 if dil > 1 else r.choice([1, 1, 2])
            pad = "SAME" if (k - 1) * dil + 1 > min(ih, iw) else r.choice(["SAME", "VALID"])
            oc = r.choice([2, 4, 7, 8, 16])
            net.conv_d(oc, k, stride, pad, dil, act)
            desc.append(f"conv{oc} k{k} s{stride} d{dil} {pad}")
        elif kind == "dw":
            k, stride, dm = r.choice([3, 5]), r.choice([1, 2]), r.choice([1, 1, 2])
            pad = "SAME" if k > min(ih, iw) else r.choice(["SAME", "VALID"])
            net.dw(k, stride, pad, dm, act)
            desc.append(f"dw k{k} s{stride} x{dm} {pad}")
        elif kind == "pool":
            pk, stride = r.choice([(2, 2), (3, 1), (3, 2)])
            pad = "SAME" if pk > min(ih, iw) else r.choice(["SAME", "VALID"])
            op = r.choice(["AVERAGE_POOL_2D", "MAX_POOL_2D"])
            net.pool(op, pk, stride, pad, act)
            desc.append(f"{op[:3].lower()}pool k{pk} s{stride} {pad}")
        elif kind == "add":  # a residual block: 3x3 conv keeping the shape, then ADD
            net.conv_d(ic, 3, 1, "SAME", 1, "RELU").add(x, act)
            desc.append(f"res{ic}")
        elif kind == "cat":  # a branch: a 1x1 conv, concatenated with its input along W or C
            axis = r.choice([2, 3])
            oc = ic if axis == 2 else r.choice([2, 4, 8])
            net.conv_d(oc, 1, 1, "SAME", 1, act).cat(x, axis)
            desc.append(f"cat{oc} axis{axis}")
        else:  # a gate: a 1x1 conv keeping the shape, then MUL with its input
            net.conv_d(ic, 1, 1, "SAME", 1, "NONE").mul(x, act)
            desc.append(f"gate{ic}")
    layers = len(net.nodes)
    return net, r.randint(2, layers), " -> ".join(desc)


def _compare(tmp_path: Path, seed: int, board: str) -> None:
    net, k, desc = chain(seed)
    path = net.save(tmp_path / f"chain_{seed}.tflite")
    p = api.plan(path, stream=k)
    assert len(streamed_ops(p.graph)) == k, desc
    r = api.compare(path, board=board, n=3, layers=True, stream=k, workdir=tmp_path / "w")
    assert r.layers and r.ok, f"seed {seed}: {desc} (first {k} layers streamed): {r}"


@pytest.mark.parametrize("seed", range(100, 112))
def test_random_chains_streamed_match_tflm_on_the_host(tmp_path: Path, seed: int) -> None:
    _compare(tmp_path, seed, "host")


@pytest.mark.qemu
@pytest.mark.parametrize(("seed", "board"), [(200, "stm32f407"), (201, "stm32f407"),
                                             (202, "samd21"), (203, "samd21"),
                                             (222, "samd21"), (223, "stm32f746"),
                                             (230, "stm32f407")])  # fmt: skip
def test_random_chains_streamed_match_tflm_in_qemu(tmp_path: Path, seed: int, board: str) -> None:
    _compare(tmp_path, seed, board)


def test_two_segments_where_two_stages_peak(tmp_path: Path, monkeypatch) -> None:
    """A detector whose first stage and head both set peaks (tests/models/real/tiny_det.tflite:
    the head concatenates an upsampled branch): "min" streams both, one segment after the
    other, for a smaller arena than the best single segment; `plan` says so; bit-exact on the
    host layer by layer and in QEMU (Cortex-M7)."""
    model = MODELS / "real" / "tiny_det.tflite"
    two = api.plan(model, stream="min")
    segs = [op for op in two.graph.ops if op.kind == "STREAM"]
    assert len(segs) == 2 and "CONCATENATION" in {la.kind for la in segs[1].attrs["layers"]}
    monkeypatch.setattr(streams, "MAX_SEGMENTS", 1)
    one = api.plan(model, stream="min")
    monkeypatch.undo()
    assert [op.kind for op in one.graph.ops].count("STREAM") == 1
    assert two.arena_bytes < one.arena_bytes < two.unstreamed_arena
    text = "\n".join(streams.describe(two))
    assert text.count("run one output row at a time") == 2, text
    for board in ("host", "stm32f746"):
        r = api.compare(model, board=board, n=2, layers=board == "host", stream="min",
                        workdir=tmp_path / board)  # fmt: skip
        assert r.ok and r.mismatches == 0, str(r)


def test_resnet8_streamed_arena_is_under_half_of_tflm_and_bit_exact(tmp_path: Path) -> None:
    plain = api.plan(RESNET, stream="off")
    small = api.plan(RESNET, stream="min")
    assert small.arena_bytes <= TFLM_RESNET_MIN_ARENA // 2 < plain.arena_bytes
    assert small.unstreamed_arena == plain.arena_bytes
    assert sum(la.macs for la in small.layers) == sum(la.macs for la in plain.layers)
    r = api.compare(RESNET, n=3, layers=True, stream="min", workdir=tmp_path)
    assert r.layers and r.ok, str(r)


# A clean environment (no estimate: its QEMU trace of ResNet-8 on the M0+ takes minutes).
CLEAN_ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TINYCOMPILE_ESTIMATE": "off"}


def test_plan_for_samd21_streams_resnet8_and_says_why(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "tinycompile.cli", "plan", str(RESNET), "--board", "samd21"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=CLEAN_ENV)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "board samd21: FITS" in out
    assert "streamed: ops #0 #1 #2 #3 #4 #6 run one output row at a time" in out
    assert "MACs unchanged" in out and "arena without streaming: 33,312 B" in out
    off = subprocess.run(
        [*cmd, "--stream", "off"], capture_output=True, text=True, cwd=tmp_path, env=CLEAN_ENV
    )
    assert off.returncode == 1 and "DOES NOT FIT" in off.stdout
    assert "by rows" in off.stdout and "fits" in off.stdout  # the advisor's way out
    bad = subprocess.run(
        [*cmd, "--stream", "1"], capture_output=True, text=True, cwd=tmp_path, env=CLEAN_ENV
    )
    assert bad.returncode == 2 and "cannot stream the first 1 layers" in bad.stderr


@pytest.mark.qemu
def test_resnet8_board_image_fits_the_samd21(tmp_path: Path) -> None:
    """The real board image (exact stack) links within the samd21's 32 KB; its emulator build
    runs bit-exactly in tests/test_emulator_models.py (20 inputs, every layer)."""
    p = api.plan(RESNET, board="samd21")
    assert streamed_ops(p.graph), "the samd21 needs the first layers streamed"
    fw = api.build_board(p, "samd21", tmp_path / "board").firmware
    assert fw.size.fits and fw.size.sram_used <= fw.size.sram_total == 32 * 1024


def test_streamed_builds_are_reproducible_and_plan_json_says_what_is_streamed(
    tmp_path: Path,
) -> None:
    a = api.generate(api.plan(RESNET, stream="min"), tmp_path / "a")
    b = api.generate(api.plan(RESNET, stream="min"), tmp_path / "b")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    cmd = [sys.executable, "-m", "tinycompile.cli", "plan", str(RESNET), "--json"]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    d = json.loads(subprocess.run([*cmd, "--stream", "6"], capture_output=True, text=True,
                                  env=env, check=True).stdout)  # fmt: skip
    assert d["streamed_ops"] == [0, 1, 2, 3, 4, 6] and d["unstreamed_arena_bytes"] == 33_312
    assert d["layers"][0]["op"] == "STREAM" and d["peak_arena_bytes"] < 33_312
