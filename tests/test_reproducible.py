"""Builds are reproducible and atomic.

Reproducible: the same model gives byte-identical generated files wherever and in whichever
process (hash seed) it is generated, and the host binary built from them is byte-identical too.
Atomic: a generation that fails halfway leaves no output folder, no temporary leftovers, and an
earlier output folder untouched; folders that are not generated projects are never replaced.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MODELS, ROOT

import tinycompile.codegen as codegen
from tinycompile import api
from tinycompile.build import build_host
from tinycompile.errors import CompileError

DIGITS = ROOT / "examples" / "digits.tflite"
BRANCHY = MODELS / "ic_resnet8.tflite"  # residual branches: the schedule is a real choice


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def assert_same_tree(a: Path, b: Path) -> None:
    ta, tb = tree(a), tree(b)
    assert sorted(ta) == sorted(tb)
    differ = [k for k in ta if ta[k] != tb[k]]
    assert not differ, f"files differ: {differ}"


@pytest.mark.parametrize(
    "model", [DIGITS, BRANCHY, MODELS / "kws_dscnn.tflite"], ids=lambda p: p.stem
)
def test_two_generations_are_byte_identical(model: Path, tmp_path: Path) -> None:
    a = api.generate(model, tmp_path / "a")
    b = api.generate(api.plan(model), tmp_path / "elsewhere" / "b")
    assert_same_tree(a, b)
    assert len(tree(a)) > 10


GEN_SCRIPT = """
import sys
from tinycompile import api
api.generate(sys.argv[1], sys.argv[2])
"""


def test_generation_is_independent_of_process_and_hash_seed(tmp_path: Path) -> None:
    outs = []
    for seed in ("1", "4242"):
        cwd = tmp_path / f"cwd{seed}"
        cwd.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = tmp_path / f"out{seed}"
        r = subprocess.run(
            [sys.executable, "-c", GEN_SCRIPT, str(BRANCHY), str(out)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs.append(out)
    assert_same_tree(*outs)


def test_host_binary_is_byte_identical(tmp_path: Path) -> None:
    """Two projects of the same model in different folders build to the same executable."""
    exes = []
    for name in ("one", "two/deeper"):
        proj = api.generate(DIGITS, tmp_path / name / "proj")
        exes.append(build_host(proj).read_bytes())
    assert exes[0] == exes[1]


# ----------------------------------------------------------------------------- atomicity


def leftovers(parent: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name not in keep)


def _fail_after_model_files(src: Path, dst: Path, **kw: object) -> None:
    """Stands in for the runtime copy: copies a little of it, then the disk is 'full'."""
    dst.mkdir(parents=True)
    shutil.copy(next(src.rglob("*.h")), dst)
    raise OSError(28, "No space left on device")


class Interrupted(BaseException):
    pass


def _interrupt_second_write(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path.write_text
    calls = {"n": 0}

    def write_text(self: Path, *a: object, **kw: object) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise Interrupted  # like KeyboardInterrupt, a BaseException
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "write_text", write_text)


def _render_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(p: object) -> dict[str, str]:
        raise ValueError("renderer bug")

    monkeypatch.setattr(codegen, "render_model", boom)


@pytest.mark.parametrize("how", ["copy_runtime", "interrupt_write", "render"])
def test_failed_generation_leaves_nothing(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = api.plan(DIGITS)
    out = tmp_path / "out"
    if how == "copy_runtime":
        monkeypatch.setattr(codegen.shutil, "copytree", _fail_after_model_files)
    elif how == "interrupt_write":
        _interrupt_second_write(monkeypatch)
    else:
        _render_fails(monkeypatch)
    with pytest.raises((CompileError, Interrupted, ValueError)):
        api.generate(p, out)
    assert not out.exists()
    assert leftovers(tmp_path, set()) == []


def test_failed_generation_keeps_the_previous_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = api.plan(DIGITS)
    out = api.generate(p, tmp_path / "out")
    before = tree(out)
    monkeypatch.setattr(codegen.shutil, "copytree", _fail_after_model_files)
    with pytest.raises(CompileError):
        api.generate(p, out)
    assert tree(out) == before
    assert leftovers(tmp_path, {"out"}) == []


def test_failed_swap_restores_the_previous_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If moving the new folder into place fails, the old one is put back."""
    p = api.plan(DIGITS)
    out = api.generate(p, tmp_path / "out")
    before = tree(out)
    real = os.replace
    calls = {"n": 0}

    def replace(src: object, dst: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the old folder has been moved aside; the new one fails to move in
            raise OSError(5, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(CompileError):
        api.generate(p, out)
    monkeypatch.undo()
    assert tree(out) == before
    assert leftovers(tmp_path, {"out"}) == []


def test_regeneration_replaces_a_project(tmp_path: Path) -> None:
    out = api.generate(DIGITS, tmp_path / "out")
    (out / "build").mkdir()
    (out / "build" / "stale.o").write_bytes(b"old")
    api.generate(DIGITS, out)
    assert not (out / "build").exists()
    assert leftovers(tmp_path, {"out"}) == []


def test_never_replaces_a_folder_that_is_not_a_project(tmp_path: Path) -> None:
    """-o pointing at the user's own folder (or a file) is refused, and nothing is touched."""
    mine = tmp_path / "my_firmware"
    mine.mkdir()
    (mine / "main.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(CompileError, match="not a tinycompile project"):
        api.generate(DIGITS, mine)
    assert tree(mine) == {"main.c": b"int main(void) { return 0; }\n"}
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    with pytest.raises(CompileError, match="not a folder"):
        api.generate(DIGITS, notes)
    assert notes.read_text() == "keep me"
    assert leftovers(tmp_path, {"my_firmware", "notes.txt"}) == []
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (api.generate(DIGITS, empty) / "model" / "tc_model.h").is_file()


def test_never_replaces_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = api.generate(DIGITS, tmp_path / "proj")
    (proj / "notes.txt").write_text("mine")
    monkeypatch.chdir(proj)
    with pytest.raises(CompileError, match="current folder"):
        api.generate(DIGITS, ".")
    with pytest.raises(CompileError, match="current folder"):
        api.generate(DIGITS, tmp_path)
    assert (proj / "notes.txt").read_text() == "mine"


def test_cli_refuses_unwritable_output(tmp_path: Path) -> None:
    """An output folder that cannot be created is one line and exit code 2, not a traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tinycompile.cli",
            "build",
            str(DIGITS),
            "--board",
            "host",
            "-o",
            str(blocker / "sub" / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
