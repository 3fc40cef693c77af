"""Installing: where the data folders are found, and a built wheel that works on its own.

The wheel test builds the wheel from a copy of the source (nothing written into the checkout),
installs it with --no-deps into a fresh virtualenv that sees the running environment's packages
(numpy, jinja2, ... ) but not its tinycompile, and runs the installed `tinycompile` command from
a folder outside the checkout, with no PYTHONPATH: it can only use the wheel's code and data.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from tinycompile import paths

DATA = paths.DATA_FOLDERS
SOURCE = ("pyproject.toml", "setup.py", "README.md", "tinycompile", *DATA)
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.o", "*~")


def test_checkout_finds_its_data_folders() -> None:
    assert paths.REPO == ROOT
    assert paths.DATA_ROOT == ROOT
    for d in DATA:
        assert (ROOT / d).is_dir()
    assert paths.EXAMPLE_MODEL == ROOT / "examples" / "digits.tflite"
    assert paths.EXAMPLE_MODEL.is_file()
    assert (paths.BOARD_TEMPLATES_DIR / "linker.ld.j2").is_file()
    assert (paths.BOARDS_DIR / "stm32f746.toml").is_file()
    assert (paths.FIRMWARE_DIR / "include").is_dir()


def test_no_data_read_beside_the_package() -> None:
    """Only paths.py knows where the data folders are (a wheel has no checkout around it)."""
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "tinycompile").rglob("*.py"))
        if p.name != "paths.py"
        and ("__file__" in p.read_text() or "parent.parent" in p.read_text())
    ]
    assert not offenders, f"read data folders through tinycompile.paths: {offenders}"


def _data_files() -> set[str]:
    """Files under the data folders as the wheel must hold them (tinycompile/_data/...)."""
    out = set()
    for d in DATA:
        for f in (ROOT / d).rglob("*"):
            rel = f.relative_to(ROOT)
            if f.is_file() and not JUNK(str(f.parent), [f.name]) and "__pycache__" not in rel.parts:
                out.add(f"tinycompile/_data/{rel.as_posix()}")
    return out


def _run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.mark.qemu
def test_wheel_builds_firmware_from_anywhere(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=JUNK)
        else:
            shutil.copy2(ROOT / name, src / name)
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", src],
        tmp_path,
    )
    (wheel,) = (tmp_path / "dist").glob("tinycompile-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _data_files() - names
    assert not missing, f"the wheel lacks {sorted(missing)[:5]} ..."
    assert "tinycompile/paths.py" in names

    # A fresh virtualenv seeing this environment's packages through a .pth line (not
    # --system-site-packages: from inside a virtualenv that would mean the base interpreter's).
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp_path)
    vpy = venv / "bin" / "python"
    purelib = Path(
        _run(
            [vpy, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path
        ).strip()
    )
    parents = dict.fromkeys(
        [*site.getsitepackages(), sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    )
    (purelib / "_tinycompile_test_parent.pth").write_text("".join(f"{p}\n" for p in parents))
    _run([vpy, "-m", "pip", "install", "-q", "--no-deps", wheel], tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy2(ROOT / "examples" / "digits.tflite", work / "model.tflite")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("TINYCOMPILE_BOARDS_DIR", None)

    where = _run(
        [
            vpy,
            "-c",
            "import tinycompile.paths as p; print(p.__file__); print(p.DATA_ROOT); print(p.REPO)",
        ],
        work,
        env,
    )
    module, data_root, repo = where.splitlines()
    assert Path(module).is_relative_to(venv), module
    assert Path(data_root) == Path(module).parent / "_data"
    assert repo == "None"

    tc = venv / "bin" / "tinycompile"
    out = _run([tc, "build", "--board", "stm32f746", "model.tflite", "-o", "out"], work, env)
    assert "firmware.bin" in out
    fw = work / "out" / "build" / "stm32f746-board"
    for f in ("firmware.elf", "firmware.bin", "firmware.hex"):
        assert (fw / f).is_file() and (fw / f).stat().st_size > 0, f
    # the project's runtime/ is a copy of the wheel's firmware/, which is the checkout's
    runtime = work / "out" / "runtime"
    copied = {p.relative_to(runtime).as_posix() for p in runtime.rglob("*.[chS]")}
    firmware = ROOT / "firmware"
    assert copied == {p.relative_to(firmware).as_posix() for p in firmware.rglob("*.[chS]")}

    listed = _run([tc, "boards"], work, env)
    for board in sorted(p.stem for p in (ROOT / "boards").glob("*.toml")):
        assert board in listed, board

    # the bundled example is the default model
    _run([tc, "build", "--board", "host", "-o", "out-host"], work, env)
    assert any((work / "out-host").rglob("tc_host"))
