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
from test_ops_conv import test_matches_tflm_on_cortex_m as _qemu_case

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


# ------------------------------------------------------------ Cortex-M builds under QEMU

H4_QEMU_MODELS = (  # one or two of each new unit (unary, arithmetic, moves)
    "div_small_mult",
    "div_bcast",
    "add_n_3",
    "cumsum_excl_rev",
    "unary_elu",
    "unary_abs_rescale",
    "unary_abs16",
    "mirror_pad_symmetric",
    "reverse_hw",
    "batch_to_space_dilated_conv",
    "gather_nd_pixels",
    "embedding_lookup_argmax",
    "dus_runtime_start",
    "reverse16",
    "dus16",
    "div_int32",
)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
@pytest.mark.parametrize("name", H4_QEMU_MODELS)
def test_new_ops_match_tflm_on_cortex_m(board: str, name: str, tmp_path: Path) -> None:
    """The Cortex-M7 and Cortex-M0+ builds under QEMU, every layer against TFLM."""
    _qemu_case(board, name, tmp_path)


def test_int32_div_by_a_constant_zero_refused() -> None:
    from tinycompile.errors import CompileError
    from tinycompile.ir import Graph, Op, Tensor

    ts = [Tensor(0, "a", (3,), "int32"), Tensor(1, "d", (3,), "int32", data=np.array([1, 0, 2])),
          Tensor(2, "y", (3,), "int32")]  # fmt: skip
    g = Graph("g", ts, [Op(0, "DIV", [0, 1], [2])], [0], [2])
    with pytest.raises(CompileError, match="a constant divisor is 0"):
        load_all()["DIV"].prepare(g.ops[0], g)
