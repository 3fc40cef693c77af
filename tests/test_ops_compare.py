"""Comparisons, logical operators, SELECT_V2, the reduce family's SUM / REDUCE_MAX / REDUCE_MIN /
REDUCE_ALL, and the fill-like operators (FILL, ZEROS_LIKE, SHAPE, BROADCAST_ARGS, BROADCAST_TO,
CAST): broadcast loops, folding, bool graph outputs, and the one-line refusals of what TFLM does
not run.

Models come from ``python -m tests.modelgen.ops_compare``; every one is also compared with TFLM,
layer by layer, in test_ops_registry.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode
from tinycompile.ops.nary import nary_loops
from tinycompile.passes import run_passes
from tinycompile.pipeline import lower_graph as lower

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"


def _q(scale: float = 0.05, zp: int = 3) -> Quant:
    return Quant(np.array([scale], np.float32), np.array([zp], np.int64))


def _t(i: int, shape, dtype: str = "int8", q: Quant | None = None, data=None) -> Tensor:
    if q is None and dtype in ("int8", "int16") and data is None:
        q = _q()
    return Tensor(i, f"t{i}", tuple(shape), dtype, q, data)


def _binary(kind: str, a, b, o, *, dtype="int8", out_dtype="bool", qa=None, qb=None) -> Graph:
    ts = [_t(0, a, dtype, qa), _t(1, b, dtype, qb), _t(2, o, out_dtype)]
    return Graph("g", ts, [Op(0, kind, [0, 1], [2])], [0, 1], [2])


def _code(g: Graph) -> str:
    return " ".join(lo.stmt for lo in lower(g).ops)


def _walk(dims, strides, shapes, o):
    """Element offsets per input of every output element, as tc_walk visits them."""
    idx = np.indices(dims).reshape(len(dims), -1).T
    return [idx @ np.array(s) for s in strides]


@pytest.mark.parametrize(
    "shapes,o",
    [
        ([(1, 4, 5), (1, 4, 5)], (1, 4, 5)),
        ([(1, 5, 1), (1, 5, 7)], (1, 5, 7)),
        ([(1, 3, 4, 6), (6,)], (1, 3, 4, 6)),
        ([(1, 1, 6), (1, 4, 6), (4, 1)], (1, 4, 6)),
        ([(), (2, 3)], (2, 3)),
        ([(1,), (1,)], (1,)),
    ],
)
def test_nary_loops_index_like_numpy(shapes, o) -> None:
    dims, strides = nary_loops(shapes, o)
    assert int(np.prod(dims)) == int(np.prod(o))
    offs = _walk(dims, strides, shapes, o)
    for s, off in zip(shapes, offs, strict=True):
        src = np.arange(int(np.prod(s)) if s else 1).reshape(s)
        assert np.array_equal(np.broadcast_to(src, o).reshape(-1), off)


def test_models_cover_the_kinds() -> None:
    kinds = set()
    for p in sorted(OPS_DIR.glob("*.tflite")):
        if p.stem.startswith(("cmp_", "logic_", "select_", "reduce_", "sum_", "fill_", "zeros_")):
            kinds |= {op.kind for op in read_tflite(p.read_bytes()).ops}
        if p.stem.startswith(("shape_", "broadcast_to", "cast_")):
            kinds |= {op.kind for op in read_tflite(p.read_bytes()).ops}
    want = {"EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"}
    want |= {"LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "SELECT_V2"}
    want |= {"SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL"}
    want |= {"FILL", "ZEROS_LIKE", "SHAPE", "BROADCAST_ARGS", "BROADCAST_TO", "CAST"}
    assert want <= kinds, want - kinds


def test_bool_tensors_are_one_byte_and_may_be_graph_outputs() -> None:
    path = OPS_DIR / "cmp_not_equal_w.tflite"
    g = read_tflite(path.read_bytes())
    outs = [g.t(t) for t in g.outputs]
    assert [t.dtype for t in outs] == ["bool"] * 3
    assert all(t.nbytes == t.size for t in outs)
    code = _code(g)
    assert "tc_compare_s8" in code and "tc_logical_not_b" in code


def test_shape_and_fill_fold_to_constants() -> None:
    g = read_tflite((OPS_DIR / "fill_const_folded.tflite").read_bytes())
    decode(g)
    p = run_passes(g)
    fill = next(op for op in p.ops if op.kind == "FILL")
    f = p.t(fill.outputs[0])
    assert f.is_const and np.all(f.data == 12)
    assert "tc_fill" not in _code(g)  # nothing runs on the device for it
    # a graph output is never folded: SHAPE runs (a constant copied), so does BROADCAST_ARGS
    g = read_tflite((OPS_DIR / "shape_bcast_args.tflite").read_bytes())
    assert _code(g).count("tc_fill(") == 2


@pytest.mark.parametrize(
    "graph,msg",
    [
        (
            _binary("LESS", (1, 4), (1, 4), (1, 4), qa=_q(1.5, 0)),
            "scale 1.5; TFLM needs it below 1",
        ),
        (_binary("GREATER", (1, 4), (1, 4), (1, 4), dtype="int16"), "int16 input tensor 0"),
        (_binary("LESS", (1, 4), (1, 4), (1, 4), dtype="bool"), "bool input tensor 0"),
        (_binary("EQUAL", (1, 4), (1, 4), (1, 4), out_dtype="int8"), "int8 output is not"),
        (_binary("EQUAL", (1, 4), (1, 3), (1, 4)), r"shapes \[1, 4\] and \[1, 3\] do not"),
        (
            _binary("LOGICAL_AND", (1, 2, 1, 2, 3), (1, 1, 2, 1, 3), (1, 2, 2, 2, 3), dtype="bool"),
            "broadcasting above rank 4 is not supported",
        ),
        (_binary("LOGICAL_OR", (1, 4), (1, 4), (1, 4)), "int8 input tensor 0 is not supported"),
    ],
)
def test_refusals_name_the_reason(graph: Graph, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        lower(graph)


def _reduce(kind: str, qo: Quant, dtype: str = "int8") -> Graph:
    ts = [
        _t(0, (1, 4, 5), dtype),
        _t(1, (1,), "int32", data=np.array([1], np.int32)),
        Tensor(2, "y", (1, 5), dtype, qo if dtype != "bool" else None),
    ]
    return Graph("g", ts, [Op(0, kind, [0, 1], [2])], [0], [2])


def test_reduce_max_needs_equal_quantization() -> None:
    lower(_reduce("REDUCE_MAX", _q()))
    with pytest.raises(CompileError, match="input and output quantization differ"):
        lower(_reduce("REDUCE_MIN", _q(0.1, 3)))
    with pytest.raises(CompileError, match="int8 -> int8 is not supported"):
        lower(_reduce("REDUCE_ALL", _q()))


def test_select_v1_refused_because_tflm_cannot_run_it(tmp_path: Path) -> None:
    """SELECT (v1, what the converter writes for ``tf.where`` of equal shapes) has no TFLM
    kernel: TFLM cannot run the model, and the compiler refuses it with that reason. Should a
    TFLM update bring the kernel, the first assertion fails and SELECT can join SELECT_V2."""
    from modelgen.tflite_writer import Node, T, write

    from tinycompile import api
    from tinycompile.run.reference import run_tflm

    q = (0.05, 3)
    tensors = [
        T("x", (1, 4, 6), quant=q),
        T("y", (1, 4, 6), quant=q),
        T("c", (1, 4, 6), "bool"),
        T("o", (1, 4, 6), quant=q),
    ]
    nodes = [Node("GREATER", [0, 1], [2]), Node("SELECT", [2, 0, 1], [3])]
    path = tmp_path / "select.tflite"
    path.write_bytes(write(tensors, nodes, [0, 1], [3]))
    with pytest.raises(RuntimeError):
        run_tflm(path, [np.zeros((1, 1, 4, 6), np.int8)] * 2)
    assert [e.line() for e in api.check(path)] == [
        f"{path}: op #1 SELECT: operator SELECT is not supported: TFLM has no SELECT kernel "
        "(only SELECT_V2, which the converter writes when the shapes broadcast)"
    ]


def test_cast_to_bool_is_refused() -> None:
    ts = [_t(0, (1, 4)), _t(1, (1, 4)), _t(2, (1, 4), "bool")]
    g = Graph("g", ts, [Op(0, "GREATER", [0, 1], [2])], [0, 1], [2])
    g.ops.append(Op(1, "CAST", [2], [3]))
    g.tensors.append(_t(3, (1, 4), "bool"))
    g.outputs = [3]
    with pytest.raises(CompileError, match="bool output is not supported"):
        lower(g)


def test_fill_needs_constant_dims_equal_to_the_output() -> None:
    ts = [
        _t(0, (1, 4)),
        _t(1, (2,), "int32", data=np.array([2, 3], np.int32)),
        _t(2, (), "int8"),
        _t(3, (2, 2)),
    ]
    g = Graph("g", ts, [Op(0, "REDUCE_MAX", [0, 1], [2]), Op(1, "FILL", [1, 2], [3])], [0], [3])
    g.tensors[1] = _t(1, (2,), "int32", data=np.array([0, 1], np.int32))
    g.tensors.append(_t(4, (2,), "int32", data=np.array([2, 3], np.int32)))
    g.ops[1] = Op(1, "FILL", [4, 2], [3])
    with pytest.raises(CompileError, match=r"dims \[2, 3\] differ from the output"):
        lower(g)


QEMU_CASES = [
    (board, name)
    for board in ("stm32f746", "samd21")
    for name in (
        "cmp_not_equal_w",
        "select_mask",
        "sum_hw_keep",
        "reduce_min_13",
        "cast_trunc",
        "shape_bcast_args",
        "fill_activation",
        "broadcast_to_bool",
    )
]


@pytest.mark.parametrize("board,name", QEMU_CASES, ids=lambda v: v)
def test_matches_tflm_on_cortex_m(board: str, name: str) -> None:
    """Comparisons, logic, select, SUM, REDUCE_MIN, CAST, SHAPE / BROADCAST_ARGS, FILL and
    BROADCAST_TO on the Cortex-M7 and the Cortex-M0+ (QEMU), every layer compared with TFLM;
    bool and int32 graph outputs read back."""
    from tinycompile import api

    r = api.compare(OPS_DIR / f"{name}.tflite", board=board, n=8, layers=True)
    assert r.layers, "no layer was compared"
    assert r.ok, str(r)


def test_validate_reads_bool_outputs_over_the_protocol() -> None:
    """`validate` (the serial protocol, a board build in QEMU) reads three bool graph outputs
    back and compares them with TFLM."""
    from tinycompile.validate import validate_on_emulator

    rep = validate_on_emulator(str(OPS_DIR / "cmp_not_equal_w.tflite"), "stm32f407", n=3)
    assert rep.ok, rep.summary()
    assert len(rep.results) == 3
