"""Every user mistake the command line can meet ends in exit code 2, exactly one line on
stderr, and nothing left behind (no output folder, no half-written file); with --json the
error is also a JSON object on stdout. Plus `check`, --version, inputs given in other forms
(float, unbatched, .npz by name), the boards list and report.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from modelgen import mistakes

CLI = [sys.executable, "-m", "tinycompile.cli"]
DIGITS = str(ROOT / "examples" / "digits.tflite")


def cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=env
    )


def one_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tinycompile: ") and "Traceback" not in r.stderr
    assert "internal error" not in lines[0]
    return lines[0]


def _model(tmp: Path, name: str) -> str:
    path = tmp / f"{name}.tflite"
    path.write_bytes(getattr(mistakes, name)())
    return str(path)


def _npy(tmp: Path, name: str, x: np.ndarray) -> str:
    np.save(tmp / name, x)
    return str(tmp / name)


def _read_only_target(tmp: Path) -> str:
    if os.geteuid() == 0:  # root writes anywhere chmod allows nothing: sysfs refuses it
        return "/sys/tinycompile-out.npy"
    ro = tmp / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    return str(ro / "y.npy")


# (id, args builder from the work folder, what the line must say)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    (
        "inputs_wrong_rank",
        lambda t: ["run", DIGITS, "--board", "host", "--inputs",
                   _npy(t, "x.npy", np.zeros((3, 8, 8), np.int8))],
        "input 'x' wants shape [8, 8, 1]",
    ),
    ("n_zero", lambda t: ["run", DIGITS, "--board", "host", "-n", "0"], "argument -n"),
    ("n_negative", lambda t: ["run", DIGITS, "--board", "host", "-n", "-3"], "argument -n"),
    (
        "outputs_missing_folder",
        lambda t: ["run", DIGITS, "--board", "host", "-n", "1",
                   "--outputs", str(t / "nodir" / "x.npy")],
        "does not exist",
    ),
    (
        "outputs_read_only",
        lambda t: ["run", DIGITS, "--board", "host", "-n", "1",
                   "--outputs", _read_only_target(t)],
        "cannot write",
    ),
    (
        "outputs_not_npy",
        lambda t: ["run", DIGITS, "--board", "host", "-n", "1", "--outputs", str(t / "x.txt")],
        "name a .npy or .npz file",
    ),
    (
        "host_with_emulator",
        lambda t: ["run", DIGITS, "--board", "host", "--emulator", "-n", "1"],
        "does not apply to --board host",
    ),
    (
        "build_host_with_emulator",
        lambda t: ["build", DIGITS, "--board", "host", "--emulator", "-o", str(t / "out")],
        "does not apply to --board host",
    ),
    ("zero_scale", lambda t: ["plan", _model(t, "zero_scale")], "op #0 RELU: tensor 1 'y' has"
     " quantization scale 0"),
    ("lstm", lambda t: ["build", _model(t, "lstm"), "--board", "host", "-o", str(t / "out")],
     "op #1 UNIDIRECTIONAL_SEQUENCE_LSTM: expects 24 inputs and 1 output, has 20"),
    ("svdf", lambda t: ["plan", _model(t, "svdf")], "op #0 SVDF: the bias is absent"),
    ("custom", lambda t: ["plan", _model(t, "custom")],
     "op #0 CUSTOM(MyPostProcess): operator CUSTOM(MyPostProcess) is not supported"),
    ("first_of_many", lambda t: ["plan", _model(t, "many_problems")],
     "op #1 EXP: operator EXP is not supported: TFLM runs EXP on float32 only (exp.cc), so there"
     " is no int8 reference to be bit-exact with (and 2 more problems"),
    ("unknown_board", lambda t: ["run", DIGITS, "--board", "nosuchboard"], "unknown board"),
    ("unknown_command", lambda t: ["frobnicate"], "invalid choice"),
    (
        "inputs_and_n",
        lambda t: ["run", DIGITS, "--board", "host", "-n", "3", "--inputs",
                   _npy(t, "x.npy", np.zeros((2, 8, 8, 1), np.int8))],
        "does not go with --inputs",
    ),
    (
        "inputs_out_of_int8",
        lambda t: ["run", DIGITS, "--board", "host", "--inputs",
                   _npy(t, "x.npy", np.full((2, 8, 8, 1), 300, np.int32))],
        "wants int8 data",
    ),
    (
        "inputs_npz_wrong_name",
        lambda t: ["run", _model(t, "two_in_two_out"), "--board", "host", "--inputs",
                   _npz(t, a=np.zeros((1, 4), np.int8), c=np.zeros((1, 4), np.int8))],
        "missing ['b'], unknown ['c']",
    ),
    (
        "outputs_npy_for_two",
        lambda t: ["run", _model(t, "two_in_two_out"), "--board", "host", "-n", "1",
                   "--outputs", str(t / "y.npy")],
        "has 2 outputs; name a .npz file",
    ),
]  # fmt: skip


def _npz(tmp: Path, **arrays: np.ndarray) -> str:
    np.savez(tmp / "x.npz", **arrays)
    return str(tmp / "x.npz")


@pytest.mark.parametrize("name, args, needle", CASES, ids=[c[0] for c in CASES])
def test_mistake_is_one_line_exit_2(name: str, args, needle: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    argv = args(work)
    before = sorted(p.name for p in work.rglob("*"))
    r = cli(*argv, cwd=work)
    line = one_line(r)
    assert needle in line, line
    assert r.stdout == "", r.stdout
    # nothing left behind: no output folder, no outputs, no temporary files
    assert sorted(p.name for p in work.rglob("*")) == before
    # the same mistake under --json: the error as a JSON object on stdout too
    if argv[0] in ("run", "plan", "build"):
        j = cli(*argv, "--json", cwd=work)
        assert one_line(j) == line
        assert json.loads(j.stdout) == {"error": line.removeprefix("tinycompile: "), "exit_code": 2}


def test_reference_extra_missing(tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "tflite_micro"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "raise ModuleNotFoundError('No module named tflite_micro', name='tflite_micro')\n"
    )
    env = {"PYTHONPATH": f"{shim.parent}{os.pathsep}{ROOT}"}
    r = cli("run", DIGITS, "--board", "host", "-n", "1", cwd=tmp_path, env=env)
    line = one_line(r)
    assert "pip install 'tinycompile[reference]'" in line, line


def test_broken_pipe(tmp_path: Path) -> None:
    """`tinycompile plan ... | head -1`: the reader is gone before the table is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run(
            [*CLI, "plan", str(ROOT / "tests" / "models" / "vww_mobilenet.tflite")],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(write_end)
    line = one_line(r)
    assert "broken pipe" in line
    assert not any(tmp_path.iterdir())


def test_check_lists_every_problem(tmp_path: Path) -> None:
    model = _model(tmp_path, "many_problems")
    r = cli("check", model)
    assert r.returncode == 2
    assert r.stdout.splitlines() == [
        f"{model}: op #1 EXP: operator EXP is not supported: TFLM runs EXP on float32 only"
        " (exp.cc), so there is no int8 reference to be bit-exact with",
        f"{model}: op #2 SVDF: the bias is absent; TFLM's int8 SVDF needs it",
        f"{model}: op #3 SOFTMAX: int8 output must have scale 1/256 and zero point -128",
    ]
    assert r.stderr.splitlines() == [f"tinycompile: {model}: 3 problems"]
    j = cli("check", model, "--json")
    d = json.loads(j.stdout)
    assert j.returncode == 2 and not d["ok"]
    assert [(p["op_index"], p["op"]) for p in d["problems"]] == [
        (1, "EXP"),
        (2, "SVDF"),
        (3, "SOFTMAX"),
    ]
    ok = cli("check", DIGITS)
    assert ok.returncode == 0 and "no problems" in ok.stdout and ok.stderr == ""


def test_check_bad_file_is_one_problem(tmp_path: Path) -> None:
    bad = tmp_path / "notes.tflite"
    bad.write_text("not a model")
    r = cli("check", str(bad))
    assert r.returncode == 2 and "not a TFLite flatbuffer" in r.stdout
    assert len(r.stderr.splitlines()) == 1


def test_version() -> None:
    from tinycompile import __version__

    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"tinycompile {__version__}"


def test_help_documents_exit_codes() -> None:
    r = cli("--help")
    assert r.returncode == 0
    for code in ("0 ", "1 ", "2 ", "70 ", "130 "):
        assert f"\n  {code}" in r.stdout, code


def test_plan_lists_inputs_and_outputs() -> None:
    d = json.loads(cli("plan", DIGITS, "--json").stdout)
    assert d["inputs"] == [
        {
            "name": "x",
            "tensor": 0,
            "shape": [1, 8, 8, 1],
            "dtype": "int8",
            "scale": pytest.approx(1 / 255),
            "zero_point": -128,
        }
    ]
    assert d["outputs"][0]["shape"] == [1, 10] and d["outputs"][0]["scale"] == 1 / 256
    text = cli("plan", DIGITS).stdout
    assert "input  'x'  1x8x8x1 int8  scale 0.00392156886 zero point -128" in text
    assert "output 'Identity'  1x10 int8" in text


def test_plan_board_estimate_is_labelled() -> None:
    r = cli("plan", DIGITS, "--board", "stm32f746")
    assert r.returncode == 0
    assert "FITS (estimate)" in r.stdout and "KB above" in r.stdout
    h = cli("plan", DIGITS, "--board", "host")
    assert h.returncode == 0 and "no SRAM or flash budget" in h.stdout
    assert "4,611" not in h.stdout
    d = json.loads(cli("plan", DIGITS, "--board", "host", "--json").stdout)
    assert d["sram_total_bytes"] is None and d["fits"]


def test_boards_header_and_host() -> None:
    lines = cli("boards").stdout.splitlines()
    assert lines[0].split()[:4] == ["board", "core", "fpu", "clock"]
    assert lines[1].startswith("host ")
    names = [b["name"] for b in json.loads(cli("boards", "--json").stdout)]
    assert "host" in names and "stm32f746" in names


def test_run_float_unbatched_and_npz_by_name(tmp_path: Path) -> None:
    from tinycompile.run.reference import run_tflm

    x = np.load(ROOT / "examples" / "digits_inputs.npy")
    real = ((x[:3].astype(np.float64) + 128) / 255).astype(np.float32)  # the same values
    r = cli(
        "run", DIGITS, "--board", "host", "--inputs", _npy(tmp_path, "f.npy", real),
        "--outputs", str(tmp_path / "y.npy"), "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["bit_exact"] and d["samples"] == 3
    assert d["notes"] == [
        "input 'x': float32 data quantized to int8 with scale 0.00392156886 and zero point -128"
        " (rounded half away from zero, as the model file does)"
    ]
    y = np.load(tmp_path / "y.npy")
    assert np.array_equal(y, run_tflm(DIGITS, [x[:3]]).outputs[0])
    one = cli("run", DIGITS, "--board", "host", "--inputs", _npy(tmp_path, "s.npy", x[0]))
    assert one.returncode == 0 and "1 inputs" in one.stdout, one.stderr

    model = _model(tmp_path, "two_in_two_out")
    a = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
    b = np.ones((4, 4), np.int8)
    np.savez(tmp_path / "ab.npz", b=b, a=a)  # by name, in another order
    out = tmp_path / "o.npz"
    r = cli("run", model, "--board", "host", "--inputs", str(tmp_path / "ab.npz"),
            "--outputs", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    with np.load(out) as z:
        assert sorted(z.files) == ["relu", "sum"]
        ref = run_tflm(model, [a, b]).outputs
        assert np.array_equal(z["sum"], ref[0]) and np.array_equal(z["relu"], ref[1])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_build_host_writes_report(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    r = cli("build", DIGITS, "--board", "host", "-o", str(out))
    assert r.returncode == 0, r.stderr
    d = json.loads((out / "report.json").read_text())
    assert d["model"] == "digits.tflite" and d["board"] == "host" and d["size"] is None
    assert d["plan"]["inputs"][0]["name"] == "x" and len(d["plan"]["layers"]) == 5
    # Issue 23: the tool's version and the model file's SHA-256 (computed here, independently).
    import hashlib

    import tinycompile

    assert d["tool"] == f"tinycompile {tinycompile.__version__}"
    assert d["model_sha256"] == hashlib.sha256(Path(DIGITS).read_bytes()).hexdigest()


def test_board_build_report_is_real_and_deterministic(tmp_path: Path) -> None:
    """report.json beside the firmware: the linked sizes and the plan, identical wherever built."""
    reports = []
    for name in ("a", "b"):
        r = cli("build", DIGITS, "--board", "stm32f746", "-o", str(tmp_path / name))
        assert r.returncode == 0, r.stderr
        reports.append((tmp_path / name / "report.json").read_bytes())
    assert reports[0] == reports[1]
    d = json.loads(reports[0])
    assert d["board"] == "stm32f746" and d["options"] == {"variant": "board"}
    assert d["size"]["flash_used"] > d["size"]["weights"] > 0 and d["size"]["arena"] > 0
    assert d["plan"]["peak_arena_bytes"] == d["size"]["arena"]
    assert d["plan_estimate"]["estimate"] is True
    assert str(tmp_path) not in reports[0].decode() and str(ROOT) not in reports[0].decode()
