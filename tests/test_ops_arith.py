"""Arithmetic operators (DIV, ADD_N, CUMSUM).

Their models (``python -m tests.modelgen.ops_unary``) are compared with TFLM layer by layer in
tests/test_ops_registry.py on random inputs. Here: DIV's Python twin of the kernel against TFLM
on every pair of input bytes (zero divisors and rounding shifts above 31 included), and the
refusals at the IR level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS

from tinycompile.frontend import load_model
from tinycompile.ops import decode, load_all
from tinycompile.ops.div import div_reference

DIV_MODELS = ["div_small_mult", "div_bcast", "div_relu"]


@pytest.mark.parametrize("name", DIV_MODELS)
def test_div_every_byte_pair_matches_tflm(name: str) -> None:
    from tflite_micro.python.tflite_micro import runtime

    path: Path = MODELS / "ops" / f"{name}.tflite"
    g = load_model(path)
    decode(g)
    op = g.ops[0]
    d = load_all()["DIV"].prepare(op, g)
    f = dict(d.fields)
    a_shape, b_shape = g.t(op.inputs[0]).shape, g.t(op.inputs[1]).shape
    ip = runtime.Interpreter.from_file(str(path))
    pairs = np.array([(a, b) for a in range(-128, 128) for b in range(-128, 128)], np.int8)
    n = int(np.prod(b_shape))
    a_all, b_all = pairs[:, 0], pairs[:, 1]
    for start in range(0, len(pairs), n):
        a = np.resize(a_all[start : start + n], n)
        b = np.resize(b_all[start : start + n], n)
        xa = np.resize(a, a_shape) if np.prod(a_shape) != n else a.reshape(a_shape)
        ip.set_input(xa.astype(np.int8), 0)
        ip.set_input(b.reshape(b_shape), 1)
        ip.invoke()
        y = ip.get_output(0).reshape(-1)
        got = np.broadcast_to(xa, np.broadcast_shapes(a_shape, b_shape)).reshape(-1)
        bb = np.broadcast_to(b.reshape(b_shape), np.broadcast_shapes(a_shape, b_shape))
        want = [div_reference(int(u), int(v), f, d.inv, d.inv_shift)
                for u, v in zip(got, bb.reshape(-1), strict=True)]  # fmt: skip
        assert np.array_equal(y, np.array(want, np.int8)), name
