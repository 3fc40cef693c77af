"""The data-movement operators (TRANSPOSE, RESIZE_NEAREST_NEIGHBOR, STRIDED_SLICE, SLICE, SPLIT,
SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH).

Their models (``python -m tests.modelgen.ops_layout``) are compared with TFLM layer by layer in
test_ops_registry.py. Here: the compile-time copy loops replayed in Python against numpy for
many configurations the models do not cover, and the refusals, at the IR level.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tinycompile.errors import CompileError
from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.ops import decode, load_all
from tinycompile.ops.datamove import Copies, Copy

RNG = np.random.default_rng(7)


def replay(c: Copy, x: np.ndarray) -> np.ndarray:
    """What tc_copy_s8 writes for copy ``c`` of input bytes ``x`` (flattened)."""
    src = x.reshape(-1)
    out = []
    counts = [lp.count for lp in c.loops]
    for idx in itertools.product(*(range(n) for n in counts)):
        off = c.offset
        for i, lp in zip(idx, c.loops, strict=True):
            off += lp.table[i] if lp.table is not None else i * lp.stride
        assert 0 <= off and off + c.run <= src.size
        out.append(src[off : off + c.run])
    return np.concatenate(out) if out else np.zeros(0, src.dtype)


def _t(tid: int, shape, dtype: str = "int8", data=None, q=(0.05, 3)) -> Tensor:
    quant = None
    if dtype == "int8":
        quant = Quant(np.array([q[0]], np.float32), np.array([q[1]], np.int64))
    return Tensor(tid, f"t{tid}", tuple(shape), dtype, quant, data)


def graph(kind: str, x_shape, consts: list, out_shapes: list, options=None, order=None) -> Graph:
    """One op of ``kind``: int8 input 0, constant int32 inputs ``consts`` (arrays, or None for
    an absent input), int8 outputs, raw ``options`` as the file would give them. ``order``
    places the data input among the inputs."""
    ts = [_t(0, x_shape)]
    ins = [0]
    for c in consts:
        if c is None:
            ins.append(-1)
            continue
        a = np.asarray(c, np.int32)
        ts.append(_t(len(ts), a.shape, "int32", a))
        ins.append(len(ts) - 1)
    if order is not None:
        ins = [ins[i] for i in order]
    outs = []
    for s in out_shapes:
        ts.append(_t(len(ts), s))
        outs.append(len(ts) - 1)
    g = Graph("g", ts, [Op(0, kind, ins, outs, options=dict(options or {}))], [0], outs)
    decode(g)
    return g


def prepare(g: Graph) -> Copies:
    return load_all()[g.ops[0].kind].prepare(g.ops[0], g)


def run(g: Graph, x: np.ndarray) -> list[np.ndarray]:
    d = prepare(g)
    outs = [np.zeros(g.t(t).size, np.int8) for t in g.ops[0].outputs]
    for c in d.copies:
        assert g.ops[0].inputs[c.input] == 0 and len(c.loops) <= 6
        outs[c.output][c.out_offset : c.out_offset + c.nbytes] = replay(c, x)
    return outs


def data(shape) -> np.ndarray:
    return RNG.integers(-128, 128, size=shape).astype(np.int8)


# ------------------------------------------------------------------ TRANSPOSE


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (1, 3, 4, 5), (2, 3, 1, 4, 3)])
def test_transpose_every_permutation(shape) -> None:
    x = data(shape)
    for perm in itertools.permutations(range(len(shape))):
        want = x.transpose(perm)
        g = graph("TRANSPOSE", shape, [list(perm)], [want.shape])
        assert np.array_equal(run(g, x)[0], want.reshape(-1)), perm


def test_transpose_merges_loops() -> None:
    (c,) = prepare(graph("TRANSPOSE", (1, 3, 5, 4), [[0, 2, 1, 3]], [(1, 5, 3, 4)])).copies
    assert c.run == 4 and [lp.count for lp in c.loops] == [5, 3]


@pytest.mark.parametrize(
    "shape,perm,out,msg",
    [
        ((1, 2, 3, 2, 2, 3), [0, 5, 1, 4, 3, 2], (1, 3, 2, 2, 2, 3), "rank 6"),
        ((2, 3), [0, 0], (2, 2), "not a permutation"),
        ((2, 3), [1, 0], (2, 3), "output shape"),
    ],
)
def test_transpose_refusals(shape, perm, out, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        prepare(graph("TRANSPOSE", shape, [perm], [out]))


def test_transpose_runtime_perm_refused() -> None:
    g = graph("TRANSPOSE", (2, 3), [[1, 0]], [(3, 2)])
    g.t(1).data = None
    with pytest.raises(CompileError, match="must be constant"):
        prepare(g)


# ------------------------------------------------------------------ RESIZE_NEAREST_NEIGHBOR


def _resize(x_shape, size, out, **options) -> Graph:
    return graph("RESIZE_NEAREST_NEIGHBOR", x_shape, [size], [out], options)


@pytest.mark.parametrize("half", [False, True])
def test_resize_integer_upscale_repeats(half: bool) -> None:
    x = data((2, 3, 4, 5))
    g = _resize(x.shape, [6, 12], (2, 6, 12, 5), half_pixel_centers=half)
    assert np.array_equal(run(g, x)[0], x.repeat(2, 1).repeat(3, 2).reshape(-1))


def test_resize_indices() -> None:
    from tinycompile.ops.resize_nearest import nearest

    assert [nearest(i, 5, 9, True, False) for i in range(9)] == [0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert [nearest(i, 9, 4, False, True) for i in range(4)] == [1, 3, 5, 7]
    assert [nearest(i, 5, 8, False, False) for i in range(8)] == [0, 0, 1, 1, 2, 3, 3, 4]


@pytest.mark.parametrize(
    "x_shape,size,out,msg",
    [
        ((3, 4, 5), [6, 8], (6, 8, 5), "rank 3"),
        ((1, 3, 4, 5), [6, 8, 1], (1, 6, 8, 5), "2 positive"),
        ((1, 3, 4, 5), [6, 8], (1, 6, 9, 5), "output shape"),
    ],
)
def test_resize_refusals(x_shape, size, out, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        prepare(_resize(x_shape, size, out))


# ------------------------------------------------------------------ STRIDED_SLICE, SLICE


def _ss(x_shape, begin, end, step, out, **masks) -> Graph:
    return graph("STRIDED_SLICE", x_shape, [begin, end, step], [out], masks)


@pytest.mark.parametrize(
    "begin,end,step,masks,key",
    [
        ([0, 1, 6, 1], [1, 8, 1, 5], [1, 2, -2, 1], {}, np.s_[:, 1:8:2, 6:1:-2, 1:]),
        ([0, -5, 0, 0], [1, 0, -1, 0], [1, 1, 1, -1], {"begin_mask": 13, "end_mask": 11},
         np.s_[:, -5:, :-1, ::-1]),
        ([0, 2, 1, -1], [1, 3, 6, 0], [1, 1, 1, 1], {"shrink_axis_mask": 10},
         np.s_[:, 2, 1:6, -1]),
        ([0, 9, 20, -2], [1, -20, 0, -9], [1, -4, -3, -1], {},
         np.s_[:, 9:-20:-4, 20:0:-3, -2:-9:-1]),
        ([0, 3, 0, 0], [1, 3, 6, 5], [1, 1, 1, 1], {}, np.s_[:, 3:3, :, :]),
    ],
)  # fmt: skip
def test_strided_slice_matches_numpy(begin, end, step, masks, key) -> None:
    x = data((1, 7, 6, 5))
    want = x[key]
    g = _ss(x.shape, begin, end, step, want.shape, **masks)
    assert np.array_equal(run(g, x)[0], want.reshape(-1))


def test_slice_matches_numpy() -> None:
    x = data((2, 6, 7, 5))
    g = graph("SLICE", x.shape, [[1, 1, 2, 0], [1, 4, -1, 5]], [(1, 4, 5, 5)])
    assert np.array_equal(run(g, x)[0], x[1:, 1:5, 2:, :].reshape(-1))
    lead = prepare(graph("SLICE", x.shape, [[0, 2, 0, 0], [1, 3, 7, 5]], [(1, 3, 7, 5)]))
    (c,) = lead.copies
    assert c.loops == () and c.run == 3 * 7 * 5 and c.offset == 2 * 7 * 5  # one memcpy


@pytest.mark.parametrize(
    "kind,consts,out,options,msg",
    [
        ("STRIDED_SLICE", [[0] * 5, [1] * 5, [1] * 5], (1,) * 5, {}, "rank 5"),
        ("STRIDED_SLICE", [[0, 0], [1, 2], [1, 1]], (1, 2), {"ellipsis_mask": 1}, "ellipsis"),
        ("STRIDED_SLICE", [[0, 0], [1, 2], [1, 1]], (1, 2), {"new_axis_mask": 2}, "new_axis"),
        ("STRIDED_SLICE", [[0, 0], [1, 2], [1, 0]], (1, 2), {}, "stride is 0"),
        ("STRIDED_SLICE", [[0, 0], [1, 2], [1, 1]], (1, 3), {}, "output shape"),
        ("STRIDED_SLICE", [[0, 9], [1, 2], [1, 1]], (1,), {"shrink_axis_mask": 2}, "shrink"),
        ("SLICE", [[0, 0], [1, 9]], (1, 9), {}, "outside"),
        ("SLICE", [[0, -1], [1, 1]], (1, 1), {}, "outside"),
    ],
)
def test_slice_refusals(kind: str, consts, out, options, msg: str) -> None:
    shape = (1,) * 5 if "rank" in msg else (1, 4)
    with pytest.raises(CompileError, match=msg):
        prepare(graph(kind, shape, consts, [out], options))


# ------------------------------------------------------------------ SPLIT, SPLIT_V, UNPACK, PACK


def test_split_and_split_v_match_numpy() -> None:
    x = data((2, 7, 4, 3))
    g = graph("SPLIT", x.shape, [[3]], [(2, 7, 4, 1)] * 3, {"num_splits": 3}, order=[1, 0])
    for k, got in enumerate(run(g, x)):
        assert np.array_equal(got, x[..., k].reshape(-1))
    g = graph("SPLIT_V", x.shape, [[2, -1, 3], [-3]], [(2, 2, 4, 3), (2, 2, 4, 3), (2, 3, 4, 3)])
    for got, want in zip(run(g, x), np.split(x, [2, 4], axis=1), strict=True):
        assert np.array_equal(got, want.reshape(-1))


def test_unpack_matches_numpy() -> None:
    x = data((2, 3, 5, 4))
    for axis in range(-4, 4):
        n = x.shape[axis]
        outs = [np.take(x, k, axis) for k in range(n)]
        g = graph("UNPACK", x.shape, [], [o.shape for o in outs], {"num": n, "axis": axis})
        for got, want in zip(run(g, x), outs, strict=True):
            assert np.array_equal(got, want.reshape(-1))


@pytest.mark.parametrize(
    "kind,consts,outs,options,order,msg",
    [
        ("SPLIT", [[1]], [(1, 2, 3)] * 2, {}, [1, 0], "evenly"),
        ("SPLIT", [[3]], [(1, 5, 3)], {}, [1, 0], "out of range"),
        ("SPLIT_V", [[2, 2], [1]], [(1, 2, 3), (1, 2, 3)], {}, None, "add up"),
        ("SPLIT_V", [[-1, -1], [1]], [(1, 2, 3), (1, 3, 3)], {}, None, "at most one"),
        ("SPLIT_V", [[2, 3], [1]], [(1, 2, 3), (1, 3, 2)], {}, None, "output shape"),
        ("UNPACK", [], [(1, 3)] * 4, {"axis": 1}, None, "4 outputs"),
    ],
)
def test_split_refusals(kind, consts, outs, options, order, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        prepare(graph(kind, (1, 5, 3), consts, outs, options, order))


def test_unread_split_outputs_are_placed() -> None:
    """split_unused: outputs 0 and 2 are read by no op, yet each gets its own bytes."""
    from conftest import MODELS

    from tinycompile.api import plan

    p = plan(MODELS / "ops" / "split_unused.tflite")
    (split,) = [lo.op for lo in p.lowering.ops if lo.op.kind == "SPLIT"]
    spans = sorted((p.offset(t), p.offset(t) + p.graph.t(t).nbytes) for t in split.outputs)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # disjoint
    step = [lo.op.kind for lo in (p.lowering.ops[i] for i in p.order)].index("SPLIT")
    assert p.layers[step].live_bytes >= 3 * 30


def test_pack_refusals() -> None:
    ts = [_t(0, (1, 3)), _t(1, (1, 4)), _t(2, (1, 2, 3))]
    g = Graph("g", ts, [Op(0, "PACK", [0, 1], [2], {"axis": 1})], [0, 1], [2])
    with pytest.raises(CompileError, match="differing shapes"):
        prepare(g)
    g.t(1).shape = (1, 3)
    assert prepare(g).chunk == 3
    g.ops[0].attrs["axis"] = 0
    with pytest.raises(CompileError, match="output shape"):
        prepare(g)


# ------------------------------------------------------------------ GATHER


def _gather_ref(x: np.ndarray, ix: np.ndarray, axis: int, bd: int) -> np.ndarray:
    if bd == 0:
        return np.take(x, ix, axis)
    return np.stack([_gather_ref(x[k], ix[k], axis - 1, bd - 1) for k in range(x.shape[0])])


@pytest.mark.parametrize(
    "shape,idx,axis,bd",
    [
        ((5, 6, 4), [[3, 0], [5, 5]], 1, 0),
        ((5, 6, 4), [4, 0, 2], 0, 0),
        ((3, 4, 5, 2), [[1, 0, 4], [2, 2, 2], [0, 3, 1]], 2, 1),  # batch and outer: per batch
        ((3, 5, 2), [[4, 0], [1, 1], [3, 2]], 1, 1),
        ((2, 3, 5, 2), [[[4], [0], [1]], [[3], [3], [2]]], 2, -1),
    ],
)
def test_gather_matches_numpy(shape, idx, axis: int, bd: int) -> None:

    x = data(shape)
    ix = np.array(idx, np.int32)
    want = _gather_ref(x, ix, axis, bd + ix.ndim if bd < 0 else bd)
    g = graph("GATHER", shape, [ix], [want.shape], {"axis": axis, "batch_dims": bd})
    assert np.array_equal(run(g, x)[0], want.reshape(-1))


@pytest.mark.parametrize(
    "idx,options,msg",
    [
        ([0, 5], {"axis": 1}, "outside"),
        ([0, -1], {"axis": 1}, "outside"),
        ([[0, 1]], {"axis": 1, "batch_dims": 1}, "batch dims"),
        ([0, 1], {"axis": 3}, "out of range"),
    ],
)
def test_gather_refusals(idx, options, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        prepare(graph("GATHER", (2, 5, 3), [idx], [(2, 2, 3)], options))


def test_gather_runtime_indices_refused() -> None:
    g = graph("GATHER", (2, 5, 3), [[0, 1]], [(2, 2, 3)], {"axis": 1})
    g.t(1).data = None
    with pytest.raises(CompileError, match="must be constant"):
        prepare(g)


# ------------------------------------------------------------------ DEPTH_TO_SPACE, SPACE_TO_DEPTH


@pytest.mark.parametrize("b", [1, 2, 3])
def test_depth_space_round_trip(b: int) -> None:
    n, h, w, c = 2, 2, 3, 2 * b * b
    x = data((n, h, w, c))
    want = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
    want = want.reshape(n, h * b, w * b, c // (b * b))
    g = graph("DEPTH_TO_SPACE", x.shape, [], [want.shape], {"block_size": b})
    assert np.array_equal(run(g, x)[0], want.reshape(-1))
    g = graph("SPACE_TO_DEPTH", want.shape, [], [x.shape], {"block_size": b})
    assert np.array_equal(run(g, want)[0], x.reshape(-1))


@pytest.mark.parametrize(
    "kind,shape,out,b,msg",
    [
        ("DEPTH_TO_SPACE", (1, 2, 2, 6), (1, 4, 4, 1), 2, "not divisible"),
        ("SPACE_TO_DEPTH", (1, 3, 4, 2), (1, 1, 2, 8), 2, "not divisible"),
        ("SPACE_TO_DEPTH", (1, 4, 4, 2), (1, 2, 2, 8), 0, "block size"),
        ("DEPTH_TO_SPACE", (2, 2, 8), (4, 4, 2), 2, "rank 3"),
    ],
)
def test_depth_space_refusals(kind: str, shape, out, b: int, msg: str) -> None:
    with pytest.raises(CompileError, match=msg):
        prepare(graph(kind, shape, [], [out], {"block_size": b}))


def test_tile_refused_because_tflm_cannot_run_it(tmp_path) -> None:
    """TILE (tf.tile) has no TFLM kernel: TFLM cannot even load the model, so there is nothing
    to be bit-exact with and the compiler refuses it with that reason. Should a TFLM update bring
    the kernel, the first assertion fails and TILE can be added as a unit."""
    from modelgen.tflite_writer import Node, T, write

    from tinycompile import api
    from tinycompile.run.reference import run_tflm

    tensors = [
        T("x", (1, 3, 4, 2), quant=(0.05, 3)),
        T("multiples", (4,), "int32", data=np.array([1, 2, 1, 3], np.int32)),
        T("y", (1, 6, 4, 6), quant=(0.05, 3)),
    ]
    path = tmp_path / "tile.tflite"
    path.write_bytes(write(tensors, [Node("TILE", [0, 1], [2])], [0], [2]))
    with pytest.raises(RuntimeError):
        run_tflm(path, [np.zeros((1, 1, 3, 4, 2), np.int8)])
    problems = api.check(path)
    assert [e.line() for e in problems] == [
        f"{path}: op #0 TILE: operator TILE is not supported: TFLM has no TILE kernel (its "
        "interpreter cannot load the model), so there is no reference to be bit-exact with"
    ]
