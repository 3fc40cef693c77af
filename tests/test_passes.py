"""The graph passes on made-up graphs: each returns a new graph, leaves the one it was given as
it was, and does its one rewrite."""

from __future__ import annotations

import numpy as np
import pytest

from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.passes import PASSES, decode_options, fold_constants, run_passes
from tinycompile.pipeline import check_graph


def _t(i: int, shape: tuple[int, ...], data: np.ndarray | None = None) -> Tensor:
    q = Quant(np.array([0.05], np.float32), np.array([0], np.int64))
    return Tensor(i, f"t{i}", shape, "int8", q, data)


def _reshape_chain() -> Graph:
    """const (2, 3) -> RESHAPE -> (6,) -> RESHAPE -> (1, 6) -> ADD with the input."""
    c = np.arange(6, dtype=np.int8).reshape(2, 3)
    ts = [_t(0, (1, 6)), _t(1, (2, 3), c), _t(2, (6,)), _t(3, (1, 6)), _t(4, (1, 6))]
    ops = [
        Op(0, "RESHAPE", [1], [2]),
        Op(1, "RESHAPE", [2], [3]),
        Op(2, "ADD", [0, 3], [4], options={"fused_activation_function": 1}),
    ]
    return Graph("g", ts, ops, [0], [4])


def test_fold_makes_a_chain_of_reshapes_of_a_constant_constant() -> None:
    g = _reshape_chain()
    out = fold_constants(g)
    assert out is not g
    assert out.t(2).data is not None and out.t(2).data.shape == (6,)
    assert np.array_equal(out.t(3).data, np.arange(6, dtype=np.int8).reshape(1, 6))
    assert g.t(2).data is None and g.t(3).data is None  # the given graph is unchanged
    assert out.t(1) is g.t(1) and out.ops is g.ops  # what it did not change is shared


def test_fold_leaves_reshapes_of_activations_and_size_changes() -> None:
    g = _reshape_chain()
    g.ops[0] = Op(0, "RESHAPE", [0], [2])  # of the input now: nothing to fold
    out = fold_constants(g)
    assert out.t(2).data is None and out.t(3).data is None
    g2 = _reshape_chain()
    g2.tensors[2] = _t(2, (5,))  # a reshape to another size is not a reshape of it
    assert fold_constants(g2).t(2).data is None


def test_fold_skips_unknown_kinds_and_absent_inputs() -> None:
    g = _reshape_chain()
    g.ops[0] = Op(0, "NOT_AN_OP", [1], [2])
    g.ops[1] = Op(1, "RESHAPE", [-1], [3])
    out = fold_constants(g)
    assert out.t(2).data is None and out.t(3).data is None


def test_decode_types_the_options_and_keeps_the_given_graph() -> None:
    g = _reshape_chain()
    out = decode_options(g)
    add = out.ops[2]
    assert add.options is None and add.attrs["activation"] == "RELU"
    assert g.ops[2].options == {"fused_activation_function": 1} and not g.ops[2].attrs
    assert out.ops[0] is g.ops[0]  # no options: the same op


def test_decode_keeps_attributes_already_set() -> None:
    g = _reshape_chain()
    g.ops[2].attrs = {"activation": "RELU6"}
    assert decode_options(g).ops[2].attrs["activation"] == "RELU6"


def test_decode_leaves_refused_options_for_prepare_to_report() -> None:
    g = _reshape_chain()
    g.ops[2] = Op(2, "CONCATENATION", [0, 3], [4], options={})  # its options table is missing
    out = decode_options(g)
    assert out.ops[2] is g.ops[2] and out.ops[2].options == {}
    found = check_graph(g)
    assert [(e.op_index, e.reason) for e in found] == [(2, "missing ConcatenationOptions")]


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.__name__)
def test_every_pass_is_a_function_from_graph_to_graph(p) -> None:
    g = _reshape_chain()
    before = [(op.kind, op.inputs, op.outputs, op.options) for op in g.ops]
    out = p(g)
    assert isinstance(out, Graph) and out is not g
    assert [(op.kind, op.inputs, op.outputs, op.options) for op in g.ops] == before
    assert [t.data is None for t in g.tensors] == [True, False, True, True, True]


def test_run_passes_runs_them_in_order() -> None:
    out = run_passes(_reshape_chain())
    assert out.ops[2].attrs["activation"] == "RELU" and out.t(3).data is not None
