"""Hostile and broken input: the compiler never crashes, hangs, or emits unsafe code.

Bounded runs of the fuzz harness (tests/fuzz/fuzz_models.py; long runs: docs/fuzzing.md), the
saved inputs of every bug it found (tests/fuzz/regressions/), and the real CLI on a few mutants:
exit code 2 with one line on stderr naming the file, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

if str(ROOT) not in sys.path:  # the harness is the package tests.fuzz (plain `pytest` runs too)
    sys.path.insert(0, str(ROOT))
from tests.fuzz import fuzz_models as fz  # noqa: E402

REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions"
# Fixed seeds and case counts keep CI deterministic; the time caps only guard a slow machine.
MODEL_CASES, MODEL_SECONDS = 4000, 90.0
ONNX_CASES, ONNX_SECONDS = 2000, 60.0
BOARD_CASES, BOARD_SECONDS = 1000, 20.0


def _report(st: fz.Stats) -> str:
    return st.summary() + "\nreplay one with: python -m tests.fuzz.fuzz_models --replay FILE"


def test_corpus_is_small_and_valid() -> None:
    """The seed corpus: small, and every seed model compiles (so mutants start deep)."""
    files = [p for p in (fz.CORPUS).rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 200 * 1024
    models, onnx_models, boards = fz.corpus_models(), fz.corpus_onnx(), fz.corpus_boards()
    assert len(models) >= 5 and len(onnx_models) >= 5 and len(boards) >= 3
    results = fz.replay_cases(models + onnx_models + boards, build=False)
    bad = [(p.name, r) for p, r in results if r["status"] != "ok"]
    # seeds that are refused on purpose are named so
    assert all(name.startswith("refused_") for name, _ in bad), bad


def test_fuzz_models(tmp_path: Path) -> None:
    st = fz.run_fuzz(
        MODEL_SECONDS,
        seed=1,
        target="models",
        max_cases=MODEL_CASES,
        build_rate=0.002,
        out_dir=tmp_path,
    )
    assert st.cases >= 500, st.summary()  # the harness really ran
    assert st.ok > 50 and st.rejected > 300, st.summary()  # both outcomes are exercised
    assert not st.failures, _report(st)


def test_fuzz_onnx(tmp_path: Path) -> None:
    """ONNX mutants (wire-level, byte-level and through the onnx API): compiled or refused."""
    st = fz.run_fuzz(
        ONNX_SECONDS,
        seed=1,
        target="onnx",
        max_cases=ONNX_CASES,
        build_rate=0.002,
        out_dir=tmp_path,
    )
    assert st.cases >= 300, st.summary()
    assert st.ok > 50 and st.rejected > 300, st.summary()
    assert not st.failures, _report(st)


def test_fuzz_boards(tmp_path: Path) -> None:
    st = fz.run_fuzz(
        BOARD_SECONDS, seed=1, target="boards", max_cases=BOARD_CASES, out_dir=tmp_path
    )
    assert st.cases >= 200, st.summary()
    assert st.ok > 10 and st.rejected > 100, st.summary()
    assert not st.failures, _report(st)


def _regressions() -> list[Path]:
    return sorted(p for p in REGRESSIONS.rglob("*") if p.suffix in (".tflite", ".onnx", ".toml"))


def test_regressions() -> None:
    """Every input that once broke the compiler: now compiled (and its C built and run with
    sanitizers) or refused with one clear line."""
    results = fz.replay_cases(_regressions(), build=True)
    assert len(results) >= 5
    fails = [
        f"{p.relative_to(REGRESSIONS)}: {r['kind']}: {r.get('detail', '')[:400]}"
        for p, r in results
        if r["status"] == "fail"
    ]
    assert not fails, "\n".join(fails)


def test_the_harness_catches_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness itself: a crash, a hang, a stray exception and a bad message are failures."""
    case = tmp_path / "m.tflite"
    case.write_bytes((ROOT / "examples" / "digits.tflite").read_bytes())
    w = fz.Worker(1024, tmp_path / "w.log")
    try:
        assert w.run({"target": "models", "path": str(case)}, 60)["status"] == "ok"
        res = w.run({"target": "models", "path": 12}, 30)  # a TypeError in the pipeline
        assert res["status"] == "fail" and res["kind"] == "TypeError", res
        w.stop()
        w.start()
        w.proc.kill()  # type: ignore[union-attr]
        res = w.run({"target": "models", "path": str(case)}, 30)
        assert res["status"] == "fail" and "died" in res["kind"], res
        w.start()
        os.kill(w.proc.pid, 19)  # SIGSTOP: the worker hangs  # type: ignore[union-attr]
        res = w.run({"target": "models", "path": str(case)}, 2)
        assert res["status"] == "fail" and res["kind"] == "hang", res
    finally:
        w.stop()

    class Boom(Exception):
        pass

    def explode(*a: object, **k: object) -> None:
        raise Boom("renderer bug")

    import tinycompile.codegen

    monkeypatch.setattr(tinycompile.codegen, "render_model", explode)
    res = fz.run_model_case(str(case))
    assert res["status"] == "fail" and res["kind"] == "Boom", res
    from tinycompile.errors import CompileError

    assert fz._check_message(CompileError("a\nb", source=str(case)), str(case))
    assert fz._check_message(CompileError("no file named"), str(case))
    assert fz._check_message(CompileError("fine", source=str(case)), str(case)) is None


