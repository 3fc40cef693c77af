"""UNIDIRECTIONAL_SEQUENCE_LSTM (int8, int16 cell state): the converted models hold what TFLM
expects, sequences of inputs match TFLM step by step (outputs, every layer, both states after
every input) on the host and in QEMU, the compile-time scales, and the configurations refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ops.base import decode, unit_of
from tinycompile.ops.lstm import (
    cell_scale_power,
    fc_multiplier,
    mul_multiplier,
    quantized_cell_clip,
    tanh_input_scaling,
)
from tinycompile.run.inputs import make_inputs
from tinycompile.run.reference import run_tflm

LSTM = sorted((MODELS / "ops").glob("lstm_*.tflite"))
STEPS = 24


def _graph(name: str):
    return read_tflite((MODELS / "ops" / f"{name}.tflite").read_bytes(), source=name)


@pytest.mark.parametrize("path", LSTM, ids=lambda p: p.stem)
def test_converted_model_is_tflm_integer_lstm(path: Path) -> None:
    """The converter's fused op: int8 input/output, per-tensor int8 weights with zero point 0,
    int32 biases, an int8 hidden state and an int16 cell state (zero point 0, a power-of-two
    scale) as variable tensors, no peephole/projection/layer norm, TANH, cell_clip 10."""
    g = read_tflite(path.read_bytes(), source=path.name)
    (op,) = [o for o in g.ops if o.kind == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
    t = [g.t(i) if i >= 0 else None for i in op.inputs]
    assert t[0].dtype == "int8" and g.t(op.outputs[0]).dtype == "int8"
    for i in range(1, 9):
        assert t[i].dtype == "int8" and t[i].is_const and not t[i].quant.per_channel
        assert t[i].quant.zp == 0
    assert all(t[i].dtype == "int32" for i in range(12, 16))
    assert all(t[i] is None for i in (9, 10, 11, 16, 17, 20, 21, 22, 23))
    assert t[18].variable and t[18].dtype == "int8"
    assert t[19].variable and t[19].dtype == "int16" and t[19].quant.zp == 0
    assert np.log2(t[19].quant.s) == round(np.log2(t[19].quant.s))  # a power of two
    decode(g)
    assert op.attrs["activation"] == "TANH" and op.attrs["cell_clip"] == 10.0
    assert op.attrs["time_major"] is (path.stem == "lstm_time_major")


@pytest.mark.parametrize("path", LSTM, ids=lambda p: p.stem)
def test_lstm_sequence_matches_tflm_step_by_step(path: Path) -> None:
    """24 inputs in order through one instance: every output, every layer and both states after
    every input equal TFLM's (never reset); the state carries over (TFLM reset after every
    input gives other outputs) and the outputs are alive (many distinct values)."""
    r = api.compare(path, n=STEPS, seed=7)
    assert r.ok, str(r)
    assert r.samples == STEPS and len(r.state) == 2
    assert all(s["mismatches"] == 0 for s in r.state)
    state = r.result.state
    assert state is not None and state.shape[0] == STEPS and np.any(state[-1] != state[0])
    outs = r.result.outputs[0].reshape(STEPS, -1)
    assert len(np.unique(outs)) > 20
    xs = make_inputs(api.plan(path).graph, STEPS, 7)[0]
    fresh = run_tflm(path, [xs], reset_between=True).outputs[0]
    assert not np.array_equal(fresh.reshape(STEPS, -1), outs)


@pytest.mark.parametrize(
    "name,batches,time_major", [("lstm_batch2", 2, 0), ("lstm_time_major", 3, 1)]
)
def test_batch_and_time_major_reach_the_kernel(name: str, batches: int, time_major: bool) -> None:
    """The models above exercise the kernel's batch loop and time-major indexing (compared with
    TFLM in test_lstm_sequence_matches_tflm_step_by_step), and every batch row is alive."""
    p = api.plan(MODELS / "ops" / f"{name}.tflite")
    (ps,) = [x for x in p.lowering.params if x.ctype == "tc_lstm_params_t"]
    assert ps.fields["batches"] == batches and ps.fields["time_major"] == time_major
    r = api.compare(MODELS / "ops" / f"{name}.tflite", n=4, seed=1, layers=False)
    y = r.result.outputs[0].reshape(4, *p.graph.t(p.graph.outputs[0]).shape)
    rows = np.moveaxis(y, 2 if time_major else 1, 0)  # batch row first
    assert r.ok and all(len(np.unique(row)) > 10 for row in rows)


@pytest.mark.qemu
@pytest.mark.parametrize(
    "board,name",
    [
        ("stm32f746", "lstm_seq"),
        ("stm32f746", "lstm_last"),
        ("samd21", "lstm_last"),
        ("stm32f746", "lstm_time_major"),
        ("samd21", "lstm_batch2"),
    ],
)
def test_lstm_matches_tflm_in_qemu(board: str, name: str) -> None:
    r = api.compare(MODELS / "ops" / f"{name}.tflite", n=STEPS, seed=3, board=board)
    assert r.ok, str(r)
    assert all(s["mismatches"] == 0 for s in r.state)


def test_compile_time_scales() -> None:
    """As TFLM's Prepare: FC multipliers into Q3.12 from double scale products, the inter-gate
    Mul multipliers, CheckedLog2 of the cell scale, the tanh input scaling LstmTanh derives from
    it and the truncated quantized cell clip."""
    assert cell_scale_power(2.0**-15) == -15 and cell_scale_power(2.0**-11) == -11
    assert tanh_input_scaling(-15) == (3, 3)  # (x * 3 + 4) >> 3
    assert tanh_input_scaling(-12) == (3, 0)  # the gates' tanh
    assert tanh_input_scaling(-11) == (6, 0)  # a trained classifier's cell (tests/models/real)
    assert tanh_input_scaling(-9) == (24, 0)
    assert tanh_input_scaling(-11) == (6, 0)
    assert quantized_cell_clip(10.0, 2.0**-15) == 32767
    assert quantized_cell_clip(0.7, 2.0**-15) == 22937  # 22937.6 truncated
    assert mul_multiplier(2.0**-15, 2.0**-15, 2.0**-15) == (1 << 30, -14)
    assert fc_multiplier(0.5, 2.0**-12) == (1 << 30, 0)
    g = _graph("lstm_seq")
    decode(g)
    d = unit_of(g.ops[0]).prepare(g.ops[0], g)
    fields = dict(d.fields)
    hs = g.t(g.ops[0].inputs[18])
    assert (fields["hidden_mult"], fields["hidden_shift"]) == mul_multiplier(
        2.0**-15, 2.0**-15, hs.quant.s
    )
    assert fields["hidden_zp"] == hs.quant.zp and fields["cell_clip"] == 32767
    assert d.scratch == 0 and d.in_place_scratch is None


def _refusal(g) -> str:
    with pytest.raises(CompileError) as e:
        api.plan(g)
    return str(e.value)


def test_lstm_refusals() -> None:
    def mutate(fn) -> str:
        g = _graph("lstm_seq")
        fn(g, g.ops[0])
        return _refusal(g)

    assert "peephole (input 10) is not supported" in mutate(
        lambda g, op: op.inputs.__setitem__(10, op.inputs[5])
    )
    assert "projection (input 16) is not supported" in mutate(
        lambda g, op: op.inputs.__setitem__(16, op.inputs[5])
    )
    assert "CIFG (no input gate) is not supported" in mutate(
        lambda g, op: op.inputs.__setitem__(1, -1)
    )
    assert "cell gate activation RELU is not supported" in mutate(
        lambda g, op: op.attrs.__setitem__("activation", "RELU")
    )
    assert "cell_clip -1 is negative" in mutate(
        lambda g, op: op.attrs.__setitem__("cell_clip", -1.0)
    )
    # a batch-major model read as time-major: [1, 6, 5] is then 6 batch rows of 1 step
    assert "hidden state has 8 elements, not batches x units = 48" in mutate(
        lambda g, op: op.attrs.__setitem__("time_major", True)
    )
    assert "cell state is int8; int16 is needed" in mutate(
        lambda g, op: setattr(g.t(op.inputs[19]), "dtype", "int8")
    )
    assert "weights (input 6) have zero point 3" in mutate(
        lambda g, op: setattr(g.t(op.inputs[6]).quant, "zero_point", np.array([3]))
    )
