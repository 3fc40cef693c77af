"""ONNX convolutions and GEMMs on the TFLite kernels (issue 19): CONV_2D's, DEPTHWISE_CONV_2D's
and FULLY_CONNECTED's fast paths with onnxruntime's requantization as the ONNX variant of their
one requantization (firmware/include/tc_qmath.h, tinycompile/ops/onnx_requant.py), weights with
nonzero zero points on the portable ONNX kernels, and streamed ONNX layers.

- Which kernel each layer takes: groups 1 and depthwise (any multiplier) on the fast kernels;
  other grouped convolutions, nonzero weight zero points and accumulators whose float32 rounds
  (``wide``) on the portable ones.
- Hand-made models (tests/onnxgen/handmade.py): ``wzp`` / ``wzp_u8`` (int8 weights with zero
  point -13, uint8 ones with 255: per-unit offsets the frontend keeps), ``sweep`` (the scales
  of every exponent the integer form takes, ties included), ``pads`` (pads beyond the window,
  asymmetric, on the TFLite kernels; also streamed), compared with the reference
  ``run`` uses on the host and in QEMU on stm32f746 (Cortex-M7: the float form), samd21
  (Cortex-M0+: the integer form, Thumb-1 products) and qemu-m3 (Cortex-M3: the integer form,
  SMULL).
- The twins (tests/models/onnx, ``python -m tests.onnxgen.twins``): the same CNN as ONNX and
  as TFLite compile to the same arena, and the ONNX one runs within 10% of the TFLite one's
  instructions on the M7 and the M0+ (benchmarks/bench_emulator.py prints the figures).
- Streaming: an ONNX CNN too large for the samd21 streams its first layers there (asymmetric
  pads, depthwise multiplier 2) and stays bit-exact, in QEMU and on the host.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import MODELS, ROOT

from tinycompile import api
from tinycompile.pipeline import prepare_graph
from tinycompile.planner.streams import streamed_ops

TWINS = MODELS / "onnx"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("onnxruntime")
    from tests.onnxgen.handmade import build_handmade
    from tests.onnxgen.models import build_all
    from tests.onnxgen.twins import STREAM_SHAPE, quantized, stream_cnn

    out = tmp_path_factory.mktemp("onnx_fast")
    made = {**build_all(out, ["cnn", "grouped"]), **build_handmade(out)}
    made["stream_cnn"] = quantized(stream_cnn(), STREAM_SHAPE, out / "stream_cnn.onnx")
    return made


def kernels(path: Path) -> list[str]:
    """The prepared kind of each ONNX_CONV / ONNX_GEMM of a model, in order."""
    g = copy.deepcopy(api.plan(path).graph)
    return [
        type(p.data).__name__ for p in prepare_graph(g) if p.op.kind in ("ONNX_CONV", "ONNX_GEMM")
    ]


def inputs(path: Path, n: int) -> list[np.ndarray]:
    from tests.test_onnx_models import calibrated_inputs

    return calibrated_inputs(api.plan(path).graph, n)


def test_layers_take_the_fast_kernels_where_they_can(models: dict[str, Path]) -> None:
    cnn = ["Conv2D", "Depthwise", "Conv2D", "Conv2D", "FullyConnected"]
    assert kernels(models["cnn_qdq_pc"]) == kernels(models["cnn_qop"]) == cnn
    # 2 groups stay portable; a strided convolution and a depthwise one of multiplier 2 do not
    assert kernels(models["grouped_qop_pc"]) == ["OnnxAccum", "Conv2D", "Depthwise"]
    assert kernels(models["wide"]) == ["OnnxAccum"]  # float32(acc) rounds: portable
    assert kernels(models["wzp"]) == kernels(models["wzp_u8"]) == ["OnnxAccum"] * 2
    assert kernels(models["sweep"]) == ["FullyConnected"] * 2
    assert kernels(models["pads"]) == ["Conv2D", "Depthwise"]
    twin = ["Conv2D"] + ["Depthwise", "Conv2D"] * 3 + ["FullyConnected"]
    assert kernels(TWINS / "cnn_twin.onnx") == twin


def test_weight_zero_points_reach_the_kernel(models: dict[str, Path]) -> None:
    """The frontend keeps a per-unit offset where ``w - zero_point`` does not fit int8; the
    portable kernels get it as w_zp (only where some unit needs one)."""
    for name in ("wzp", "wzp_u8"):
        g = api.plan(models[name]).graph
        zps = [g.t(op.inputs[1]).quant.zero_point for op in g.ops if op.kind.startswith("ONNX_")]
        assert all(np.any(z != 0) for z in zps), (name, zps)
        c = api.generate(api.plan(models[name]), models[name].parent / f"{name}_c")
        assert "w_zp" in (c / "model" / "tc_model.c").read_text()


@pytest.mark.parametrize("name", ["wzp", "wzp_u8", "sweep", "pads"])
@pytest.mark.parametrize("board", ["host", "stm32f746", "samd21", "qemu-m3"])
def test_handmade_bit_exact(models: dict[str, Path], name: str, board: str) -> None:
    path = models[name]
    r = api.compare(path, board=board, inputs=inputs(path, 20), layers=True)
    assert r.ok and r.layers, str(r)
    assert len(np.unique(r.result.outputs[0])) > 20


def test_twins_match_their_references_and_plan_the_same_arena() -> None:
    onnx_m, tfl = TWINS / "cnn_twin.onnx", TWINS / "cnn_twin.tflite"
    for board in ("stm32f746", "samd21"):
        assert api.plan(onnx_m, board=board).arena_bytes == api.plan(tfl, board=board).arena_bytes
    for path in (onnx_m, tfl):
        r = api.compare(path, n=5, layers=True)
        assert r.ok and len(r.layers) >= 8, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_twins_onnx_within_ten_percent_of_tflite(board: str) -> None:
    runs = {
        p.suffix: api.compare(p, board=board, n=2, layers=False)
        for p in (TWINS / "cnn_twin.onnx", TWINS / "cnn_twin.tflite")
    }
    assert all(r.ok for r in runs.values())
    ins = {k: r.profile["instructions"] for k, r in runs.items()}
    assert ins[".onnx"] <= 1.10 * ins[".tflite"], ins


@pytest.mark.qemu
def test_onnx_cnn_streams_on_the_samd21_bit_exact(models: dict[str, Path]) -> None:
    path = models["stream_cnn"]
    plain, p = api.plan(path, stream="off"), api.plan(path, board="samd21")
    assert plain.arena_bytes > 32 * 1024 > p.arena_bytes
    layers = streamed_ops(p.graph)
    assert layers and all(plain.graph.ops[i].kind == "ONNX_CONV" for i in layers), layers
    assert sum(la.macs for la in p.layers) == sum(la.macs for la in plain.layers)
    r = api.compare(path, board="samd21", inputs=inputs(path, 3), layers=True)
    assert r.ok and r.layers, str(r)


def test_onnx_cnn_streamed_whole_matches_on_the_host(models: dict[str, Path]) -> None:
    path = models["stream_cnn"]
    p = api.plan(path, stream="min")
    assert len(streamed_ops(p.graph)) == 4  # every convolution, by rows
    r = api.compare(path, inputs=inputs(path, 5), layers=True, stream="min")
    assert r.ok and r.layers, str(r)
    r = api.compare(models["pads"], inputs=inputs(models["pads"], 5), layers=True, stream=2)
    assert r.ok and r.layers, str(r)


def test_bench_pairs_the_twins() -> None:
    """benchmarks/bench_twins.py: make bench's twin rows, from bench_emulator's results."""
    import sys

    sys.path.insert(0, str(ROOT))
    from benchmarks.bench_twins import format_pairs, pairs

    def row(model: str, core: str, ins: int, arena: int) -> SimpleNamespace:
        fast = SimpleNamespace(instructions=ins, error="", arena=arena)
        return SimpleNamespace(model=model, core=core, board="b", fast=fast, exact=True)

    rows = pairs([row("cnn_twin", "M7", 1000, 64), row("cnn_twin.onnx", "M7", 1050, 64),
                  row("cnn_twin", "M0+", 1000, 64), row("cnn_twin.onnx", "M0+", 1200, 80),
                  row("kws_dscnn", "M7", 5, 5)])  # fmt: skip
    assert [(r["core"], r["meets"]) for r in rows] == [("M7", True), ("M0+", False)]
    text = "\n".join(format_pairs(rows))
    assert "1.050    yes" in text and "1.200     no" in text and "80   yes" in text