def test_certainly_invalid_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """No seed is certainly invalid; a zero point outside its type, or an initializer whose
    dims exceed its data, is; and a model compiled although certainly invalid is a failure."""
    from tests.fuzz.verdicts import certainly_invalid

    for p in fz.corpus_models() + fz.corpus_onnx():
        assert certainly_invalid(str(p)) is None, p
    zp = REGRESSIONS / "onnx_zero_point_outside_uint8.onnx"
    assert "outside uint8" in (certainly_invalid(str(zp)) or "")
    dims = REGRESSIONS / "onnx_init_dims_beyond_data.onnx"
    assert "dims [1099511627776]" in (certainly_invalid(str(dims)) or "")
    tfl = REGRESSIONS / "zero_point_out_of_int8.tflite"
    assert "zero point" in (certainly_invalid(str(tfl)) or "")
    import tinycompile.frontend.onnx_check as oc

    monkeypatch.setattr(oc, "check_model", lambda model: None)  # the reader's checks gone
    res = fz.run_model_case(str(zp))
    assert res["status"] == "fail" and res["kind"] == "accepted invalid model", res


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TINYCOMPILE_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "tinycompile.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )


def _assert_clean_refusal(r: subprocess.CompletedProcess, path: Path) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert len(lines) == 1 and str(path) in lines[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize("suffix", [".tflite", ".onnx"])
def test_cli_on_mutants(tmp_path: Path, suffix: str) -> None:
    """The real CLI on refused mutants: exit 2, one stderr line naming the file, no output."""
    if suffix == ".onnx":
        gen: fz.ModelCases | fz.OnnxCases = fz.OnnxCases(fz.corpus_onnx(), seed=7)
    else:
        gen = fz.ModelCases(fz.corpus_models(), seed=7)
    seen = 0
    for i in range(400):
        data, desc, _ = gen.case(i)
        path = tmp_path / f"mutant{i}{suffix}"
        path.write_bytes(data)
        res = fz.run_model_case(str(path))
        if res["status"] != "rejected":
            path.unlink()
            continue
        out = tmp_path / f"out{i}"
        r = _cli("build", str(path), "--board", "host", "-o", str(out))
        _assert_clean_refusal(r, path)
        assert not out.exists()
        seen += 1
        if seen == 8:
            break
    assert seen == 8
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("mutant")) == []


def test_cli_on_board_mutants(tmp_path: Path) -> None:
    gen = fz.BoardCases(fz.corpus_boards(), seed=7)
    seen = 0
    for i in range(400):
        data, desc, stem = gen.case(i)
        d = tmp_path / f"c{i}"
        d.mkdir()
        path = d / f"{stem}.toml"
        path.write_bytes(data)
        if fz.run_board_case(str(path))["status"] != "rejected":
            continue
        r = _cli("plan", str(ROOT / "examples" / "digits.tflite"), "--board", str(path))
        _assert_clean_refusal(r, path)
        seen += 1
        if seen == 4:
            break
    assert seen == 4
