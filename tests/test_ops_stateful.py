"""Stateful operators (SVDF) and the state they keep: sequences compared with TFLM step by step
(every output, every layer and the state after every input), state reset, the planner's state
region, and the configurations refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS
from modelgen.ops_stateful import Q_IN, _svdf_options, svdf
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.build import HOST_CFLAGS, host_cc
from tinycompile.errors import CompileError
from tinycompile.fit import check_fit
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import problems
from tinycompile.report import plan_dict, plan_table
from tinycompile.run.inputs import make_inputs
from tinycompile.run.reference import run_tflm

SVDF = sorted((MODELS / "ops").glob("svdf_*.tflite"))
STEPS = 24


@pytest.mark.parametrize("path", SVDF, ids=lambda p: p.stem)
def test_svdf_sequence_matches_tflm_step_by_step(path: Path) -> None:
    """24 inputs in order through one instance: every output, every layer and the state after
    every input equal TFLM's (one interpreter, never reset); and the state matters: TFLM reset
    after every input gives other outputs."""
    r = api.compare(path, n=STEPS, seed=7)
    assert r.ok, str(r)
    assert r.samples == STEPS and len(r.state) == 1 and r.state[0]["mismatches"] == 0
    state = r.result.state
    assert state is not None and state.shape[0] == STEPS and np.any(state[-1] != state[0])
    xs = make_inputs(api.plan(path).graph, STEPS, 7)[0]
    fresh = run_tflm(path, [xs], reset_between=True).outputs[0]
    assert not np.array_equal(fresh.reshape(STEPS, -1), r.result.outputs[0].reshape(STEPS, -1))


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_svdf_sequences_match_tflm_in_qemu(board: str, tmp_path: Path) -> None:
    """The fast paths (four filters per pass over the input; on the Cortex-M7 SMLAD over an
    int16 state of zero point 0) keep TFLM's outputs and state over a sequence, for every SVDF
    model (int16 state, batch 2, ranks 1 and 2; int8 state with a zero point)."""
    for path in SVDF:
        r = api.compare(path, board=board, n=8, seed=7, workdir=tmp_path / path.stem)
        assert r.ok and r.mismatches == 0, f"{path.stem}: {r}"


def test_state_region_in_plan_and_fit() -> None:
    path = MODELS / "ops" / "svdf_s16_rank1.tflite"
    p = api.plan(path)
    assert p.state_bytes == 2 * 8 * 10 and list(p.state) == [4]
    assert p.arena_bytes < p.sram_bytes
    d = plan_dict(p)
    assert d["state_bytes"] == 160 and d["state_tensors"][0]["dtype"] == "int16"
    assert "state (own region):" in plan_table(p)
    v = check_fit(p, "samd21")
    assert v.state == 160 and v.sram_need == p.arena_bytes + 160 + v.stack + 512
    assert v.as_dict()["state_bytes"] == 160


HARNESS = r"""
#include <stdio.h>
#include <string.h>
#include "tc_model.h"
int main(void)
{
    static int8_t first[64][64];
    int8_t *in = (int8_t *)tc_input(0);
    unsigned n = tc_output_info[0].bytes;
    int differ = 0;
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 2) {
            tc_reset_state();
        }
        for (int s = 0; s < 24; s++) {
            for (unsigned i = 0; i < tc_input_info[0].bytes; i++) {
                in[i] = (int8_t)((s * 37 + (int)i * 11) % 251 - 125);
            }
            tc_invoke();
            if (pass == 0) {
                memcpy(first[s], tc_output(0), n);
            } else if (pass == 1) {
                differ += memcmp(first[s], tc_output(0), n) != 0;
            } else if (memcmp(first[s], tc_output(0), n) != 0) {
                printf("after tc_reset_state: sample %d differs\n", s);
                return 1;
            }
        }
    }
    if (differ == 0) {
        printf("without a reset the second pass repeats the first: no state kept\n");
        return 1;
    }
    return 0;
}
"""


@pytest.mark.parametrize("name", ["svdf_s16_rank1", "svdf_s8_state_zp"])
def test_reset_state_restarts_the_sequence(tmp_path: Path, name: str) -> None:
    """A second run of the same inputs differs at first (the state persists until the memory
    window is refilled); after tc_reset_state() it repeats the first run exactly (int8 state
    resets to its zero point, as at start-up)."""
    project = api.generate(MODELS / "ops" / f"{name}.tflite", tmp_path / "p")
    (tmp_path / "main.c").write_text(HARNESS)
    srcs = [*(project / "model").glob("*.c"), *(project / "runtime" / "kernels").glob("*.c")]
    exe = tmp_path / "harness"
    inc = ["-I", str(project / "model"), "-I", str(project / "runtime" / "include")]
    cmd = [host_cc(), *HOST_CFLAGS, "-Werror", *inc, str(tmp_path / "main.c"), *map(str, srcs)]
    subprocess.run([*cmd, "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def _graph(tensors: list[T], nodes: list[Node], outputs: list[int]):
    return read_tflite(write(tensors, nodes, [0], outputs), source="t.tflite")


def _svdf_graph(**kw):
    return read_tflite(svdf(batch=1, n_input=8, units=4, rank=1, memory=3, **kw), source="s")


def _refusal(g) -> str:
    with pytest.raises(CompileError) as e:
        api.plan(g)
    return str(e.value)


def test_svdf_state_must_be_variable() -> None:
    g = _svdf_graph()
    g.t(4).variable = False
    assert "input tensor 4 is never produced" in _refusal(g)
    g = _svdf_graph()
    g.t(4).variable = False
    g.inputs.append(4)
    g.t(4).dtype = "int8"  # a graph input has to be int8 to get as far as the op
    assert "state tensor 4 is not a variable tensor" in _refusal(g)


def test_svdf_refusals() -> None:
    g = _svdf_graph()
    g.ops[0].inputs[3] = -1
    assert "the bias is absent" in _refusal(g)
    g = _svdf_graph()
    g.ops[0].attrs["rank"] = 3
    assert "rank 3 does not divide the 4 filters" in _refusal(g)
    g = _svdf_graph()
    g.t(4).dtype = "int8"
    assert "activation state is int8 but weights_time is int16" in _refusal(g)
    g = _svdf_graph()
    g.t(3).quant.scale[0] = 1e-3  # TFLM: |bias - state x time| < 1e-5, absolute
    assert "bias scale is not state scale x weights_time scale" in _refusal(g)


def _svdf_s16_input() -> bytes:
    """QUANTIZE int8 -> int16, then an SVDF reading that int16 input (int16 weights and state)."""
    rng = np.random.default_rng(5)
    f, n, mem = 4, 8, 5
    bias_s = float(np.float32(np.float32(0.001) * np.float32(2e-5)))
    tensors = [
        T("x", (1, n), quant=Q_IN),
        T("x16", (1, n), "int16", quant=(0.0002, 0)),
        T("wf", (f, n), quant=(0.01, 0), data=rng.integers(-127, 128, (f, n)).astype(np.int8)),
        T("wt", (f, mem), "int16", quant=(2e-5, 0),
          data=rng.integers(-3000, 3000, (f, mem)).astype(np.int16)),
        T("b", (f,), "int32", quant=(bias_s, 0), data=np.zeros(f, np.int32)),
        T("st", (1, mem * f), "int16", quant=(0.001, 0), variable=True),
        T("y", (1, f), quant=(0.05, 0)),
    ]  # fmt: skip
    svdf_node = Node("SVDF", [1, 2, 3, 4, 5], [6], "SVDFOptions", _svdf_options(1))
    return write(tensors, [Node("QUANTIZE", [0], [1]), svdf_node], [0], [6])


def test_svdf_int16_input_refused_as_tflm_refuses_it(tmp_path: Path) -> None:
    """TFLM's PrepareSvdf wants a float32 or int8 input: an int16 one fails to prepare. The
    compiler refuses it too, naming that reason (not the generic 16x8 message)."""
    path = tmp_path / "svdf_s16_input.tflite"
    path.write_bytes(_svdf_s16_input())
    with pytest.raises(RuntimeError):
        run_tflm(path, [np.zeros((1, 1, 8), np.int8)])
    want = (
        "op #1 SVDF: int16 input tensor 1 is not supported: TFLM's SVDF takes an int8 (or"
        " float32) input only; int16 is for weights_time and the activation state"
    )
    assert [e.line() for e in api.check(path)] == [f"{path}: {want}"]
    assert want in _refusal(read_tflite(path.read_bytes(), source="s"))


def test_variable_tensors_are_never_graph_io_or_op_outputs() -> None:
    g = _svdf_graph()
    g.outputs.append(4)
    assert "variable tensor 4 is a graph input or output" in _refusal(g)
    g = _svdf_graph()
    g.ops[0].outputs = [4]
    assert "output tensor 4 is a variable" in _refusal(g)


def test_int16_activations_still_refused_outside_state() -> None:
    """int16 between ordinary ops is 16x8 quantization, refused for an op with no int16 path."""
    tensors = [
        T("x", (1, 8), quant=Q_IN),
        T("h", (1, 8), "int16", quant=(0.001, 0)),
        T("y", (1, 8), quant=Q_IN),
    ]
    g = _graph(tensors, [Node("HARD_SWISH", [0], [1]), Node("HARD_SWISH", [1], [2])], [2])
    want = "op #0 HARD_SWISH: int16 activations are not supported for HARD_SWISH (16x8)"
    assert want in _refusal(g)  # TFLM has no int16 HARD_SWISH


def test_quantize_int16_pairs_and_refusals() -> None:
    """int8 <-> int16, int16 -> int16 and the int32 pairs TFLM allows are planned, int16 graph
    outputs too (16x8), int32 graph inputs read by QUANTIZE; int32 -> int32, float32 -> int32
    and an int32 graph input read by another op are refused."""
    for m in ("quantize_s8_s16_s8", "quantize_s16_clamp"):
        kinds = [(g.t(op.inputs[0]).dtype, g.t(op.outputs[0]).dtype) for g in [api.plan(
            MODELS / "ops" / f"{m}.tflite").graph] for op in g.ops]  # fmt: skip
        assert ("int8", "int16") in kinds and ("int16", "int8") in kinds
    x = T("x", (1, 8), quant=Q_IN)
    g = _graph([x, T("h", (1, 8), "int32", quant=(0.001, 0)), T("y", (1, 8), "int16",
               quant=(0.001, 0)), T("z", (1, 8), quant=Q_IN)],
               [Node("QUANTIZE", [0], [1]), Node("QUANTIZE", [1], [2]),
                Node("QUANTIZE", [2], [3])], [3])  # fmt: skip
    assert [op.kind for op in api.plan(g).graph.ops] == ["QUANTIZE"] * 3
    g = _graph([x, T("h", (1, 8), "int32", quant=(0.001, 0)), T("k", (1, 8), "int32",
               quant=(0.002, 0))], [Node("QUANTIZE", [0], [1]), Node("QUANTIZE", [1], [2])],
               [2])  # fmt: skip
    assert "op #1 QUANTIZE: int32 -> int32 quantization is not supported (TFLM has none)" in (
        _refusal(g)
    )
    g = _graph([x, T("y", (1, 8), "int16", quant=(0.001, 0))], [Node("QUANTIZE", [0], [1])], [1])
    assert api.plan(g).graph.t(1).dtype == "int16"  # an int16 output: a 16x8 interface
    g = _graph([T("w", (1, 8), "int32", quant=(0.001, 0)), x], [Node("QUANTIZE", [0], [1])], [1])
    assert api.plan(g).graph.t(0).dtype == "int32"  # an int32 input QUANTIZE reads (TFLM's)
    g = _graph([T("w", (1, 8), "int32", quant=(0.001, 0)), x], [Node("RELU", [0], [1])], [1])
    assert "graph input/output tensor 0 is int32" in " ".join(str(e) for e in problems(g))
