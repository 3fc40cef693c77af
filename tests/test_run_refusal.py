"""Run-time refusals: TFLM's int8 RSQRT fails Invoke on a negative input; the compiled layer
refuses it too (``tc_invoke()`` returns 1 + the layer and stops), and ``run`` / ``compare`` call
that agreement with TFLM only when TFLM failed at the same input and op.

The model (written here with the flatbuffer writer; the converter always gives RSQRT a zero
point of -128, where no input is negative): MAXIMUM with a negative constant, then RSQRT, so
the refusing layer is not the first one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.run.compare import refusal_verdict
from tinycompile.run.ioformat import Refusal
from tinycompile.run.reference import TflmRefusal, run_tflm

Q = (0.05, -20)  # inputs below -20 are negative values
BAD = 5  # the first input with a negative value


def _model(tmp: Path) -> Path:
    tensors = [
        T("x", (1, 3, 5), quant=Q),
        T("floor", (1,), quant=Q, data=np.array([-40], np.int8)),  # -1.0: lets negatives through
        T("h", (1, 3, 5), quant=Q),
        T("y", (1, 3, 5), quant=(0.02, -128)),
    ]
    path = tmp / "rsqrt_signed.tflite"
    nodes = [Node("MAXIMUM", [0, 1], [2]), Node("RSQRT", [2], [3])]
    path.write_bytes(write(tensors, nodes, [0], [3]))
    return path


def _inputs(n: int = 9) -> np.ndarray:
    x = np.random.default_rng(3).integers(-20, 128, (n, 3, 5)).astype(np.int8)
    x[BAD, 1, 2] = -25
    x[BAD + 2, 0, 0] = -60
    return x


def test_tflm_fails_where_the_input_goes_negative(tmp_path: Path) -> None:
    """The reference itself: TFLM runs the inputs before and fails at op 1 on input BAD."""
    ref = run_tflm(_model(tmp_path), [_inputs()], stop_on_refusal=True)
    assert ref.refused is not None
    assert (ref.refused.sample, ref.refused.op_index, ref.refused.kind) == (BAD, 1, "RSQRT")
    assert ref.outputs[0].shape[0] == BAD and len(np.unique(ref.outputs[0])) > 20
    with pytest.raises(RuntimeError):
        run_tflm(_model(tmp_path), [_inputs()])


@pytest.mark.parametrize("board", ["host", "qemu-m4"])
def test_refusal_agrees_with_tflm(tmp_path: Path, board: str) -> None:
    """Every layer of the inputs before the refusal is bit-exact; both stop at input BAD, op 1."""
    r = api.compare(_model(tmp_path), board=board, inputs=[_inputs()], layers=True)
    assert r.samples == BAD and r.mismatches == 0 and len(r.layers) == 2
    assert r.result.refused == Refusal(BAD, 1, 1, "RSQRT", "negative value")
    assert r.refusal is not None and r.refusal["agrees"] and r.ok
    assert r.refusal["tflm"]["op_index"] == 1
    assert r.refusal["line"] == (
        f"input {BAD}: layer 1 (RSQRT) refused its input: negative value, as TFLM does"
    )


def test_only_one_side_refusing_is_a_mismatch() -> None:
    ours = Refusal(3, 1, 1, "RSQRT", "negative value")
    theirs = TflmRefusal(3, 1, "RSQRT", "Rsqrt is only defined for positive values")
    assert refusal_verdict(None, None) is None
    assert refusal_verdict(ours, theirs)["agrees"]
    assert not refusal_verdict(ours, None)["agrees"]
    assert not refusal_verdict(None, theirs)["agrees"]
    assert not refusal_verdict(ours, TflmRefusal(4, 1, "RSQRT", ""))["agrees"]
    assert not refusal_verdict(ours, TflmRefusal(3, 0, "MAXIMUM", ""))["agrees"]


def test_run_reports_the_refusal_with_exit_2(tmp_path: Path) -> None:
    path = _model(tmp_path)
    np.save(tmp_path / "x.npy", _inputs())
    cmd = [sys.executable, "-m", "tinycompile.cli", "run", str(path), "--board", "host"]
    r = subprocess.run(
        [*cmd, "--inputs", str(tmp_path / "x.npy"), "--outputs", str(tmp_path / "y.npy")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"bit-exact with TFLM: {BAD} inputs" in r.stdout
    assert "layer 1 (RSQRT) refused its input: negative value, as TFLM does" in r.stdout
    assert not (tmp_path / "y.npy").exists()  # incomplete outputs are not written
    ok = np.maximum(_inputs(), Q[1])  # no negative value: runs through, exit 0
    np.save(tmp_path / "ok.npy", ok)
    r = subprocess.run([*cmd, "--inputs", str(tmp_path / "ok.npy")], capture_output=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout


def test_only_layers_that_can_refuse_are_checked(tmp_path: Path) -> None:
    """The signed model's RSQRT returns a status; a zero point of -128 (no negative input
    possible: the converted models) keeps the plain table and tc_invoke always returns 0."""
    src = api.generate(_model(tmp_path), tmp_path / "p") / "model"
    c, h = (src / "tc_model.c").read_text(), (src / "tc_model.h").read_text()
    assert "if (tc_lut_checked_s8(" in c and "return 2;" in c and "#define TC_CAN_REFUSE 1" in h
    assert "tc_maximum_s8(" in c and "if (tc_maximum_s8(" not in c
    src = api.generate(ROOT / "tests/models/ops/rsqrt_a.tflite", tmp_path / "q") / "model"
    c, h = (src / "tc_model.c").read_text(), (src / "tc_model.h").read_text()
    assert "tc_lut_checked_s8" not in c and "tc_lut_s8(" in c and "#define TC_CAN_REFUSE 0" in h
    assert "int tc_invoke(void);" in h
