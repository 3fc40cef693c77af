"""16x8 data movement, padding, MEAN, LEAKY_RELU and TRANSPOSE_CONV (issue 24): the 16x8 audio
CNN (tests/models/real/audio16.tflite, made by tests/modelgen/ops_int16_move.py) on the host and
in QEMU, some op models in QEMU, and what stays refused, with its message.

The op models themselves (tests/models/ops/*16*.tflite) are compared with TFLM layer by layer
on 40 inputs, with a liveness check, by tests/test_ops_int16.py, and by tests/test_ops_registry.py.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph
from tinycompile.ir.validate import problems
from tinycompile.pipeline import prepare_graph
from tinycompile.run.reference import run_tflm

AUDIO = MODELS / "real" / "audio16.tflite"
OPS = MODELS / "ops"
needs_qemu = pytest.mark.skipif(
    not (shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc")),
    reason="needs qemu-system-arm and arm-none-eabi-gcc",
)


def _signal(n: int, seed: int) -> list[np.ndarray]:
    """n float32 1-D signals [n, 1, 1024, 1]: tones plus noise, within the model's range."""
    rng = np.random.default_rng(seed)
    t = np.arange(1024, dtype=np.float32)
    f = rng.uniform(0.005, 0.2, size=(n, 1))
    x = 0.6 * np.sin(2 * np.pi * f * t) + rng.normal(0, 0.3, size=(n, 1024))
    return [np.clip(x, -1.5, 1.5).astype(np.float32).reshape(n, 1, 1024, 1)]


def test_audio16_has_the_seanet_operators() -> None:
    kinds = {op.kind for op in load_model(AUDIO).ops}
    want = {"CONV_2D", "LEAKY_RELU", "PAD", "STRIDED_SLICE", "TRANSPOSE_CONV", "ADD"}
    assert want <= kinds, kinds


def test_audio16_matches_tflm_layer_by_layer() -> None:
    """40 signals, every layer bit-exact, every layer's output alive (many values, few clamped)."""
    xs = _signal(40, seed=5)
    r = api.compare(AUDIO, inputs=xs)
    assert r.layers and r.ok, str(r)
    g = load_model(AUDIO)
    tids = [op.outputs[0] for op in g.ops if g.t(op.outputs[0]).dtype == "int16"]
    ref = run_tflm(AUDIO, xs, tensor_ids=tids)
    for tid in tids:
        v = np.concatenate([s[tid].reshape(-1) for s in ref.tensors])
        assert len(np.unique(v)) > 500, tid
        assert np.mean((v == 32767) | (v == -32768)) < 0.05, tid


@needs_qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_audio16_bit_exact_in_qemu(board: str) -> None:
    """The whole audio CNN on the Cortex-M7 and the Cortex-M0+ stand-ins, every layer."""
    r = api.compare(AUDIO, board=board, inputs=_signal(4, seed=9))
    assert r.layers and r.ok, str(r)


QEMU_OPS = [
    "leaky_relu16",
    "leaky_relu16_negative",
    "padv2_16",
    "strided_slice16_neg",
    "concat16_three",
    "mean16_hw_keep",
    "tconv16_s2_same",
    "tconv16_shape_input",
    "split_v16",
]


@needs_qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("name", QEMU_OPS)
def test_int16_op_models_bit_exact_in_qemu(name: str, board: str) -> None:
    r = api.compare(OPS / f"{name}.tflite", board=board, n=6)
    assert r.layers and r.ok, str(r)


def _refusal(path: Path, edit: Callable[[Graph], None]) -> str:
    g = load_model(path)
    edit(g)
    with pytest.raises(CompileError) as e:
        prepare_graph(g)
    return str(e.value)


def _to_int16(g: Graph) -> None:
    """Every int8 activation becomes int16 with zero point 0 (a 16x8 version of the graph)."""
    for t in g.tensors:
        if t.dtype == "int8" and not t.is_const:
            t.dtype = "int16"
            t.quant.zero_point[:] = 0


@pytest.mark.parametrize(
    ("model", "kind"), [("gather_axis2", "GATHER"), ("depth_to_space_b2", "DEPTH_TO_SPACE")]
)
def test_int16_refused_where_tflm_has_no_int16_kernel(model: str, kind: str) -> None:
    """TFLM's GATHER, DEPTH_TO_SPACE and SPACE_TO_DEPTH take int8 (and float) only."""
    msg = _refusal(OPS / f"{model}.tflite", _to_int16)
    assert f"{kind}: int16 activations are not supported for {kind} (16x8)" in msg


def test_padv2_float_value_refused() -> None:
    """The converter leaves tf.pad's constant_values float32 in 16x8 models; TFLM refuses it."""

    def edit(g: Graph) -> None:
        v = g.t(g.ops[0].inputs[2])
        v.dtype, v.data = "float32", np.array([0.4], np.float32)

    msg = _refusal(OPS / "padv2_16.tflite", edit)
    assert "PADV2: float32 pad value for a int16 output (TFLM needs one type)" in msg


def test_concat16_nonzero_zero_point_refused() -> None:
    def edit(g: Graph) -> None:
        op = next(o for o in g.ops if o.kind == "CONCATENATION")
        g.t(op.inputs[1]).quant.zero_point[:] = 3

    msg = _refusal(OPS / "concat16_three.tflite", edit)
    assert "CONCATENATION: int16 activation tensor" in msg and "(16x8 needs 0)" in msg


def test_tconv16_int32_bias_refused() -> None:
    def edit(g: Graph) -> None:
        b = g.t(g.ops[0].inputs[3])
        b.dtype, b.data = "int32", b.data.astype(np.int32)

    msg = _refusal(OPS / "tconv16_s2_same.tflite", edit)
    assert "TRANSPOSE_CONV: int32 bias in a 16x8 op is not supported" in msg


def test_int32_graph_input_only_as_tconv_output_shape() -> None:
    """An int32 graph input passes validation only while TRANSPOSE_CONV's output_shape (never
    read) is its one use; read as anything else it is refused as before."""
    g = load_model(OPS / "tconv16_shape_input.tflite")
    assert not problems(g)
    shape_in = g.ops[0].inputs[0]
    g.ops[0].inputs[2] = shape_in  # now also read as the data input
    assert any("is int32; only int8, int16 and float32" in str(e) for e in problems(g))


def test_layout_mixed_int8_int16_refused() -> None:
    """A data move copies elements: input and output of different types are refused."""

    def edit(g: Graph) -> None:
        g.t(g.ops[0].outputs[0]).dtype = "int8"

    msg = _refusal(OPS / "strided_slice16_neg.tflite", edit)
    assert "STRIDED_SLICE: data tensors of mixed types ['int16', 'int8']" in msg


def test_bmm16_int8_rhs_refused() -> None:
    """TFLM's BATCH_MATMUL needs both operands of one type (no int16 x int8 weights)."""

    def edit(g: Graph) -> None:
        g.t(g.ops[0].inputs[1]).dtype = "int8"

    msg = _refusal(OPS / "bmm16.tflite", edit)
    assert "BATCH_MATMUL: int8 activation tensor" in msg and "(int16 expected)" in msg
