"""`tinycompile export` (issue 23): the library folders built with real tools, as a user's
project would build them.

- CMake, cross: the export for a Cortex-M4 board taken in by `add_subdirectory()` of a C++
  application, configured and built with arm-none-eabi-gcc/g++ at -O0 and -O2 (warnings as
  errors), linked; the arena put in a section of the application's choosing by
  `<PREFIX>_ARENA_ATTR` and found there in the linker map.
- CMake, host: the same application built with the host compiler runs the model on samples, and
  its outputs equal `tinycompile run --board host`'s (which checks them against TFLM).
- Two models, different prefixes (one with the caller's arena), both headers in one C++ file,
  linked into one host program: both give `run`'s outputs.
- Arduino: the example sketch compiled as C++ with arm-none-eabi-g++ for Cortex-M0+ against the
  library's sources, and linked (tests/fixtures/export/Arduino.h stands in for the core).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS, ROOT

from tinycompile import api
from tinycompile.cli import main
from tinycompile.export import export_library

FIX = ROOT / "tests" / "fixtures" / "export"
DIGITS = ROOT / "examples" / "digits.tflite"
KWS = MODELS / "kws_dscnn.tflite"
M4 = "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
WARN = "-Wall -Wextra -Werror"


def _sh(cmd: list[str], cwd: Path | None = None) -> str:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _app(tmp: Path, libs: dict[str, Path], main_cpp: Path, defines: str = "") -> Path:
    """A CMake application: the exported libraries by add_subdirectory, one C++ main."""
    app = tmp / "app"
    app.mkdir()
    shutil.copy(main_cpp, app / "main.cpp")
    subdirs = "\n".join(f"add_subdirectory({p} {name})" for name, p in libs.items())
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app C CXX)\n"
        f"{subdirs}\nadd_executable(app main.cpp)\n"
        f"target_compile_definitions(app PRIVATE {defines})\n"
        f"target_link_libraries(app PRIVATE {' '.join(libs)})\n"
    )
    return app


def _cmake(app: Path, build: Path, c_flags: str, extra: list[str]) -> None:
    _sh(
        [
            "cmake",
            "-S",
            str(app),
            "-B",
            str(build),
            f"-DCMAKE_C_FLAGS={c_flags}",
            f"-DCMAKE_CXX_FLAGS={c_flags} -fno-exceptions -fno-rtti",
            *extra,
        ]
    )
    _sh(["cmake", "--build", str(build), "-j", "2"])


def _samples(model: Path, n: int, seed: int) -> np.ndarray:
    g = api.plan(str(model)).graph
    t = g.t(g.inputs[0])
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, size=(n, *t.shape[1:]), dtype=np.int8)


def _run_outputs(model: Path, x: np.ndarray, tmp: Path) -> bytes:
    """What `tinycompile run --board host` produces for x (exit 0: equal to TFLM's)."""
    np.save(tmp / f"{model.stem}_in.npy", x)
    out = tmp / f"{model.stem}_out.npy"
    code = main(
        [
            "run",
            str(model),
            "--board",
            "host",
            "--inputs",
            str(tmp / f"{model.stem}_in.npy"),
            "--outputs",
            str(out),
        ]
    )
    assert code == 0
    return np.load(out).astype(np.int8).tobytes()


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_cmake_export_cross_builds_for_m4_with_a_cpp_main(opt: str, tmp_path: Path) -> None:
    res = export_library(
        api.plan(str(DIGITS), board="stm32f407"), "stm32f407", tmp_path / "digits", fmt="cmake"
    )
    assert res.core == "cortex-m4" and any(k.endswith("_dsp.c") for k in res.kernels)
    toolchain = tmp_path / "arm.cmake"
    toolchain.write_text(
        "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR arm)\n"
        "set(CMAKE_C_COMPILER arm-none-eabi-gcc)\nset(CMAKE_CXX_COMPILER arm-none-eabi-g++)\n"
        "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
        'set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs '
        '-Wl,-Map=app.map -Wl,--gc-sections")\n'
    )
    section = 'DIGITS_ARENA_ATTR=__attribute__((section(\\".dtcm_bss\\")))'  # a CMake string
    app = _app(
        tmp_path, {"digits": res.out}, FIX / "main_one.cpp", 'MODEL_H="digits_model.h" PFX=digits'
    )
    (app / "CMakeLists.txt").write_text(
        (app / "CMakeLists.txt").read_text()
        + f'target_compile_definitions(digits PRIVATE "{section}")\n'
    )
    build = tmp_path / "build"
    _cmake(
        app,
        build,
        f"{M4} {opt} {WARN} -ffunction-sections -fdata-sections",
        [f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"],
    )
    elf = build / "app"
    assert elf.is_file()
    head = _sh(["arm-none-eabi-readelf", "-h", "-A", str(elf)])
    assert "ARM" in head and 'Tag_CPU_name: "7E-M"' in head
    syms = _sh(["arm-none-eabi-nm", str(elf)])
    assert re.search(r"\bT digits_invoke\b", syms) and "tc_invoke" not in syms
    # The arena (digits_model.c's static tc_arena) sits in .dtcm_bss, with the planned size.
    text = (build / "app.map").read_text()
    m = re.search(r"^\.dtcm_bss\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", text, re.M)
    assert m, "no .dtcm_bss output section in the map"
    assert int(m.group(1), 16) >= res.arena_bytes
    assert re.search(r"\.dtcm_bss\s+0x[0-9a-f]+\s+0x[0-9a-f]+ \S*digits_model\.c\.obj", text)


def test_cmake_export_on_the_host_gives_runs_outputs(tmp_path: Path) -> None:
    res = export_library(api.plan(str(DIGITS), board="host"), "host", tmp_path / "digits")
    assert res.core == "host"
    app = _app(
        tmp_path, {"digits": res.out}, FIX / "main_one.cpp", 'MODEL_H="digits_model.h" PFX=digits'
    )
    _cmake(app, tmp_path / "build", f"-O2 {WARN}", [])
    x = _samples(DIGITS, 6, seed=3)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    _sh([str(tmp_path / "build" / "app"), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")])
    assert (tmp_path / "y.bin").read_bytes() == _run_outputs(DIGITS, x, tmp_path)


def test_two_models_with_prefixes_link_into_one_program(tmp_path: Path) -> None:
    a = export_library(api.plan(str(DIGITS), board="host"), "host", tmp_path / "a", prefix="a")
    b = export_library(
        api.plan(str(KWS), board="host"), "host", tmp_path / "b", prefix="b", caller_arena=True
    )
    assert set(a.kernels) & set(b.kernels)  # the shared kernel files: one copy is linked
    header = (b.out / "include" / "b_model.h").read_text()
    assert "int b_init(void *arena);" in header and 'extern "C"' in header
    assert f"#define B_ARENA_BYTES {b.arena_bytes}" in header
    app = _app(tmp_path, {"a": a.out, "b": b.out}, FIX / "main_two.cpp")
    _cmake(app, tmp_path / "build", f"-O2 {WARN}", [])
    xa, xb = _samples(DIGITS, 4, seed=5), _samples(KWS, 3, seed=6)
    (tmp_path / "xa.bin").write_bytes(xa.tobytes())
    (tmp_path / "xb.bin").write_bytes(xb.tobytes())
    files = [tmp_path / n for n in ("xa.bin", "ya.bin", "xb.bin", "yb.bin")]
    _sh([str(tmp_path / "build" / "app"), *map(str, files)])
    assert files[1].read_bytes() == _run_outputs(DIGITS, xa, tmp_path)
    assert files[3].read_bytes() == _run_outputs(KWS, xb, tmp_path)


def test_caller_arena_refuses_before_init_and_misaligned(tmp_path: Path) -> None:
    """`--arena caller`: invoke before init returns -1, a misaligned arena is refused, then the
    model runs in the caller's buffer with run's outputs (plain format, compiled by hand)."""
    p = api.plan(str(KWS), board="host")
    res = export_library(p, "host", tmp_path / "kws", fmt="plain", caller_arena=True, prefix="k")
    srcs = sorted(str(s) for s in (res.out / "src").glob("*.c"))
    exe = tmp_path / "app"
    _sh(
        [
            "cc",
            "-std=c99",
            "-O1",
            *WARN.split(),
            "-c",
            *srcs,
            f"-I{res.out / 'include'}",
            f"-I{res.out / 'src'}",
        ],
        cwd=tmp_path,
    )
    objs = sorted(str(o) for o in tmp_path.glob("*.o"))
    _sh(
        [
            "c++",
            "-O1",
            *WARN.split(),
            f"-I{res.out / 'include'}",
            '-DMODEL_H="k_model.h"',
            "-DPFX=k",
            f"-DCALLER_ARENA={res.arena_bytes}",
            str(FIX / "main_one.cpp"),
            *objs,
            "-o",
            str(exe),
        ]
    )
    x = _samples(KWS, 2, seed=9)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    _sh([str(exe), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")])
    assert (tmp_path / "y.bin").read_bytes() == _run_outputs(KWS, x, tmp_path)


def test_arduino_sketch_compiles_as_cpp_for_m0plus(tmp_path: Path) -> None:
    res = export_library(
        api.plan(str(DIGITS), board="samd21"), "samd21", tmp_path / "digits", fmt="arduino"
    )
    lib = res.out
    props = (lib / "library.properties").read_text()
    assert "name=digits" in props and "dot_a_linkage=true" in props
    assert "includes=digits_model.h" in props
    assert not (lib / "include").exists()  # Arduino: everything in src/
    sketch = lib / "examples" / "digits_basic" / "digits_basic.ino"
    flags = ["-mcpu=cortex-m0plus", "-mthumb", "-Os", *WARN.split(), "-ffunction-sections"]
    objs = []
    for src in sorted((lib / "src").glob("*.c")):
        obj = tmp_path / f"{src.stem}.o"
        _sh(["arm-none-eabi-gcc", *flags, "-std=gnu11", "-c", str(src), "-o", str(obj)])
        objs.append(str(obj))
    cpp = ["arm-none-eabi-g++", *flags, "-std=gnu++17", "-fno-exceptions", "-fno-rtti"]
    cpp += [f"-I{FIX}", f"-I{lib / 'src'}"]
    _sh([*cpp, "-x", "c++", "-c", str(sketch), "-o", str(tmp_path / "sketch.o")])
    _sh([*cpp, "-c", str(FIX / "arduino_stub.cpp"), "-o", str(tmp_path / "stub.o")])
    _sh(
        [
            *cpp,
            str(tmp_path / "sketch.o"),
            str(tmp_path / "stub.o"),
            *objs,
            "--specs=nano.specs",
            "--specs=nosys.specs",
            "-Wl,--gc-sections",
            "-o",
            str(tmp_path / "sketch.elf"),
        ]
    )
    syms = _sh(["arm-none-eabi-nm", "-C", str(tmp_path / "sketch.elf")])
    assert re.search(r"\bT digits_invoke\b", syms) and re.search(r"\bT loop\(\)", syms)


def test_export_cli_zephyr_layout_and_reproducible(tmp_path: Path, capsys) -> None:
    """The CLI's zephyr format: module.yml, Kconfig and a CMakeLists naming only files that are
    there; the same export twice gives the same bytes; a bad prefix is exit 2, nothing written."""
    out = tmp_path / "z"
    args = ["export", str(DIGITS), "--board", "stm32f746", "--format", "zephyr", "-o", str(out)]
    assert main([*args, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["prefix"] == "digits" and info["core"] == "cortex-m7"
    assert "kconfig: Kconfig" in (out / "zephyr" / "module.yml").read_text()
    assert "config DIGITS\n" in (out / "Kconfig").read_text()
    cm = (out / "CMakeLists.txt").read_text()
    listed = re.findall(r"^\s+(src/\S+\.c)$", cm, re.M)
    assert listed and all((out / s).is_file() for s in listed)
    assert sorted(listed) == sorted(f"src/{p.name}" for p in (out / "src").glob("*.c"))
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(args) == 0
    again = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert first == again
    bad = tmp_path / "bad"
    assert main(["export", str(DIGITS), "--prefix", "9lives", "-o", str(bad)]) == 2
    assert "prefix '9lives'" in capsys.readouterr().err and not bad.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    assert main(["export", str(DIGITS), "-o", str(mine)]) == 2
    assert "is not a tinycompile export" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
