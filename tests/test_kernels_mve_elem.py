"""The Helium (MVE) paths of the int8 elementwise and pooling kernels on the Cortex-M55 of
qemu-m55, bit-exact with TFLM: ADD (its exact linear form, and TFLM's arithmetic step by step
where no form exists), SUB, MUL (shifts of either sign), AVERAGE_POOL_2D, MAX_POOL_2D and the
table activations.

The binary ops run every one of the 65,536 input pairs in one inference (a 256 x 256 tensor of
each operand's byte along one axis), flat and with one operand broadcast along the row (the
paths that fold it into the constant term), so every saturation and clamp the form or the
requantization can reach is compared; smaller shapes cover lengths not a multiple of the vector
(the predicated tails), broadcasts through the walker, both inputs one tensor, and an ADD run in
place. Pooling covers windows clipped by SAME padding, channel counts below, between and above
multiples of 16, global pools of many taps, and every fused activation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.elem_models import binary, opts, pool
from modelgen.tflite_writer import Node, T, write

from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.pipeline import prepare_graph

pytestmark = pytest.mark.qemu

BOARD = "qemu-m55"
V = np.arange(-128, 128, dtype=np.int8)

# Quantizations (a, b, output) and the path each ADD takes (the forms the compiler finds for
# these float32 scales; test_binary_paths checks them)
Q_LIN = ((0.1, -3), (0.05, 10), (0.08, 4))  # a linear form, k = 21
Q_FINE = ((0.05, -3), (0.03, 10), (0.0004, 4))  # k = 15, most pairs saturate
Q_COARSE = ((0.02, 1), (0.03, -5), (2.5, 0))  # k = 21 with relu / relu6; none: no form
Q = ((0.05, -3), (0.03, 10), (0.06, 4))  # ordinary, no linear form: TFLM's arithmetic
QM = ((0.05, -3), (0.03, 10), (0.01, 4))  # MUL: multiplier 0.15 (shift -2)
QM_GATE = ((0.05, 7), (1 / 256, -128), (0.04, -2))  # a sigmoid gate times features
QM_BIG = ((0.5, 1), (0.4, -5), (0.02, 3))  # multiplier 10: shift +4


def _pairs(a_shape, b_shape) -> list[np.ndarray]:
    """Inputs holding every (x, y) byte pair: x along axis 1, y along axis 2 (broadcast where
    the operand's axis is 1)."""
    a = np.broadcast_to(V[:, None], (256, 256))[None]
    b = np.broadcast_to(V[None, :], (256, 256))[None]
    return [
        np.ascontiguousarray(a[:, : a_shape[1], : a_shape[2]]),
        np.ascontiguousarray(b[:, : b_shape[1], : b_shape[2]]),
    ]


def _check(path: Path, inputs=None, n: int = 2) -> None:
    r = api.compare(path, board=BOARD, inputs=inputs, n=n, layers=True)
    assert r.ok, (path.stem, r.mismatches)


FULL, COL, ROW = (1, 256, 256), (1, 256, 1), (1, 1, 256)
PAIRS = {  # name: op, a shape, b shape, activation, quantization, linear form expected
    "add_lin": ("ADD", FULL, FULL, "none", Q_LIN, True),
    "add_lin_relu6": ("ADD", FULL, FULL, "relu6", Q_COARSE, True),
    "add_lin_fine": ("ADD", FULL, FULL, "none", Q_FINE, True),
    "add_lin_fine_relu": ("ADD", FULL, FULL, "relu", Q_FINE, True),
    "add_lin_a_fixed": ("ADD", COL, ROW, "relu", Q_COARSE, True),
    "add_lin_b_fixed": ("ADD", ROW, COL, "none", Q_FINE, True),
    "add_exact": ("ADD", FULL, FULL, "none", Q, False),
    "add_exact_relu6": ("ADD", FULL, FULL, "relu6", Q, False),
    "add_exact_a_fixed": ("ADD", COL, ROW, "none", Q_COARSE, False),
    "add_exact_b_fixed": ("ADD", ROW, COL, "relu", Q, False),
    "sub": ("SUB", FULL, FULL, "relu6", Q, False),
    "sub_fine": ("SUB", FULL, FULL, "none", Q_FINE, False),
    "sub_b_fixed": ("SUB", ROW, COL, "none", Q_FINE, False),
    "sub_a_fixed": ("SUB", COL, ROW, "relu", Q_COARSE, False),
    "mul": ("MUL", FULL, FULL, "none", QM, False),
    "mul_relu6": ("MUL", FULL, FULL, "relu6", QM, False),
    "mul_gate_a_fixed": ("MUL", COL, ROW, "none", QM_GATE, False),
    "mul_b_fixed": ("MUL", ROW, COL, "relu", QM, False),
    "mul_shift_left": ("MUL", FULL, FULL, "none", QM_BIG, False),
    "mul_shift_left_b_fixed": ("MUL", ROW, COL, "relu6", QM_BIG, False),
}


def _lin_k(path: Path) -> int:
    """The linear form's shift the compiler hands ADD's kernel (0: none)."""
    (d,) = [x.data for x in prepare_graph(load_model(path))]
    return dict(getattr(d, "forms", ())).get("lin_k", 0)


def _binary(path: Path, op: str, a, b, act: str, q) -> Path:
    if op == "ADD" or op == "MUL":
        return binary(path, op, a, b, act, *q)
    out = tuple(np.broadcast_shapes(a, b))
    o = opts("SubOptions", FusedActivationFunction={"none": 0, "relu": 1, "relu6": 3}[act])
    tensors = [T("a", a, quant=q[0]), T("b", b, quant=q[1]), T("y", out, quant=q[2])]
    path.write_bytes(write(tensors, [Node(op, [0, 1], [2], "SubOptions", o)], [0, 1], [2]))
    return path


@pytest.mark.parametrize("name", list(PAIRS))
def test_binary_all_pairs(name: str, tmp_path: Path) -> None:
    op, a, b, act, q, lin = PAIRS[name]
    path = _binary(tmp_path / f"{name}.tflite", op, a, b, act, q)
    assert (_lin_k(path) > 0) == lin
    _check(path, inputs=_pairs(a, b))


SHAPES = {  # odd lengths (predicated tails) and the walker's broadcasts, random inputs
    "add_odd": ("ADD", (1, 7, 5, 3), (1, 7, 5, 3), "relu", Q_COARSE),
    "add_13": ("ADD", (1, 1, 1, 13), (1, 1, 1, 13), "none", Q_LIN),
    "add_channels": ("ADD", (1, 6, 6, 13), (13,), "relu6", Q_COARSE),
    "add_scalar_first": ("ADD", (1, 1, 1, 1), (1, 6, 5, 7), "none", Q_LIN),
    "add_rank5": ("ADD", (2, 3, 1, 4, 5), (1, 3, 4, 1, 5), "none", Q_FINE),
    "add_exact_odd": ("ADD", (1, 7, 5, 3), (1, 7, 5, 3), "relu", Q),
    "add_exact_rank5": ("ADD", (2, 3, 1, 4, 5), (1, 3, 4, 1, 5), "none", Q),
    "sub_odd": ("SUB", (1, 5, 3, 7), (1, 5, 3, 7), "relu", Q),
    "sub_channels": ("SUB", (1, 5, 5, 19), (19,), "none", Q_COARSE),
    "mul_odd": ("MUL", (1, 7, 5, 3), (1, 7, 5, 3), "relu", QM),
    "mul_channels": ("MUL", (1, 5, 5, 20), (1, 1, 1, 20), "none", QM_GATE),
    "mul_channels_by_8": ("MUL", (1, 4, 5, 24), (1, 1, 1, 24), "relu", QM_BIG),
    "mul_channels_first": ("MUL", (1, 1, 1, 16), (1, 3, 5, 16), "none", QM),
    "mul_per_pixel": ("MUL", (1, 5, 6, 9), (1, 5, 6, 1), "relu6", QM),
    "mul_first_bcast": ("MUL", (1, 1, 1, 13), (1, 4, 3, 13), "none", QM_BIG),
    "mul_rank5": ("MUL", (2, 3, 1, 4, 5), (1, 3, 4, 1, 5), "none", QM),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_binary_shapes(name: str, tmp_path: Path) -> None:
    op, a, b, act, q = SHAPES[name]
    _check(_binary(tmp_path / f"{name}.tflite", op, a, b, act, q))


OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}


@pytest.mark.parametrize("op", list(OPTIONS))
def test_binary_same_tensor(op: str, tmp_path: Path) -> None:
    """Both inputs one tensor (x + x, x - x, x * x)."""
    name = OPTIONS[op]
    o = opts(name, FusedActivationFunction=0)
    tensors = [T("a", (1, 9, 7, 5), quant=(0.05, -3)), T("y", (1, 9, 7, 5), quant=(0.07, 2))]
    path = tmp_path / f"{op}_same.tflite"
    path.write_bytes(write(tensors, [Node(op, [0, 0], [1], name, o)], [0], [1]))
    _check(path)


@pytest.mark.parametrize("op", list(OPTIONS))
def test_binary_in_place(op: str, tmp_path: Path) -> None:
    """(a op b) op b: the second op runs in place over the first one's output."""
    name = OPTIONS[op]
    o = opts(name, FusedActivationFunction=0)
    s = (1, 5, 7, 11)
    tensors = [
        T("a", s, quant=(0.05, -3)),
        T("b", s, quant=(0.03, 10)),
        T("t", s, quant=(0.06, 4)),
        T("y", s, quant=(0.08, -1)),
    ]
    nodes = [Node(op, [0, 1], [2], name, o), Node(op, [2, 1], [3], name, o)]
    path = tmp_path / f"{op}_inplace.tflite"
    path.write_bytes(write(tensors, nodes, [0, 1], [3]))
    p = api.plan(path, board=BOARD)
    assert p.storage[2] == p.storage[3] and p.offset(2) == p.offset(3)  # t dies: y over it
    _check(path)


POOLS = {  # kind, (h, w, c), window, stride, padding, activation
    "max_2x2_s2_c16": ("MAX_POOL_2D", (8, 8, 16), 2, 2, "valid", "none"),
    "max_2x2_s2_same_c7": ("MAX_POOL_2D", (7, 9, 7), 2, 2, "same", "relu"),
    "max_3x3_s1_same_c33": ("MAX_POOL_2D", (6, 5, 33), 3, 1, "same", "relu6"),
    "max_3x3_s2_c80": ("MAX_POOL_2D", (7, 7, 80), 3, 2, "valid", "none"),
    "max_2x2_s1_c64": ("MAX_POOL_2D", (5, 6, 64), 2, 1, "valid", "relu"),
    "max_global_c50": ("MAX_POOL_2D", (7, 7, 50), 7, 1, "valid", "none"),
    "avg_2x2_s2_c16": ("AVERAGE_POOL_2D", (8, 8, 16), 2, 2, "valid", "none"),
    "avg_2x2_s2_same_c7": ("AVERAGE_POOL_2D", (7, 9, 7), 2, 2, "same", "relu"),
    "avg_3x3_s1_same_c13": ("AVERAGE_POOL_2D", (6, 5, 13), 3, 1, "same", "relu6"),
    "avg_3x3_s2_same_c45": ("AVERAGE_POOL_2D", (9, 7, 45), 3, 2, "same", "none"),
    "avg_5x5_s1_same_c70": ("AVERAGE_POOL_2D", (5, 6, 70), 5, 1, "same", "relu"),
    "avg_global_c64": ("AVERAGE_POOL_2D", (16, 16, 64), 16, 1, "valid", "none"),
    "avg_global_c24": ("AVERAGE_POOL_2D", (15, 15, 24), 15, 1, "valid", "relu6"),
    "avg_17x17_c9": ("AVERAGE_POOL_2D", (17, 17, 9), 17, 1, "valid", "none"),  # > 256 taps
    "avg_1x1_c20": ("AVERAGE_POOL_2D", (3, 4, 20), 1, 1, "valid", "none"),
}


@pytest.mark.parametrize("name", list(POOLS))
def test_pool(name: str, tmp_path: Path) -> None:
    _check(pool(tmp_path / f"{name}.tflite", *POOLS[name]), n=3)


@pytest.mark.parametrize("shape", [(1, 259), (1, 4, 4, 16), (1, 3, 1, 5)])
def test_table_activations(shape, tmp_path: Path) -> None:
    """HARD_SWISH then LOGISTIC (tc_lut_s8's gathers; the second runs in place over the first's
    output), every byte value when the shape holds 256 or more."""
    tensors = [
        T("x", shape, quant=(0.05, 3)),
        T("h", shape, quant=(0.04, -20)),
        T("y", shape, quant=(1 / 256, -128)),
    ]
    nodes = [Node("HARD_SWISH", [0], [1]), Node("LOGISTIC", [1], [2])]
    path = tmp_path / "act.tflite"
    path.write_bytes(write(tensors, nodes, [0], [2]))
    p = api.plan(path, board=BOARD)
    assert p.offset(1) == p.offset(2)  # in place
    size = int(np.prod(shape))
    x = np.resize(V, size).reshape(shape) if size >= 256 else None
    _check(path, inputs=None if x is None else [x], n=3 if x is None else 1)
