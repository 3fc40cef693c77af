"""16x8 quantization (int16 activations, int8 weights, int64 biases), op by op, against TFLM.

The models (tests/models/ops/*16*.tflite, made by tests/modelgen/ops_int16.py) are also compared
by tests/test_ops_registry.py; here every one runs on more inputs, layer by layer, with a check
that the comparison can fail (the activations stay alive: many distinct values, few clamped),
plus focused checks of the arithmetic and of what stays refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import INT16_REFUSED, MODELS, ROOT

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph
from tinycompile.pipeline import prepare_graph
from tinycompile.quant.qmath import multiply_by_quantized_multiplier_np, quantize_multiplier
from tinycompile.run.reference import run_tflm
from tinycompile.run.samples import batch_shape


def _is_16x8(p: Path) -> bool:
    """A 16x8 model (int16 or float32 interface), not an int8 one with int16 state inside."""
    g = load_model(p)
    return p.stem not in INT16_REFUSED and g.t(g.inputs[0]).dtype != "int8"


_OPS16 = sorted((MODELS / "ops").glob("*16*.tflite"))
INT16_MODELS = [p for p in _OPS16 if _is_16x8(p)] + [MODELS / "real" / "cnn16.tflite"]


def _rand16(g: Graph, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for tid in g.inputs:
        t = g.t(tid)
        shape = batch_shape(t, n)  # (n * rows, ...): a 1-D input's batch too
        if t.dtype == "int16":
            out.append(rng.integers(-32768, 32768, size=shape, dtype=np.int16))
        elif t.dtype == "int32":  # TRANSPOSE_CONV's output_shape (never read): n copies
            out.append(np.tile(rng.integers(1, 9, size=t.shape, dtype=np.int32), n))
        else:
            out.append(rng.uniform(-1, 1, size=shape).astype(np.float32))
    return out


@pytest.mark.parametrize("path", INT16_MODELS, ids=lambda p: p.stem)
def test_int16_model_matches_tflm_layer_by_layer(path: Path) -> None:
    g = load_model(path)
    xs = _rand16(g, 40, seed=7)
    r = api.compare(path, inputs=xs)
    assert r.layers, "no layer was compared"
    assert r.ok, str(r)
    # activations alive: TFLM's output of every layer takes many distinct values and is not
    # mostly clamped at the int16 limits, so a wrong kernel could not pass by chance
    tids = [op.outputs[0] for op in g.ops]
    ref = run_tflm(path, xs, tensor_ids=tids)
    for tid in tids:
        v = np.concatenate([s[tid].reshape(-1) for s in ref.tensors])
        assert len(np.unique(v)) >= min(48, v.size // 4), (tid, np.unique(v)[:10])
        if v.dtype == np.int16:
            assert np.mean((v == 32767) | (v == -32768)) < 0.2, tid


def test_fc16_rounds_once_in_64_bits() -> None:
    """TFLM's 16x8 FULLY_CONNECTED requantizes its int64 accumulator with a Q15 multiplier and
    one rounding; the int8 path's double rounding (int32) gives other results on these inputs,
    so the bit-exact comparison above tells the two apart."""
    path = MODELS / "ops" / "fc16_relu.tflite"
    g = load_model(path)
    op = g.ops[0]
    x, w, b, o = (g.t(t) for t in (*op.inputs, op.outputs[0]))
    xs = _rand16(g, 200, seed=3)
    ref = run_tflm(path, xs).outputs[0].reshape(200, -1)
    acc = xs[0].reshape(200, -1).astype(np.int64) @ w.data.astype(np.int64).T + b.data
    prepared = {p.op.index: p.data for p in prepare_graph(g)}[0]
    m, s = [], []
    for c in range(w.shape[0]):
        ws = float(w.quant.scale[c if w.quant.per_channel else 0])
        mc, sc = quantize_multiplier(float(x.quant.s) * ws / float(o.quant.s))
        m.append(mc)
        s.append(sc)
    in32 = np.clip(acc, -(2**31), 2**31 - 1)
    double = multiply_by_quantized_multiplier_np(in32, np.array(m), np.array(s))
    lo, hi = prepared.rq.act_min, prepared.rq.act_max
    double = np.clip(double, lo, hi)
    assert np.count_nonzero(double != ref) > 0, "the int32 path would pass: the test is blind"


def _graph_with(path: Path, edit) -> Graph:
    g = load_model(path)
    edit(g)
    return g


def _refusal(g: Graph) -> str:
    with pytest.raises(CompileError) as e:
        prepare_graph(g)
    return str(e.value)


def test_fc16_refuses_int32_bias() -> None:
    def edit(g: Graph) -> None:
        b = g.t(g.ops[0].inputs[2])
        b.dtype = "int32"
        b.data = b.data.astype(np.int32)

    msg = _refusal(_graph_with(MODELS / "ops" / "fc16_relu.tflite", edit))
    assert "op #0 FULLY_CONNECTED: int32 bias in a 16x8 op is not supported" in msg


def test_fc16_refuses_a_nonzero_zero_point() -> None:
    def edit(g: Graph) -> None:
        g.t(g.ops[0].outputs[0]).quant.zero_point[:] = 5

    msg = _refusal(_graph_with(MODELS / "ops" / "fc16_relu.tflite", edit))
    assert "has zero point 5 (16x8 needs 0)" in msg


def test_fc16_refuses_mixed_int8_int16() -> None:
    def edit(g: Graph) -> None:
        g.t(g.ops[0].outputs[0]).dtype = "int8"

    msg = _refusal(_graph_with(MODELS / "ops" / "fc16_relu.tflite", edit))
    assert "int8 activation tensor" in msg and "(int16 expected)" in msg


def test_sub16_model_tells_float_from_double_ratios() -> None:
    """sub16_same's scales give different multipliers when SUB's ratios are divided in float32
    (the int8 rule) instead of double, so its bit-exact comparison decides between the two."""
    g = load_model(MODELS / "ops" / "sub16_same.tflite")
    op = next(o for o in g.ops if o.kind == "SUB")
    a, b, o = (g.t(t) for t in (*op.inputs, op.outputs[0]))
    f32 = np.float32
    sa, sb, so = f32(a.quant.scale[0]), f32(b.quant.scale[0]), f32(o.quant.scale[0])
    tm = f32(2) * max(sa, sb)
    in_float = [float(sa / tm), float(sb / tm), float(tm / (f32(1 << 15) * so))]
    tmd = 2.0 * max(a.quant.s, b.quant.s)
    in_double = [a.quant.s / tmd, b.quant.s / tmd, tmd / ((1 << 15) * o.quant.s)]
    differ = [
        quantize_multiplier(x) != quantize_multiplier(y)
        for x, y in zip(in_float, in_double, strict=True)
    ]
    assert any(differ)


@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_cnn16_bit_exact_in_qemu(board: str) -> None:
    """The whole 16x8 CNN (float32 in, QUANTIZE to int16, conv, max pool, depthwise, pointwise,
    average pool, FC, DEQUANTIZE) on the Cortex-M7 and the Cortex-M0+ stand-ins, every layer."""
    if not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")):
        pytest.skip("needs qemu-system-arm and arm-none-eabi-gcc")
    path = MODELS / "real" / "cnn16.tflite"
    r = api.compare(path, board=board, n=12)
    assert r.layers and r.ok, str(r)
    logits = np.asarray(r.reference_outputs[0])
    assert len(np.unique(logits)) > logits.size // 2  # spread out, not saturated


@pytest.mark.parametrize("name", sorted(INT16_REFUSED))
def test_unsupported_int16_ops_are_refused_in_one_line(name: str, tmp_path: Path) -> None:
    """What TFLM runs on int8 only stays refused in a 16x8 model: exit 2, one line naming the
    model, the op and the reason, nothing written."""
    kind = INT16_REFUSED[name]
    model = MODELS / "ops" / f"{name}.tflite"
    out_dir = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "tinycompile.cli", "build", str(model), "--board", "host"]
        + ["-o", str(out_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    op_index = next(op.index for op in load_model(model).ops if op.kind == kind)
    want = f"op #{op_index} {kind}: int16 activations are not supported for {kind} ("
    assert str(model) in lines[0] and want in lines[0], lines[0]
    assert not out_dir.exists()


def test_keras_16x8_model_once_refused_now_matches() -> None:
    """tests/models/bad/int16_model (Keras Conv2D, Flatten, Dense in 16x8), refused before int16
    support, compiles and matches TFLM layer by layer (its Dense output clips a fifth of the
    random inputs' results, so it is checked for spread, not for the clipping bound above)."""
    path = MODELS / "bad" / "int16_model.tflite"
    g = load_model(path)
    r = api.compare(path, inputs=_rand16(g, 40, seed=11))
    assert r.layers and r.ok, str(r)
    assert len(np.unique(np.asarray(r.reference_outputs[0]))) > 100
