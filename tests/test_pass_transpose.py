"""The transpose pass: TRANSPOSEs that move only axes of size 1 become RESHAPEs (no copy, no
arena), on made-up graphs and on a model compared with TFLM; real transpositions stay."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tflite

from tests.modelgen.tflite_writer import Node, T, write
from tinycompile import api
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.passes import transposes_to_reshapes


def _q(scale: float = 0.05, zp: int = 3) -> Quant:
    return Quant(np.array([scale], np.float32), np.array([zp], np.int64))


def _graph(shape: tuple[int, ...], perm: list[int], out_q: Quant | None = None) -> Graph:
    out_shape = tuple(shape[p] for p in perm)
    ts = [
        Tensor(0, "x", shape, "int8", _q()),
        Tensor(1, "perm", (len(perm),), "int32", None, np.array(perm, np.int32)),
        Tensor(2, "y", out_shape, "int8", out_q or _q()),
    ]
    return Graph("g", ts, [Op(0, "TRANSPOSE", [0, 1], [2])], [0], [2])


@pytest.mark.parametrize(
    ("shape", "perm"),
    [((1, 1, 8, 6), [0, 2, 3, 1]), ((1, 5), [1, 0]), ((2, 1, 3), [1, 0, 2]), ((4, 1), [1, 0])],
)
def test_unit_axes_moves_become_reshapes(shape: tuple, perm: list) -> None:
    g = _graph(shape, perm)
    out = transposes_to_reshapes(g)
    assert [(op.kind, op.inputs, op.outputs) for op in out.ops] == [("RESHAPE", [0], [2])]
    assert g.ops[0].kind == "TRANSPOSE"  # the given graph is unchanged
    x = np.arange(int(np.prod(shape))).reshape(shape)
    assert np.array_equal(x.transpose(perm).reshape(-1), x.reshape(-1))  # the claim itself


@pytest.mark.parametrize(
    ("shape", "perm"),
    [((1, 3, 8, 6), [0, 2, 3, 1]), ((2, 5), [1, 0]), ((2, 1, 3), [2, 1, 0])],
)
def test_real_transpositions_stay(shape: tuple, perm: list) -> None:
    assert transposes_to_reshapes(_graph(shape, perm)).ops[0].kind == "TRANSPOSE"


def test_requantizing_or_dynamic_transposes_stay() -> None:
    assert transposes_to_reshapes(_graph((1, 5), [1, 0], _q(0.1))).ops[0].kind == "TRANSPOSE"
    g = _graph((1, 5), [1, 0])
    g.tensors[1] = Tensor(1, "perm", (2,), "int32")  # not a constant
    assert transposes_to_reshapes(g).ops[0].kind == "TRANSPOSE"


def _nchw_gray(path: Path) -> Path:
    """NCHW grayscale input (1, 1, 12, 10) -> TRANSPOSE to NHWC -> 3x3 CONV_2D (4 channels)."""
    rng = np.random.default_rng(3)

    def conv_options(b):
        tflite.Conv2DOptionsStart(b)
        tflite.Conv2DOptionsAddPadding(b, 0)
        tflite.Conv2DOptionsAddStrideW(b, 1)
        tflite.Conv2DOptionsAddStrideH(b, 1)
        tflite.Conv2DOptionsAddFusedActivationFunction(b, 1)
        tflite.Conv2DOptionsAddDilationWFactor(b, 1)
        tflite.Conv2DOptionsAddDilationHFactor(b, 1)
        return tflite.Conv2DOptionsEnd(b)

    def transpose_options(b):
        tflite.TransposeOptionsStart(b)
        return tflite.TransposeOptionsEnd(b)

    ws = rng.uniform(0.005, 0.03, 4)
    tensors = [
        T("x", (1, 1, 12, 10), quant=(0.05, -3)),
        T("perm", (4,), "int32", data=np.array([0, 2, 3, 1], np.int32)),
        T("xt", (1, 12, 10, 1), quant=(0.05, -3)),
        T("w", (4, 3, 3, 1), quant=(list(ws), [0] * 4), quant_axis=0,
          data=rng.integers(-127, 128, (4, 3, 3, 1)).astype(np.int8)),
        T("b", (4,), "int32", quant=(list(0.05 * ws), [0] * 4),
          data=rng.integers(-500, 500, 4).astype(np.int32)),
        T("y", (1, 12, 10, 4), quant=(0.04, -128)),
    ]  # fmt: skip
    nodes = [
        Node("TRANSPOSE", [0, 1], [2], "TransposeOptions", transpose_options),
        Node("CONV_2D", [2, 3, 4], [5], "Conv2DOptions", conv_options),
    ]
    path.write_bytes(write(tensors, nodes, [0], [5]))
    return path


def test_an_nchw_grayscale_input_costs_no_copy(tmp_path: Path) -> None:
    model = _nchw_gray(tmp_path / "nchw_gray.tflite")
    p = api.plan(model)
    assert [la.kind for la in p.layers] == ["RESHAPE", "CONV_2D"] and p.layers[0].alias
    assert p.arena_bytes < 120 + 480 + 120  # input and output only (no transposed copy)
    r = api.compare(model, board="host", n=5, layers=True)
    assert r.ok and r.layers, str(r)
