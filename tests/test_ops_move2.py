"""The second data-movement set (REVERSE_V2, MIRROR_PAD, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
GATHER_ND, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE).

Their models (``python -m tests.modelgen.ops_move2``) are compared with TFLM layer by layer in
test_ops_registry.py. Here: the compile-time copy loops replayed against numpy for
configurations the models do not cover, and the refusals, at the IR level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_ops_layout import data, graph, prepare, run

from tinycompile.errors import CompileError


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((2, 3, 4), [0]), ((2, 3, 4), [1, 2]), ((2, 3, 4, 5), [-1]), ((3, 1, 4, 2), [0, 1, 2])],
)
def test_reverse_matches_numpy(shape, axes) -> None:
    x = data(shape)
    g = graph("REVERSE_V2", shape, [axes], [shape])
    assert np.array_equal(run(g, x)[0], np.flip(x, axes).reshape(-1))


def test_reverse_non_contiguous_axes_refused() -> None:
    g = graph("REVERSE_V2", (2, 3, 4), [[0, 2]], [(2, 3, 4)])
    with pytest.raises(CompileError, match=r"non-contiguous axes \[0, 2\] \(TFLM refuses them\)"):
        prepare(g)


@pytest.mark.parametrize(("mode", "np_mode", "code"), [("REFLECT", "reflect", 0),
                                                       ("SYMMETRIC", "symmetric", 1)])  # fmt: skip
def test_mirror_pad_matches_numpy(mode: str, np_mode: str, code: int) -> None:
    shape, pads = (2, 5, 4, 3), [[0, 1], [3, 2], [0, 3 - code], [2, 1]]
    x = data(shape)
    want = np.pad(x, pads, np_mode)
    g = graph("MIRROR_PAD", shape, [pads], [want.shape], {"mode": code})
    assert np.array_equal(run(g, x)[0], want.reshape(-1))


def test_mirror_pad_too_wide_refused() -> None:
    g = graph("MIRROR_PAD", (1, 3, 3), [[[0, 0], [3, 0], [0, 0]]], [(1, 6, 3)], {"mode": 0})
    with pytest.raises(CompileError, match=r"padding \(3, 0\) of a dim of 3 is out of REFLECT"):
        prepare(g)


def _stb_ref(x: np.ndarray, bh: int, bw: int) -> np.ndarray:
    b, h, w, c = x.shape
    y = x.reshape(b, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return y.reshape(bh * bw * b, h // bh, w // bw, c)


@pytest.mark.parametrize(("shape", "block"), [((1, 4, 6, 3), (2, 2)), ((2, 6, 3, 2), (3, 1))])
def test_space_to_batch_and_back(shape, block) -> None:
    x = data(shape)
    want = _stb_ref(x, *block)
    g = graph("SPACE_TO_BATCH_ND", shape, [list(block), [[0, 0], [0, 0]]], [want.shape])
    y = run(g, x)[0]
    assert np.array_equal(y, want.reshape(-1))
    back = graph("BATCH_TO_SPACE_ND", want.shape, [list(block), [[0, 0], [0, 0]]], [shape])
    assert np.array_equal(run(back, y.reshape(want.shape))[0], x.reshape(-1))


def test_batch_to_space_crops() -> None:
    x = data((4, 3, 5, 2))
    full = graph("BATCH_TO_SPACE_ND", x.shape, [[2, 2], [[0, 0], [0, 0]]], [(1, 6, 10, 2)])
    whole = run(full, x)[0].reshape(1, 6, 10, 2)
    g = graph("BATCH_TO_SPACE_ND", x.shape, [[2, 2], [[1, 0], [0, 2]]], [(1, 5, 8, 2)])
    assert np.array_equal(run(g, x)[0], whole[:, 1:, :8].reshape(-1))


def test_padded_space_to_batch_refused() -> None:
    g = graph("SPACE_TO_BATCH_ND", (1, 5, 6, 3), [[2, 2], [[1, 0], [1, 1]]], [(4, 3, 4, 3)])
    with pytest.raises(CompileError, match="TFLM pads with an uninitialised value"):
        prepare(g)


# ------------------------------------------------------------ GATHER_ND, EMBEDDING_LOOKUP, DUS


def _gather_nd_ref(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    nd = idx.shape[-1]
    rows = [x[tuple(r)] for r in idx.reshape(-1, nd)]
    return np.stack(rows).reshape(*idx.shape[:-1], *x.shape[nd:])


@pytest.mark.parametrize(
    ("shape", "idx"),
    [((4, 5, 3), [[1, 2], [3, 4], [0, 0]]), ((3, 4), [[[2], [0]], [[1], [1]]]),
     ((2, 3, 4), [[1, 2, 3], [0, 0, 1]])],
)  # fmt: skip
def test_gather_nd_matches_numpy(shape, idx) -> None:
    x = data(shape)
    ix = np.array(idx)
    want = _gather_nd_ref(x, ix)
    g = graph("GATHER_ND", shape, [ix], [want.shape])
    assert np.array_equal(run(g, x)[0], want.reshape(-1))


def test_gather_nd_outside_params_refused() -> None:
    g = graph("GATHER_ND", (3, 4), [[[3, 0]]], [(1,)])
    with pytest.raises(CompileError, match="index row 0 selects bytes outside params"):
        prepare(g)


def test_update_slice_start_indices_must_match_the_rank() -> None:
    g = graph("DYNAMIC_UPDATE_SLICE", (2, 3), [[0, 0, 0]], [(2, 3)])
    g.ops[0].inputs = [0, 0, 1]  # the operand as its own update; 3 start indices for rank 2
    with pytest.raises(CompileError, match="start indices must be 2 int32/int64 values"):
        prepare(g)


def test_embedding_lookup_constant_ids_out_of_range_refused() -> None:
    g = graph("EMBEDDING_LOOKUP", (4, 6), [[1, 4]], [(2, 6)], order=[1, 0])
    with pytest.raises(CompileError, match="an id is outside the table of 4 rows"):
        prepare(g)


def _lookup_model(tmp: Path) -> Path:
    """ARG_MAX over 10 values picks rows of a 7-row table: ids 7..9 fail TFLM's Invoke."""
    from modelgen.ops_move2 import _argmax, _i32
    from modelgen.tflite_writer import Node, T, write

    q = (0.05, 3)
    table = np.arange(56, dtype=np.int8).reshape(7, 8)
    path = tmp / "lookup_short.tflite"
    path.write_bytes(write(
        [T("x", (3, 10), quant=q), _i32("axis", [1]), T("ids", (3,), "int32"),
         T("table", (7, 8), quant=q, data=table), T("y", (3, 8), quant=q)],
        [Node("ARG_MAX", [0, 1], [2], "ArgMaxOptions", _argmax),
         Node("EMBEDDING_LOOKUP", [2, 3], [4])], [0], [4],
    ))  # fmt: skip
    return path


def test_embedding_lookup_refuses_an_id_outside_the_table_as_tflm(tmp_path: Path) -> None:
    from tinycompile import api
    from tinycompile.run.ioformat import Refusal

    x = np.full((4, 3, 10), -50, np.int8)
    x[:, :, 2] = 20  # ids 2: inside
    x[2, 1, 8] = 100  # input 2 picks id 8: outside the 7 rows
    r = api.compare(_lookup_model(tmp_path), inputs=[x.reshape(12, 10)], layers=True)
    assert r.samples == 2 and r.mismatches == 0
    assert r.result.refused == Refusal(2, 1, 1, "EMBEDDING_LOOKUP", "an id outside the table")
    assert r.refusal is not None and r.refusal["agrees"] and r.ok
