"""tc_in.bin and tc_out.bin (tinycompile/run/outformat.py): files written here by an independent
writer (``struct.pack`` in the order the module docstring and firmware/runtime/tc_runner.c
give) read back exactly, for made-up tensors of every type and rank 0 to 4, with layer dumps,
state and ticks, over several samples; short and long files refused; and the real C runner's
bytes where the layout puts them."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import MODELS

from tinycompile import api
from tinycompile.build import build_host
from tinycompile.errors import CompileError, RunError
from tinycompile.ir import Graph, Op, Tensor
from tinycompile.run import outformat, samples
from tinycompile.run.ioformat import Refusal, sample_bytes, unpack_outputs, unpack_refused
from tinycompile.run.reference import run_tflm

FMT = {"int8": "b", "uint8": "B", "int16": "h", "int32": "i", "float32": "f", "uint32": "I"}
# graph tensors: two inputs, three layers (the last two are graph outputs), two more outputs
TENSORS = [
    Tensor(0, "x", (1, 3), "int8"),
    Tensor(1, "x2", (), "float32"),
    Tensor(2, "l0", (2, 2, 3), "int16"),
    Tensor(3, "y_scalar", (), "int8"),
    Tensor(4, "y_u8", (1, 2, 1, 3), "uint8"),
    Tensor(5, "y_i32", (3,), "int32"),
    Tensor(6, "y_f32", (2, 2), "float32"),
]
LAYERS = [2, 3, 4]  # execution order
OUTPUTS = [3, 4, 5, 6]
STATE = 6  # bytes


def _plan(state_bytes: int = STATE) -> SimpleNamespace:
    """A stand-in plan with what the layout needs: graph, layers in order, state bytes."""
    ops = [Op(10 + k, f"OP{k}", [0], [t]) for k, t in enumerate(LAYERS)]
    g = Graph("made_up", list(TENSORS), ops, [0, 1], OUTPUTS)
    lowered = [SimpleNamespace(op=ops[k], refusal="bad input") for k in (1, 0, 2)]
    order = [1, 0, 2]  # positions in the lowering: LAYERS' order
    return SimpleNamespace(graph=g, lowering=SimpleNamespace(ops=lowered), order=order,
                           state_bytes=state_bytes)  # fmt: skip


def _values(t: Tensor, n: int, rng: np.random.Generator) -> np.ndarray:
    """n made-up samples of ``t``, shape (n, *t.shape), every value of its type possible."""
    shape = (n, *t.shape)
    if t.dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32) * 1e3
    info = np.iinfo(t.dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(t.dtype)


def _write(rows: list[list[tuple[str, np.ndarray]]]) -> bytes:
    """The independent writer: per sample, each (type, values) in order, little-endian."""
    out = b""
    for blocks in rows:
        for dtype, v in blocks:
            flat = v.reshape(-1).tolist()
            out += struct.pack(f"<{len(flat)}{FMT[dtype]}", *flat)
    return out


def _made_up(n: int, *, debug: bool, profile: bool, state: int = STATE):
    """tc_out.bin of ``n`` samples as tc_runner.c writes it, and the values written."""
    rng = np.random.default_rng(n + 2 * debug + profile)
    layers = {t: _values(TENSORS[t], n, rng) for t in LAYERS}
    outs = {t: (layers[t] if t in layers else _values(TENSORS[t], n, rng)) for t in OUTPUTS}
    st = rng.integers(0, 256, (n, state), endpoint=False).astype(np.uint8)
    ticks = rng.integers(0, 2**32, (n, len(LAYERS) + 1), dtype=np.uint64).astype(np.uint32)
    rows = []
    for s in range(n):
        blocks = [(TENSORS[t].dtype, layers[t][s]) for t in LAYERS] if debug else []
        blocks += [(TENSORS[t].dtype, outs[t][s]) for t in OUTPUTS]
        blocks += [("uint8", st[s])] if debug and state else []
        blocks += [("uint32", ticks[s])] if profile else []
        rows.append(blocks)
    return _write(rows), layers, outs, st, ticks


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("profile", [False, True])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_reader_gives_back_what_was_written(n: int, debug: bool, profile: bool) -> None:
    """Every block of every sample comes back bit for bit, as the layout's blocks and as a
    RunResult of IR batches."""
    data, layers, outs, st, ticks = _made_up(n, debug=debug, profile=profile)
    p = _plan()
    lay = outformat.plan_out_layout(p, debug_layers=debug, profile=profile)
    assert lay.sample_bytes == sample_bytes(p, debug_layers=debug, profile=profile)
    assert len(data) == lay.size(n) == n * lay.sample_bytes
    kinds = [b.kind for b in lay.blocks]
    want = ["layer"] * 3 * debug + ["output"] * 4 + ["state"] * debug + ["ticks"] * profile
    assert kinds == want
    got = lay.read(data, n)
    for b, a in zip(lay.blocks, got, strict=True):
        assert a.shape == (n, *b.shape) and a.dtype == np.dtype(b.dtype)
    r = unpack_outputs(p, data, n, debug_layers=debug, profile=profile)
    for j, t in enumerate(OUTPUTS):
        tensor = TENSORS[t]
        assert r.outputs[j].dtype == np.dtype(tensor.dtype)
        assert r.outputs[j].shape == samples.batch_shape(tensor, n)
        assert r.outputs[j].tobytes() == outs[t].tobytes()
    assert len(r.layers) == (3 if debug else 0)
    for k, t in enumerate(LAYERS if debug else []):
        assert r.layers[k].tobytes() == layers[t].tobytes()
    if debug and n:
        assert r.state is not None and np.array_equal(r.state, st)
    else:
        assert r.state is None
    if profile and n:
        assert r.ticks is not None and r.ticks.dtype == np.int64
        assert np.array_equal(r.ticks, ticks.astype(np.int64))
    else:
        assert r.ticks is None


def test_rank0_output_is_one_value_per_sample() -> None:
    data, _, outs, _, _ = _made_up(5, debug=False, profile=False)
    r = unpack_outputs(_plan(), data, 5, debug_layers=False, profile=False)
    assert r.outputs[0].shape == (5,) and np.array_equal(r.outputs[0], outs[3].reshape(5))


def test_no_state_block_without_state() -> None:
    """TC_STATE_BYTES 0: no state block even in a debug build."""
    data, layers, outs, _, ticks = _made_up(2, debug=True, profile=True, state=0)
    r = unpack_outputs(_plan(0), data, 2, debug_layers=True, profile=True)
    assert r.state is None and np.array_equal(r.ticks, ticks.astype(np.int64))
    assert r.outputs[3].tobytes() == outs[6].tobytes()


@pytest.mark.parametrize("cut", [1, 4, 40])
def test_a_short_or_long_file_is_a_run_error(cut: int) -> None:
    data, *_ = _made_up(3, debug=True, profile=True)
    p = _plan()
    with pytest.raises(RunError, match=f"firmware wrote {len(data) - cut} bytes"):
        unpack_outputs(p, data[:-cut], 3, debug_layers=True, profile=True)
    with pytest.raises(RunError, match="expected"):
        unpack_outputs(p, data + bytes(cut), 3, debug_layers=True, profile=True)


def test_refused_run_keeps_the_samples_before_it() -> None:
    """Status 5 after sample 2's first layer dump: two samples back, the partial one ignored,
    a partial one of a whole sample or more refused."""
    data, layers, outs, _, _ = _made_up(3, debug=True, profile=False)
    p = _plan()
    per = sample_bytes(p, debug_layers=True, profile=False)
    first = TENSORS[LAYERS[0]].size * 2  # sample 2's layer 0 dump (int16)
    text = "noise\ntc-refused: sample=2 layer=1\n"
    r = unpack_refused(p, data[: 2 * per + first], text, debug_layers=True, profile=False)
    assert r.refused == Refusal(2, 1, 11, "OP1", "bad input")
    assert r.outputs[1].tobytes() == outs[4][:2].tobytes()
    assert r.layers[0].tobytes() == layers[2][:2].tobytes()
    with pytest.raises(RunError, match="and part of one more"):
        unpack_refused(p, data[: 2 * per - 1], text, debug_layers=True, profile=False)
    with pytest.raises(RunError, match="and part of one more"):
        unpack_refused(p, data, text, debug_layers=True, profile=False)
    with pytest.raises(RunError, match="did not say where"):
        unpack_refused(p, data, "", debug_layers=True, profile=False)


def test_tc_in_is_the_count_then_every_input_of_each_sample() -> None:
    """pack_inputs against the independent writer; the layout reads it back."""
    g = _plan().graph
    rng = np.random.default_rng(0)
    x = _values(TENSORS[0], 4, rng).reshape(4, 3)  # IR batch of (1, 3): (4, 3)
    x2 = _values(TENSORS[1], 4, rng)  # rank 0: (4,)
    data = api.pack_inputs(g, [x, x2])
    assert data == struct.pack("<I", 4) + _write(
        [[("int8", x[s]), ("float32", x2[s])] for s in range(4)]
    )
    lay = outformat.in_layout([g.t(t) for t in g.inputs])
    assert outformat.sample_count(data) == 4 and lay.size(4) == len(data)
    a, b = lay.read(data)
    assert a.tobytes() == x.tobytes() and b.tobytes() == x2.tobytes()
    with pytest.raises(CompileError, match="wants float32"):
        api.pack_inputs(g, [x, x2.astype(np.float64)])
    with pytest.raises(RunError, match="tc_in.bin holds 27 bytes of samples, expected 28"):
        lay.read(data[:-1])


def test_layout_positions() -> None:
    """Block positions: a sample's blocks one after the other, samples one after the other."""
    lay = outformat.plan_out_layout(_plan(), debug_layers=True, profile=True)
    sizes = [12 * 2, 1, 6, 1, 6, 12, 16, STATE, 4 * 4]  # layers, outputs, state, ticks
    assert [b.nbytes for b in lay.blocks] == sizes
    assert lay.offsets() == [sum(sizes[:k]) for k in range(len(sizes))]
    assert lay.position(2, 3) == 2 * sum(sizes) + sum(sizes[:3])
    assert outformat.in_layout(TENSORS[:2]).position(1, 1) == 4 + (3 + 4) + 3  # count, x x2, x


