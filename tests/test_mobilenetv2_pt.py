"""Issue 21's PyTorch-style MobileNetV2 (tests/modelgen/mobilenetv2_pt.py: float NCHW input,
QUANTIZE, TRANSPOSE, an explicit PAD before every 3x3 layer, DEQUANTIZE at the end), written at
test time (deterministic, no binary in the repository):

- its arena equals its twin's, the same network with TFLite's built-in SAME padding, on every
  board and streaming mode (the PADs fold away: passes/pad_fold.py);
- at 80x80 it is bit-exact with TFLM layer by layer, with the float interface and with
  ``--int8-io`` (the QUANTIZE and DEQUANTIZE dropped, passes/int8_io.py), on the host;
- at 224x224 with the float interface no board of 512 KB can hold it (the float input alone
  is 602,112 B); with ``--int8-io`` (the NCHW TRANSPOSE taken into the port too) it fits the
  stm32h743 by streaming the stem by rows, and runs bit-exact in QEMU;
- streamed segments need not be a prefix of the schedule (planner/streams.py): at 80x80 with
  the float interface the QUANTIZE and TRANSPOSE run whole, then the layers by rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from modelgen.mobilenetv2_pt import MODELS, build

from tinycompile import api
from tinycompile.fit import check_fit

H743 = 512 * 1024


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("mbv2pt")
    out = {}
    for name in ("mbv2pt_80", "mbv2pt_80_twin", "mbv2pt_224"):
        out[name] = d / f"{name}.tflite"
        out[name].write_bytes(MODELS[name]())
    return out


def test_generator_is_deterministic() -> None:
    assert build(32) == build(32) and build(32) != build(32, pads=False)


@pytest.mark.parametrize(
    "board,stream,int8_io",
    [(None, "off", False), (None, "off", True), ("stm32f746", "auto", False), (None, "min", True)],
)
def test_pads_cost_nothing(models: dict[str, Path], board, stream, int8_io: bool) -> None:
    kw = {"board": board, "stream": stream, "int8_io": int8_io}
    pads = api.plan(models["mbv2pt_80"], **kw)
    twin = api.plan(models["mbv2pt_80_twin"], **kw)
    assert "PAD" not in {op.kind for op in pads.model_graph.ops}
    assert pads.arena_bytes == twin.arena_bytes
    assert [la.live_bytes for la in pads.layers] == [la.live_bytes for la in twin.layers]


@pytest.mark.parametrize("int8_io", [False, True])
def test_80_bit_exact_layer_by_layer_on_the_host(models: dict[str, Path], int8_io: bool) -> None:
    r = api.compare(models["mbv2pt_80"], n=3, layers=True, int8_io=int8_io)
    assert r.ok and r.mismatches == 0, str(r)
    assert sum(1 for la in r.layers if la["compared"]) >= 60
    g = api.plan(models["mbv2pt_80"], int8_io=int8_io).graph
    kinds = [g.t(t).dtype for t in (*g.inputs, *g.outputs)]
    assert kinds == (["int8", "int8"] if int8_io else ["float32", "float32"])


def test_224_fits_the_h743_only_with_int8_io(models: dict[str, Path]) -> None:
    floats = api.plan(models["mbv2pt_224"], board="stm32h743")
    assert not check_fit(floats, "stm32h743").fits_sram  # the float input alone: 602,112 B
    p = api.plan(models["mbv2pt_224"], board="stm32h743", int8_io=True)
    assert check_fit(p, "stm32h743").fits
    assert p.arena_bytes < H743 * 0.7 < p.unstreamed_arena
    assert p.graph.ops[0].kind == "STREAM" and "TRANSPOSE" not in {o.kind for o in p.graph.ops}
    (x,) = p.graph.inputs  # NHWC int8: the NCHW transposition went into the port
    assert p.graph.t(x).shape == (1, 224, 224, 3) and p.graph.ports[x].perm == (0, 2, 3, 1)
    assert p.graph.ports[x].shape == (1, 3, 224, 224) and p.graph.ports[x].dtype == "float32"


def test_80_float_streams_after_quantize_and_transpose(models: dict[str, Path]) -> None:
    """A segment that is not a prefix of the schedule: the QUANTIZE (in place over the float
    input) and the TRANSPOSE run whole, then the layers by rows; the arena is the float input
    alone. Bit-exact layer by layer on the host."""
    p = api.plan(models["mbv2pt_80"], stream="min")
    kinds = [op.kind for op in p.graph.ops]
    assert kinds[:3] == ["QUANTIZE", "TRANSPOSE", "STREAM"]
    assert p.arena_bytes == 80 * 80 * 3 * 4
    r = api.compare(models["mbv2pt_80"], n=2, layers=True, stream="min")
    assert r.ok and r.mismatches == 0, str(r)


def test_224_int8_io_bit_exact_in_qemu(models: dict[str, Path], tmp_path: Path) -> None:
    r = api.compare(
        models["mbv2pt_224"], board="stm32h743", n=1, layers=False, int8_io=True, workdir=tmp_path
    )
    assert r.ok and r.mismatches == 0, str(r)
