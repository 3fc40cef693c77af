"""Memory traded for speed, only when asked (`--speed-sram`, ``planner.policy`` step 4): the
planner may give layers the column buffers it refused at the lean arena, within the bytes
allowed and the board's SRAM, and says what it bought. The kernels' in-place-with-column and
tail-column paths are checked bit for bit in tests/test_kernels_fast_conv.py; what each purchase
saves in instructions is `make bench`'s (benchmarks/bench_emulator.py --speed-sram)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.ops import DEFAULT_CHOICE
from tinycompile.pipeline import compile_graph as make_plan
from tinycompile.pipeline import prepare_graph

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
RESNET = MODELS / "ic_resnet8.tflite"
WHOLE = [MODELS / f"{m}.tflite" for m in ("kws_dscnn", "vww_mobilenet", "ic_resnet8")]


@pytest.fixture(scope="module")
def resnet() -> tuple:
    g = load_model(RESNET)
    return g, make_plan(copy.deepcopy(g)), make_plan(copy.deepcopy(g), speed=None)


@pytest.mark.parametrize("model", WHOLE, ids=lambda m: m.stem)
def test_nothing_is_bought_by_default(model: Path) -> None:
    p = api.plan(model, board="stm32f746")
    assert p.lean_arena is None and p.speed_ops == ()


def test_purchase_stays_within_the_bytes_allowed(resnet: tuple) -> None:
    g, lean, free = resnet
    # ResNet-8's 3x3 convolutions at the peak run without their column buffer in the lean plan
    assert free.speed_ops and free.lean_arena == lean.arena_bytes < free.arena_bytes
    for i in free.speed_ops:
        assert free.choices.get(i, DEFAULT_CHOICE).use_scratch
        assert not lean.choices.get(i, DEFAULT_CHOICE).use_scratch
    bought = free.arena_bytes - lean.arena_bytes
    for extra in (bought - 1, bought // 2, 1):
        p = make_plan(copy.deepcopy(g), speed=extra)
        assert lean.arena_bytes <= p.arena_bytes <= lean.arena_bytes + extra, extra
        assert (p.lean_arena is None) == (p.speed_ops == ())
    assert make_plan(copy.deepcopy(g), speed=bought).arena_bytes == free.arena_bytes


def test_board_sram_caps_the_purchase(resnet: tuple) -> None:
    """Bytes allowed beyond what the board has are not spent: a plan that fits still fits."""
    g, lean, free = resnet
    budget = lean.sram_bytes + (free.arena_bytes - lean.arena_bytes) // 2
    p = make_plan(copy.deepcopy(g), speed=None, budget=budget, stream="auto")
    assert lean.sram_bytes <= p.sram_bytes <= budget
    assert streamed(p) == []  # the lean plan fits: no streaming either


def streamed(p) -> list[str]:
    return [op.kind for op in p.graph.ops if op.kind == "STREAM"]


def test_stand_in_is_not_bought() -> None:
    """DS-CNN's first layer (10x4 windows over one channel, out of place) copies its windows
    into its own output's tail when refused a column: buying one would gain nothing."""
    g = load_model(MODELS / "kws_dscnn.tflite")
    first = prepare_graph(copy.deepcopy(g))[0]
    assert first.data.scratch and first.data.scratch_stand_in
    assert make_plan(copy.deepcopy(g), speed=None).speed_ops == ()


def test_bought_plan_is_bit_exact_on_the_host(resnet: tuple) -> None:
    r = api.compare(RESNET, board="host", n=3, layers=True, speed=None)
    assert r.ok, str(r)


def test_cli_says_what_was_bought(resnet: tuple) -> None:
    _, lean, free = resnet
    cli = [sys.executable, "-m", "tinycompile.cli", "plan", str(RESNET), "--speed-sram"]
    r = subprocess.run([*cli, "max", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["speed_ops"] == list(free.speed_ops) and d["lean_arena_bytes"] == lean.arena_bytes
    assert d["peak_arena_bytes"] == free.arena_bytes
    r = subprocess.run([*cli, "2k"], capture_output=True, text=True, timeout=300)
    line = next(ln for ln in r.stdout.splitlines() if "bought for speed" in ln)
    ops = " ".join(f"#{i}" for i in free.speed_ops)
    assert f"{free.arena_bytes - lean.arena_bytes:,} B" in line and ops in line, line
    r = subprocess.run([*cli, "lots"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--speed-sram takes a number of bytes" in r.stderr
    assert "Traceback" not in r.stderr
