"""The command line: plan tables and JSON, host build and run, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from conftest import MODELS, ROOT

CLI = [sys.executable, "-m", "tinycompile.cli"]


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_plan_json_matches_table() -> None:
    model = str(MODELS / "ic_resnet8.tflite")
    j = cli("plan", model, "--json")
    assert j.returncode == 0, j.stderr
    d = json.loads(j.stdout)
    for key in ("peak_arena_bytes", "peak_live_bytes", "weight_flash_bytes", "layers"):
        assert key in d
    assert d["peak_arena_bytes"] >= d["peak_live_bytes"] > 0
    # the peak is the largest per-layer live figure, and it is marked on those layers
    lives = [la["live_bytes"] for la in d["layers"]]
    assert max(lives) == d["peak_live_bytes"]
    assert [la["peak"] for la in d["layers"]] == [v == max(lives) for v in lives]
    assert d["weight_flash_bytes"] >= sum(la["weight_bytes"] for la in d["layers"])
    # weights: at least every int8 weight of the model is in flash
    from tinycompile.frontend import load_model

    g = load_model(model)
    w8 = sum(t.nbytes for t in g.tensors if t.is_const and t.dtype == "int8")
    assert d["weight_flash_bytes"] >= w8
    t = cli("plan", model)
    assert t.returncode == 0
    assert f"{d['peak_arena_bytes']:,} B" in t.stdout
    assert "<- peak" in t.stdout
    assert len([ln for ln in t.stdout.splitlines() if "ADD" in ln]) == 3


def test_run_host_writes_outputs(tmp_path: Path) -> None:
    model = ROOT / "examples" / "digits.tflite"
    x = np.load(ROOT / "examples" / "digits_inputs.npy")
    np.save(tmp_path / "x.npy", x)
    r = cli(
        "run",
        str(model),
        "--board",
        "host",
        "--inputs",
        str(tmp_path / "x.npy"),
        "--outputs",
        str(tmp_path / "y.npy"),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["mismatches"] == 0 and d["max_abs_diff"] == 0 and d["samples"] == len(x)
    y = np.load(tmp_path / "y.npy")
    assert y.shape[0] == len(x) and y.dtype == np.int8
    from tinycompile.run.reference import run_tflm

    assert np.array_equal(y, run_tflm(model, [x]).outputs[0])


def test_run_reports_mismatch_with_exit_1(tmp_path: Path, monkeypatch) -> None:
    """A wrong kernel result must be caught: corrupt one output byte in the runner's results."""
    from tinycompile import api
    from tinycompile.run import host

    real = host.unpack_outputs

    def corrupt(*a, **k):
        r = real(*a, **k)
        r.outputs[0].reshape(-1)[3] ^= 1
        return r

    monkeypatch.setattr(host, "unpack_outputs", corrupt)
    rep = api.compare(ROOT / "examples" / "digits.tflite", n=4, layers=False)
    assert not rep.ok and rep.output_mismatches == 1 and rep.max_abs_diff == 1


def test_build_host(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    r = cli("build", str(ROOT / "examples" / "digits.tflite"), "--board", "host", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "model" / "tc_model.c").is_file() and (out / "build" / "tc_host").is_file()
    text = (out / "model" / "tc_model.c").read_text()
    assert "tc_invoke" in text and "malloc" not in text
