"""Our tensors and the reference's (tinycompile/run/tensor_map.py): TFLite's by index, checked
against the file for every op model; ONNX's by name, with the tensors the frontend added
reported untwinned ("not compared"); and a graph whose ids, outputs or names no longer match
the file refused with a message naming the tensor, before anything runs."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from conftest import MODELS, op_models

from tinycompile import api
from tinycompile.errors import RunError
from tinycompile.frontend import load_model
from tinycompile.ir import Graph
from tinycompile.run.compare import compare_plan
from tinycompile.run.reference import run_onnx_reference, run_tflm
from tinycompile.run.tensor_map import compared_tensors, onnx_map, tensor_map, tflite_map

OPS = MODELS / "ops"


def _renumbered(g: Graph, a: int, b: int) -> Graph:
    """``g`` with tensors ``a`` and ``b`` trading ids (a consistent graph, not the file's)."""
    g2 = copy.deepcopy(g)
    swap = {a: b, b: a}
    g2.tensors[a], g2.tensors[b] = g2.tensors[b], g2.tensors[a]
    for i, t in enumerate(g2.tensors):
        t.id = i
    for op in g2.ops:
        op.inputs = [swap.get(t, t) for t in op.inputs]
        op.outputs = [swap.get(t, t) for t in op.outputs]
    g2.inputs = [swap.get(t, t) for t in g2.inputs]
    g2.outputs = [swap.get(t, t) for t in g2.outputs]
    return g2


@pytest.mark.parametrize(
    "path", [p for p in op_models(tflm=True) if p.suffix == ".tflite"], ids=lambda p: p.stem
)
def test_tflite_ids_are_the_files_indices(path: Path) -> None:
    """Every op model: inputs, outputs, layer outputs and state map to the same index, and
    the file agrees on each one's name, shape and type."""
    p = api.plan(path)
    g = p.graph
    tids = compared_tensors(p)
    m = tensor_map(g, path, tids)
    assert m.format == "tflite" and m.tensors == {t: t for t in tids} and not m.untwinned
    assert list(m.inputs) == g.inputs and list(m.outputs) == g.outputs


def test_tflm_tensors_come_back_under_our_ids() -> None:
    """A model with state: layer outputs and variable tensors read from TFLM by our ids, each
    checked against TFLM's own shape and type."""
    path = OPS / "svdf_s16_rank1.tflite"
    p = api.plan(path)
    tids = compared_tensors(p)
    assert sorted(p.state)[0] in tids
    xs = api.make_inputs(p.graph, 2, seed=1)
    ref = run_tflm(path, xs, tensor_ids=tids, g=p.graph)
    for s in ref.tensors:
        assert sorted(s) == sorted(tids)
        for t in tids:
            assert s[t].size == p.graph.t(t).size


def test_renumbered_graph_is_refused_naming_the_tensor(tmp_path: Path) -> None:
    """Tensors 1 and 3 trade ids (TANH now writes tensor 3): a valid graph whose layer
    outputs are no longer the file's tensors of those indices. The map, TFLM's run and a
    comparison refuse it, the latter before building anything."""
    path = OPS / "act_chain.tflite"
    g = _renumbered(load_model(path), 1, 3)
    p = api.plan(g)
    tids = compared_tensors(p)
    want = r"tensor 3 'Tanh' \[1, 8, 8, 4\] int8: the model file's tensor 3 is 'Sigmoid'"
    with pytest.raises(RunError, match=want):
        tensor_map(g, path, tids)
    with pytest.raises(RunError, match="TFLM looks tensors up by them"):
        run_tflm(path, api.make_inputs(g, 1), tensor_ids=tids, g=g)
    with pytest.raises(RunError, match=want):
        compare_plan(p, path, n=1, workdir=tmp_path)
    assert not (tmp_path / "project").exists()
    assert compare_plan(p, path, n=2, layers=False).ok  # outputs only: ids 0 and 4 still hold


def test_reordered_outputs_and_unknown_indices_are_refused() -> None:
    """Outputs are matched by position: another order is refused; an index the file does not
    have is refused before TFLM is asked for it (TFLM would crash the process)."""
    path = OPS / "split_v.tflite"
    g = load_model(path)
    g2 = copy.deepcopy(g)
    g2.outputs = g2.outputs[::-1]
    with pytest.raises(RunError, match="the graph's outputs are tensors"):
        tflite_map(g2, path)
    n = len(g.tensors)
    with pytest.raises(RunError, match=f"tensor {n}: the model file has {n} tensors"):
        run_tflm(path, api.make_inputs(g, 1), tensor_ids=[n])


def test_a_changed_shape_is_refused() -> None:
    path = OPS / "conv_tiny.tflite"
    g = load_model(path)
    g.t(g.outputs[0]).shape = (1, 2, 1, 5)
    with pytest.raises(RunError, match=r"tensor 3 '.*' \[1, 2, 1, 5\] int8: the model file's"):
        tflite_map(g, path)


def test_onnx_by_name_with_untwinned_tensors() -> None:
    """QDQ model with a rescaled Concat input: every layer output twins the value of its name
    except the ONNX_REQUANT the frontend added; the graph output is the file's (float) output;
    the comparison says which layer it did not compare."""
    path = OPS / "onnx_concat.onnx"
    p = api.plan(path)
    g = p.graph
    tids = compared_tensors(p)
    m = tensor_map(g, path, tids)
    assert m.format == "onnx"
    added = [t for t in tids if g.t(t).name.endswith("/in1")]
    assert len(added) == 1 and m.untwinned == tuple(added)
    for t in tids:
        if t in g.outputs:
            assert m.tensors[t] == m.outputs[g.outputs.index(t)]
        elif t not in added:
            assert m.tensors[t] == g.t(t).name
    import onnx

    model = onnx.load(str(path))
    assert list(m.inputs) == [i.name for i in model.graph.input]
    assert list(m.outputs) == [o.name for o in model.graph.output]
    r = api.compare(path, n=2)
    assert r.ok
    rows = {la["tensor"]: la for la in r.layers}
    assert [t for t, la in rows.items() if not la["compared"]] == added
    assert "1 layer(s) not compared, no twin in the model file" in str(r)


def test_onnx_names_must_be_unique_and_twins_of_our_shape() -> None:
    path = OPS / "onnx_concat.onnx"
    p = api.plan(path)
    g = p.graph
    conv2 = next(t for t in compared_tensors(p) if g.t(t).name.startswith("relu_out"))
    added = next(t for t in compared_tensors(p) if g.t(t).name.endswith("/in1"))
    g2 = copy.deepcopy(g)
    g2.t(added).name = g.t(conv2).name
    with pytest.raises(RunError, match=f"tensors {conv2} and {added} of the graph both twin"):
        onnx_map(g2, path, [conv2, added])
    g3 = copy.deepcopy(g)
    n, h, w, c = g.t(conv2).shape
    g3.t(conv2).shape = (n, h, c, w)
    xs = api.make_inputs(g, 1)
    with pytest.raises(RunError, match=rf"tensor {conv2} '.*' \[{n}, {h}, {c}, {w}\] int8"):
        run_onnx_reference(path, xs, g3, tensor_ids=[conv2])
    ok = run_onnx_reference(path, xs, g, tensor_ids=[conv2])
    assert ok.tensors[0][conv2].shape == g.t(conv2).shape
