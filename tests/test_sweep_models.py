"""The layer-shape sweep (benchmarks/sweep_models.py, benchmarks/sweep_layers.py) without QEMU:
the generator's models are many, distinct, deterministic and compile for the stm32f746; the
sweep's table sorts by ratio, summarizes per class and core and reads the baseline right."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest
import tflite
from conftest import ROOT

from tinycompile import api

CLASSES = {"conv_first", "conv_pw", "conv", "dw", "dw_dm", "fc", "avgpool", "maxpool", "add"}
CLASSES |= {"mul", "conv16", "dw16", "fc16", "add16"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _load("sweep_models")


@pytest.fixture(scope="module")
def sweep() -> ModuleType:
    return _load("sweep_layers")


@pytest.fixture(scope="module")
def made(gen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    gen.generate(out)
    return out


def test_many_distinct_models_of_every_class(gen: ModuleType, made: Path) -> None:
    manifest = json.loads((made / "manifest.json").read_text())
    names = [m["name"] for m in manifest]
    assert len(names) >= 100 and len(set(names)) == len(names)
    assert CLASSES <= {m["class"] for m in manifest}
    assert sorted(p.stem for p in made.glob("*.tflite")) == sorted(names)
    assert sum(m["dtype"] == "int16" for m in manifest) >= 5
    assert all(0 < m["macs"] < gen.MAX_MACS for m in manifest)
    # the speech model's layer and the -22 shift are there
    assert "dw_dm8_c1_49x40_k10x8_s2" in names
    firsts = {"conv_first_c1_49x10_k10x4_s2_o64", "conv_first_c3_96x96_k3x3_s2_o8_relu6"}
    assert firsts <= set(names)


def test_same_bytes_every_run(gen: ModuleType, made: Path, tmp_path: Path) -> None:
    gen.generate(tmp_path)
    for p in sorted(made.iterdir()):
        assert (tmp_path / p.name).read_bytes() == p.read_bytes(), p.name


def test_one_channel_shifts_by_22(made: Path) -> None:
    for p in made.glob("*_shift22.tflite"):
        sg = tflite.Model.GetRootAs(p.read_bytes(), 0).Subgraphs(0)
        x, w, y = (sg.Tensors(i).Quantization() for i in (0, 1, 3))
        si, so = float(x.ScaleAsNumpy()[0]), float(y.ScaleAsNumpy()[0])
        shifts = [math.frexp(si * float(s) / so)[1] for s in w.ScaleAsNumpy()]
        assert min(shifts) == -22 and sorted(shifts)[1] >= -13, (p.name, shifts)


def test_every_model_compiles_for_stm32f746(made: Path) -> None:
    manifest = json.loads((made / "manifest.json").read_text())
    for m in manifest:
        p = api.plan(made / m["file"], board="stm32f746")
        assert p.arena_bytes < 200_000, m["name"]
        [op] = [p.lowering.ops[i].op for i in p.order]
        g = p.model_graph
        want = m["op"]
        if want == "DEPTHWISE_CONV_2D" and g.t(g.inputs[0]).shape[-1] == 1:
            want = "CONV_2D"  # over one channel it is one (passes/dw_one_channel.py)
        assert op.kind == want, m["name"]


def _rows(sweep: ModuleType) -> list:
    row = sweep.Row
    return [
        row("a", "conv", "CONV_2D", "M7", 1000, "stm32f746", 500, 480, 100, True),
        row("b", "conv", "CONV_2D", "M7", 1000, "stm32f746", 900, 880, 100, True),
        row("c", "conv", "CONV_2D", "M7", 1000, "stm32f746", 700, 680, 100, True),
        row("d", "fc", "FULLY_CONNECTED", "M7", 100, "stm32f746", 300, 280, 10, False, 3, 2),
        row("a", "conv", "CONV_2D", "M0+", 1000, "rp2040", 2000, 1980, 100, True),
        row("e", "dw", "DEPTHWISE_CONV_2D", "M0+", 10, "samd21", error="refused: x"),
    ]


def test_baseline_choice(sweep: ModuleType, tmp_path: Path) -> None:
    entries = [
        {"model": "/x/a.tflite", "core": "m7", "kernels": "cmsis", "instructions": 1000},
        {"model": "/x/a.tflite", "core": "m7", "kernels": "ref", "instructions": 10},
        {"model": "/x/b.tflite", "core": "m7", "kernels": "cmsis", "instructions": 1000},
        {"model": "/x/c.tflite", "core": "m7", "kernels": "cmsis", "instructions": 0, "error": "x"},
        {"model": "/x/d.tflite", "core": "m7", "kernels": "cmsis", "instructions": 400},
        {"model": "/x/a.tflite", "core": "m0", "kernels": "cmsis", "instructions": 3000},
        {"model": "/x/a.tflite", "core": "m0", "kernels": "ref", "instructions": 2500},
    ]
    for e in entries:
        e.setdefault("error", None)
        e.update(arena=4000, outputs_match_host=True)
    (tmp_path / "base.json").write_text(json.dumps(entries))
    base = sweep.load_baseline([tmp_path / "base.json"])
    assert base[("a", "M7")]["instructions"] == 1000  # CMSIS-NN on the M7, not ref
    assert base[("a", "M0+")]["kernels"] == "ref"  # the faster on the M0+
    assert ("c", "M7") not in base
    rows = _rows(sweep)
    sweep.attach_baseline(rows, base)
    assert [r.ratio for r in rows] == [0.5, 0.9, None, 0.75, 0.8, None]


def test_table_sorted_by_ratio_and_summary(sweep: ModuleType, tmp_path: Path) -> None:
    rows = _rows(sweep)
    for r, b in zip(rows, (1000, 1000, 1000, 400, 2500, 100), strict=True):
        r.base_instructions, r.base_arena = b, 4000
    assert [(r.model, r.core) for r in sweep.sort_rows(rows)] == [
        ("b", "M7"),
        ("a", "M0+"),
        ("d", "M7"),
        ("c", "M7"),
        ("a", "M7"),
        ("e", "M0+"),
    ]
    s = sweep.summarize(rows)
    conv7 = next(c for c in s["classes"] if c["class"] == "conv" and c["core"] == "M7")
    assert conv7["rows"] == 3 and conv7["worst_ratio"] == 0.9
    assert conv7["median_ratio"] == pytest.approx(0.7)
    assert conv7["median_per_mac"] == pytest.approx(0.68)
    assert s["cores"]["M7"] == {"with_baseline": 4, "target": 0.67, "above_target": 3, "above_1": 0}
    assert s["cores"]["M0+"]["above_target"] == 0  # 0.8 is the M0+'s target, not above it
    text = sweep.format_table(rows)
    body = [ln.split()[0] for ln in text.splitlines() if ln.startswith(("a ", "b ", "c ", "d "))]
    assert body == ["b", "a", "d", "c", "a"]
    assert "M7: 4 rows with a baseline, 3 above the 0.67 target, 0 above 1.0" in text
    assert "problems: 2" in text and "d on M7 (stm32f746): NOT bit-exact: 3 bytes" in text
    assert "e on M0+ (samd21): refused: x" in text
    plain = sweep.format_table(_rows(sweep))  # no baseline: ours only, by instructions per MAC
    assert "baseline" not in plain.splitlines()[2]
    assert [ln.split()[0] for ln in plain.splitlines()[4:9]] == ["d", "a", "b", "c", "a"]


def test_field_bench_models_and_table(tmp_path: Path) -> None:
    """benchmarks/bench_field.py: its models are written the same every time, its table shows
    the baseline's figures and our ratios to them, and a failed case is named."""
    field = _load("bench_field")
    a, b = field.write_models(tmp_path / "a"), field.write_models(tmp_path / "b")
    assert {k: v.read_bytes() for k, v in a.items()} == {k: b[k].read_bytes() for k in b}
    r = field.Result("one case", "speech_cnn", "M7", "stm32f746", False, macs=10, arena=900,
                     arena_min=800, instructions=600, exact=True, base_instructions=1000,
                     base_arena=1600)  # fmt: skip
    bad = field.Result("bad", "x", "M4", "stm32f407", True, error="refused: why")
    text = field.table([r, bad])
    row = next(line for line in text.splitlines() if line.startswith("one case"))
    assert "1,600" in row and " 0.50 " in row and " 0.60 " in row and row.endswith("yes")
    assert "refused: why" in text