def test_real_runner_writes_where_the_layout_says(tmp_path: Path) -> None:
    """tc_runner.c itself, built for the host with TC_DEBUG_LAYERS and TC_PROFILE on a model
    with five layers and state: every block of every sample, read at the layout's positions,
    is TFLM's (layer outputs, graph output, each variable tensor at its state offset) or the
    host's zero ticks; the file's size is the layout's."""
    path = MODELS / "real" / "kws_svdf.tflite"
    p = api.plan(path)
    g = p.graph
    assert len(p.order) > 2 and p.state_bytes > 0
    n = 3
    xs = api.make_inputs(g, n, seed=4)
    exe = build_host(api.generate(p, tmp_path / "project"), debug_layers=True, profile=True)
    (tmp_path / "tc_in.bin").write_bytes(api.pack_inputs(g, xs))
    subprocess.run([str(exe)], cwd=tmp_path, check=True, timeout=120)
    data = (tmp_path / "tc_out.bin").read_bytes()
    lay = outformat.plan_out_layout(p, debug_layers=True, profile=True)
    assert len(data) == lay.size(n)
    layer_ids = [p.lowering.ops[i].op.outputs[0] for i in p.order]
    ref = run_tflm(path, xs, tensor_ids=layer_ids + sorted(p.state), g=g)

    def at(s: int, k: int, nbytes: int | None = None) -> bytes:
        start = lay.position(s, k)
        return data[start : start + (lay.blocks[k].nbytes if nbytes is None else nbytes)]

    for s in range(n):
        for k in lay.find(outformat.LAYER):
            assert at(s, k) == ref.tensors[s][layer_ids[k]].tobytes(), (s, k)
        (o,) = lay.find(outformat.OUTPUT)
        assert at(s, o) == samples.sample(g.t(g.outputs[0]), ref.outputs[0], s).tobytes()
        (st,) = lay.find(outformat.STATE)
        for tid, off in p.state.items():
            start = lay.position(s, st) + off
            assert data[start : start + g.t(tid).nbytes] == ref.tensors[s][tid].tobytes()
        (tk,) = lay.find(outformat.TICKS)
        assert at(s, tk) == bytes(4 * (len(p.order) + 1))  # the host's timer reads 0
