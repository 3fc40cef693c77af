"""The pipeline runs one way (issue 20): every op is prepared once and lowered once per build,
streamed or not, the fit advice plans again without preparing, a model's problems are found in
the same single pass, and the graph handed in is left as it was."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.fit import check_fit, sram_advice
from tinycompile.frontend import load_model
from tinycompile.ops import OPS, load_all
from tinycompile.planner.streams import streamed_ops

MODELS = Path(__file__).resolve().parent / "models"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "digits.tflite"


class Calls:
    """Counts of the outermost calls of every unit's ``prepare`` and ``lower`` (a unit may call
    another's inside), and of every ``lower_row``, by (method, op index, op kind)."""

    def __init__(self) -> None:
        self.n: Counter[tuple[str, int, str]] = Counter()
        self.depth = 0

    def of(self, method: str) -> dict[tuple[int, str], int]:
        return {(i, k): c for (m, i, k), c in self.n.items() if m == method}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calls]:
    seen = Calls()
    classes = {c for u in load_all().values() for c in type(u).__mro__ if c is not object}
    for cls in classes:
        for method in ("prepare", "lower", "lower_row"):
            if method not in cls.__dict__:
                continue  # counted where it is defined

            def wrap(orig, method=method):
                def counted(self, op, *args, **kw):
                    if seen.depth == 0 or method == "lower_row":  # row calls: inside STREAM
                        seen.n[(method, op.index, op.kind)] += 1
                    seen.depth += 1
                    try:
                        return orig(self, op, *args, **kw)
                    finally:
                        seen.depth -= 1

                return counted

            monkeypatch.setattr(cls, method, wrap(cls.__dict__[method]))
    yield seen


def _build(model: Path, board: str, stream: str, tmp_path: Path):
    """What `tinycompile plan` and `build` run before the cross compiler: plan, the fit verdict
    with its SRAM advice, and the generated project."""
    p = api.plan(model, board=board, stream=stream)
    sram_advice(p, check_fit(p, board if board != "host" else "stm32f746"))
    api.generate(p, tmp_path / "project")
    return p


@pytest.mark.parametrize(
    ("model", "board", "stream"),
    [
        (EXAMPLE, "stm32f746", "auto"),
        (MODELS / "ic_resnet8.tflite", "samd21", "auto"),  # streamed: the plain plan does not fit
        (MODELS / "ic_resnet8.tflite", "host", "min"),
        (MODELS / "kws_dscnn.tflite", "host", "off"),
        (MODELS / "onnx" / "cnn_twin.onnx", "host", "min"),
    ],
    ids=["example", "resnet8-samd21", "resnet8-min", "dscnn", "onnx-min"],
)
def test_each_op_prepared_and_lowered_once(
    model: Path, board: str, stream: str, calls: Calls, tmp_path: Path
) -> None:
    p = _build(model, board, stream, tmp_path)
    streamed = set(streamed_ops(p.graph))
    if stream == "min" or board == "samd21":
        assert streamed, "the case is meant to stream"
    live = {(q.op.index, q.op.kind) for q in p.model_prepared}
    stream_ops = {(op.index, op.kind) for op in p.graph.ops if op.kind == "STREAM"}
    assert calls.of("prepare") == dict.fromkeys(live | stream_ops, 1)
    lowered = {(q.op.index, q.op.kind) for q in p.prepared}
    assert calls.of("lower") == dict.fromkeys(lowered, 1)
    rows = calls.of("lower_row")
    assert {i for i, _ in rows} == streamed  # streamed layers: by rows, inside the STREAM op


def test_problems_found_in_one_pass(calls: Calls) -> None:
    """A model with several problems: each other op is prepared once, and the error counts the
    rest (as `tinycompile check` lists them)."""
    g = load_model(MODELS / "bad" / "unsupported_op.tflite")
    with pytest.raises(CompileError) as e:
        api.plan(g)
    found = api.check(g)
    assert found and e.value.reason.startswith(found[0].reason)
    assert all(c == 2 for c in calls.of("prepare").values())  # once by plan, once by check
    assert not calls.of("lower")


def _snapshot(g) -> list:
    return [
        [(op.kind, op.inputs, op.outputs, dict(op.attrs), op.options) for op in g.ops],
        [(t.shape, t.dtype, None if t.data is None else t.data.tobytes()) for t in g.tensors],
    ]


@pytest.mark.parametrize("stream", ["off", "min"])
def test_the_graph_handed_in_is_not_changed(stream: str) -> None:
    g = load_model(MODELS / "ic_resnet8.tflite")
    before = copy.deepcopy(_snapshot(g))
    p = api.plan(g, stream=stream)
    assert _snapshot(g) == before
    assert all(op.options is None for op in p.graph.ops)  # the passes' graph is decoded
    assert any(op.options is not None for op in g.ops)


def test_plans_are_the_same_twice() -> None:
    """Nothing is left behind between two plans of one graph (state shared by passes)."""
    g = load_model(MODELS / "vww_mobilenet.tflite")
    a, b = api.plan(g, stream="min"), api.plan(g, stream="min")
    assert a.arena_bytes == b.arena_bytes and a.order == b.order
    assert [o.stmt for o in a.lowering.ops] == [o.stmt for o in b.lowering.ops]
    assert all(
        np.array_equal(x.values, y.values)
        for x, y in zip(a.lowering.arrays.values(), b.lowering.arrays.values(), strict=True)
    )


def test_units_are_all_counted() -> None:
    """The counting fixture sees every unit: each registered kind's class defines or inherits
    the methods it wraps."""
    assert all(hasattr(u, "prepare") and hasattr(u, "lower") for u in OPS.values())
