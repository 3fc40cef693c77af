"""Elementwise unary operators (ABS, ELU) and the refusal of those TFLM runs on float32 only.

The models (``python -m tests.modelgen.ops_unary``) are compared with TFLM layer by layer in
tests/test_ops_registry.py; here the tables are checked against TFLM's formulas directly and
the refusals give their one-line message.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.ir import Op
from tinycompile.ops.base import FLOAT_ONLY_IN_TFLM, unit_of
from tinycompile.ops.unary import abs_lut, elu_lut


def test_abs_same_scale_is_exact_offset() -> None:
    lut = abs_lut(0.04, -5, 0.04, -128)
    for q in range(-128, 128):
        assert lut[q & 0xFF] == min(127, abs(q + 5) - 128)


def test_elu_table_follows_the_float_formula() -> None:
    lut = elu_lut(0.03, 20, 0.025, -60)
    for q in range(-128, 128):
        x = 0.03 * (q - 20)
        y = np.expm1(x) if x < 0 else x
        assert abs(int(lut[q & 0xFF]) - max(-128, min(127, round(y / 0.025) - 60))) <= 1


@pytest.mark.parametrize("kind", sorted(FLOAT_ONLY_IN_TFLM))
def test_float_only_operators_are_refused_with_the_reason(kind: str) -> None:
    op = Op(index=3, kind=kind, inputs=[0], outputs=[1])
    with pytest.raises(CompileError, match=f"operator {kind} is not supported: TFLM runs {kind} "
                       "on float32 only"):  # fmt: skip
        unit_of(op)


def test_int16_elu_refused() -> None:
    import numpy as np

    from tinycompile.ir import Graph, Quant, Tensor
    from tinycompile.ops import load_all

    q = Quant(np.array([0.001], np.float32), np.array([0], np.int64))
    ts = [Tensor(0, "x", (1, 4), "int16", q), Tensor(1, "y", (1, 4), "int16", q)]
    g = Graph("g", ts, [Op(0, "ELU", [0], [1])], [0], [1])
    with pytest.raises(CompileError, match=r"int16 activations are not supported for ELU \(TFLM"):
        load_all()["ELU"].prepare(g.ops[0], g)


def _tflm_table(tmp_path, kind: str, q_in, q_out) -> np.ndarray:
    """TFLM's output for every int8 input of a one-op model, indexed by the input's bits."""
    from modelgen.ops_unary import _unary
    from tflite_micro.python.tflite_micro import runtime

    path = tmp_path / f"{kind}.tflite"
    path.write_bytes(_unary(kind, q_in, q_out, (1, 256)))
    it = runtime.Interpreter.from_file(str(path))
    x = np.arange(-128, 128, dtype=np.int8)
    it.set_input(x.reshape(1, 256), 0)
    it.invoke()
    y = np.empty(256, np.int8)
    y[x.view(np.uint8)] = it.get_output(0).ravel()
    return y


SCALES = [((s1, z1), (s2, z2)) for s1, z1, s2, z2 in np.random.default_rng(11).uniform(
    [0.002, -128, 0.002, -128], [0.2, 127, 0.2, 127], (12, 4))]  # fmt: skip


@pytest.mark.parametrize(("kind", "fn"), [("ABS", abs_lut), ("ELU", elu_lut)])
def test_tables_match_tflm_on_every_input_for_many_scales(tmp_path, kind: str, fn) -> None:
    for (s1, z1), (s2, z2) in SCALES:
        q_in, q_out = (float(np.float32(s1)), int(z1)), (float(np.float32(s2)), int(z2))
        lut = fn(q_in[0], q_in[1], q_out[0], q_out[1])
        assert np.array_equal(lut, _tflm_table(tmp_path, kind, q_in, q_out)), (q_in, q_out)
