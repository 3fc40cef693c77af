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
