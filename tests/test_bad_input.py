"""Bad models give one clear line naming the file, op and reason, exit code 2, and no output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MODELS, ROOT

CLI = [sys.executable, "-m", "tinycompile.cli"]


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize(
    "name, needle",
    [
        ("float_model", "op #0 CONV_2D: float32 activations"),
        ("unsupported_op", "op #1 EXP: operator EXP is not supported"),
    ],
)
def test_refused_models(name: str, needle: str, tmp_path: Path) -> None:
    model = MODELS / "bad" / f"{name}.tflite"
    out = tmp_path / "out"
    r = run_cli("build", str(model), "--board", "host", "-o", str(out))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(model) in lines[0] and needle in lines[0], lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


@pytest.mark.parametrize("cut", [0, 7, 100, 1000, 0.5])
def test_truncated_model(cut: float, tmp_path: Path) -> None:
    data = (ROOT / "examples" / "digits.tflite").read_bytes()
    bad = tmp_path / "trunc.tflite"
    bad.write_bytes(data[: int(cut * len(data)) if isinstance(cut, float) else cut])
    r = run_cli("plan", str(bad))
    assert r.returncode == 2
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and str(bad) in line, line
    assert "Traceback" not in r.stderr


def test_not_a_model(tmp_path: Path) -> None:
    bad = tmp_path / "notes.tflite"
    bad.write_text("hello, this is not a flatbuffer at all")
    r = run_cli("plan", str(bad))
    assert r.returncode == 2
    assert "not a TFLite flatbuffer" in r.stderr and str(bad) in r.stderr


def test_missing_file(tmp_path: Path) -> None:
    r = run_cli("plan", str(tmp_path / "nope.tflite"))
    assert r.returncode == 2 and "cannot read model" in r.stderr
