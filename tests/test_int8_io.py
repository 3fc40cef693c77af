"""``--int8-io`` (tinycompile/passes/int8_io.py): a float interface's QUANTIZE and DEQUANTIZE
dropped, the firmware taking and giving the quantized tensors.

- The pass on small written models: inputs and outputs become the quantized tensors, their
  ports say what the file shows (float, the file's tensor), the given graph is unchanged, and
  what cannot be taken as int8 is refused naming the op.
- The harness: bit-exact with TFLM on the host layer by layer, fed the float values that
  quantize to the codes given; in QEMU on the Cortex-M0+ (samd21) too.
- The CLI: ``plan --int8-io`` shows the int8 interface and a smaller arena; ``run --int8-io
  --inputs`` quantizes a user's float data as the file does; ``validate`` refuses it.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.passes.int8_io import int8_io


def _conv_opts(b) -> int:
    tflite.Conv2DOptionsStart(b)
    tflite.Conv2DOptionsAddPadding(b, tflite.Padding.SAME)
    tflite.Conv2DOptionsAddStrideW(b, 1)
    tflite.Conv2DOptionsAddStrideH(b, 1)
    tflite.Conv2DOptionsAddFusedActivationFunction(b, 1)
    return tflite.Conv2DOptionsEnd(b)


def _model(path: Path, *, second_reader: bool = False) -> Path:
    """float [1, 12, 10, 3] -> QUANTIZE -> 3x3 CONV_2D (8) -> DEQUANTIZE -> float."""
    rng = np.random.default_rng(3)
    w = rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    ts = [
        T("image", (1, 12, 10, 3), "float32"),
        T("q", (1, 12, 10, 3), quant=(0.03, -4)),
        T("w", (8, 3, 3, 3), quant=([0.01] * 8, [0] * 8), data=w),
        T(
            "b",
            (8,),
            "int32",
            quant=([0.0003] * 8, [0] * 8),
            data=rng.integers(-500, 500, 8).astype(np.int32),
        ),  # fmt: skip
        T("y", (1, 12, 10, 8), quant=(0.12, -20)),
        T("scores", (1, 12, 10, 8), "float32"),
    ]
    nodes = [
        Node("QUANTIZE", [0], [1]),
        Node("CONV_2D", [1, 2, 3], [4], "Conv2DOptions", _conv_opts),
        Node("DEQUANTIZE", [4], [5]),
    ]
    outputs = [5]
    if second_reader:  # the float input also read by a second QUANTIZE
        ts.append(T("q2", (1, 12, 10, 3), quant=(0.05, 0)))
        nodes.append(Node("QUANTIZE", [0], [6]))
        outputs.append(6)
    path.write_bytes(write(ts, nodes, [0], outputs))
    return path


def test_pass_takes_the_quantized_tensors(tmp_path: Path) -> None:
    g = load_model(_model(tmp_path / "m.tflite"))
    before = (copy.copy(g.inputs), copy.copy(g.outputs), [op.kind for op in g.ops], dict(g.ports))
    h = int8_io(g)
    assert [h.t(t).name for t in (*h.inputs, *h.outputs)] == ["q", "y"]
    assert [op.kind for op in h.ops] == ["CONV_2D"]
    pin, pout = h.ports[h.inputs[0]], h.ports[h.outputs[0]]
    assert (pin.dtype, pin.qdtype, pin.source, pin.shape) == ("float32", "int8", 0, (1, 12, 10, 3))
    assert (pout.dtype, pout.source) == ("float32", 5)
    after = (g.inputs, g.outputs, [op.kind for op in g.ops], g.ports)
    assert after == before  # the given graph is left as it was
    assert int8_io(h) is h  # nothing float left: unchanged


def test_pass_refuses_what_cannot_be_int8(tmp_path: Path) -> None:
    g = load_model(_model(tmp_path / "two.tflite", second_reader=True))
    with pytest.raises(CompileError, match=r"--int8-io: float input 'image' is read by op 0"):
        int8_io(g)


def test_host_bit_exact_layer_by_layer_and_smaller(tmp_path: Path) -> None:
    m = _model(tmp_path / "m.tflite")
    floats, ints = api.plan(m), api.plan(m, int8_io=True)
    assert ints.arena_bytes < floats.arena_bytes
    assert all(ints.graph.t(t).dtype != "float32" for b in ints.buffers for t in b.tensors)
    r = api.compare(m, n=5, layers=True, int8_io=True)
    assert r.ok and r.mismatches == 0 and any(la["compared"] for la in r.layers), str(r)


def test_qemu_m0_bit_exact(tmp_path: Path) -> None:
    m = _model(tmp_path / "m.tflite")
    r = api.compare(m, board="samd21", n=3, layers=False, int8_io=True, workdir=tmp_path / "w")
    assert r.ok and r.mismatches == 0, str(r)


def _cli(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "tinycompile.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_cli_plan_run_and_validate(tmp_path: Path) -> None:
    m = _model(tmp_path / "m.tflite")
    r = _cli("plan", str(m), "--int8-io")
    assert r.returncode == 0, r.stderr
    assert "input  'q'  1x12x10x3 int8" in r.stdout and "QUANTIZE" not in r.stdout
    x = np.random.default_rng(0).uniform(-3, 3, (4, 12, 10, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "y.npz"
    r = _cli("run", str(m), "--int8-io", "--inputs", str(tmp_path / "x.npy"),
             "--outputs", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr + r.stdout
    with np.load(out) as z:
        (y,) = [z[k] for k in z.files]
    assert y.shape == (4, 12, 10, 8)
    v = _cli("validate", str(m), "--board", "stm32f746", "--port", "/dev/null", "--int8-io")
    assert v.returncode == 2 and "validate does not take --int8-io" in v.stderr


def test_float_input_quantized_in_place(tmp_path: Path) -> None:
    """Without --int8-io the QUANTIZE writes its int8 output over its float input's first bytes
    (``Prepared.in_place_shrinks``): its step holds the float input only, and the buffer holds
    the int8 tensor alone afterwards; bit-exact on the host and in QEMU (Cortex-M7)."""
    m = _model(tmp_path / "m.tflite")
    p = api.plan(m)
    q = p.graph.ops[0]
    assert q.kind == "QUANTIZE" and p.offset(q.inputs[0]) == p.offset(q.outputs[0])
    assert p.layers[0].live_bytes == 12 * 10 * 3 * 4
    b = p.buffers[p.storage[q.outputs[0]]]
    assert b.size_at(1) == 12 * 10 * 3 < b.size_at(0)
    for board in ("host", "qemu-m7"):
        r = api.compare(m, board=board, n=3, layers=board == "host", workdir=tmp_path / board)
        assert r.ok and r.mismatches == 0, str(r)


def _dequantize_model(path: Path, dtype: str) -> Path:
    """int8 / int16 [1, 9, 7, 5] -> DEQUANTIZE -> float."""
    ts = [T("x", (1, 9, 7, 5), dtype, quant=(0.021, -3 if dtype == "int8" else 0)),
          T("y", (1, 9, 7, 5), "float32")]  # fmt: skip
    path.write_bytes(write(ts, [Node("DEQUANTIZE", [0], [1])], [0], [1]))
    return path


def test_float_output_dequantized_in_place(tmp_path: Path) -> None:
    """Without --int8-io the final DEQUANTIZE writes its float output from its int8 input's
    first byte on (``Prepared.in_place_grows``, a backward walk): its step holds the float
    output only, the buffer grows upwards there; from int16 too. Bit-exact on the host and in
    QEMU (Cortex-M7; the Cortex-M0+ samd21 for int16)."""
    m = _model(tmp_path / "m.tflite")
    p = api.plan(m)
    d = p.graph.ops[-1]
    assert d.kind == "DEQUANTIZE" and p.offset(d.inputs[0]) == p.offset(d.outputs[0])
    assert p.layers[-1].live_bytes == 12 * 10 * 8 * 4  # the float output alone
    b = p.buffers[p.storage[d.outputs[0]]]
    assert not b.down and b.size_at(len(p.layers) - 2) == 12 * 10 * 8 < b.size_at(len(p.layers) - 1)
    r = api.compare(m, board="qemu-m7", n=3, layers=False, workdir=tmp_path / "m7")
    assert r.ok and r.mismatches == 0, str(r)
    for dtype, board in (("int8", "host"), ("int16", "host"), ("int16", "samd21")):
        m = _dequantize_model(tmp_path / f"{dtype}.tflite", dtype)
        p = api.plan(m)
        assert p.arena_bytes == 1264, (dtype, p.arena_bytes)  # 9 * 7 * 5 floats, 8-aligned
        r = api.compare(m, board=board, n=3, layers=False, workdir=tmp_path / f"{dtype}{board}")
        assert r.ok and r.mismatches == 0, str(r)
