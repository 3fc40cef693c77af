"""The kernels' object cache (tinycompile/build/objcache.py): builds from cached objects are the
builds the project's own commands make, byte for byte; a changed kernel or header is compiled
again; a kernel reading a header outside the key is never cached; warnings come back on every
hit; the cache can be turned off. Each test has a cache folder of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tinycompile import api
from tinycompile.build import build_firmware, build_host
from tinycompile.build.objcache import CACHE_ENV, kernel_headers, object_key
from tinycompile.errors import ToolchainError

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "examples" / "digits.tflite"
OTHER = ROOT / "tests" / "models" / "ops" / "act_chain.tflite"


def cached(root: Path) -> set[str]:
    return {p.name for p in (root / "objects").glob("*.o")}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(root))
    return root


def test_host_builds_share_kernel_objects_and_match_uncached(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = build_host(api.generate(MODEL, tmp_path / "a"))
    kernels = len(list((tmp_path / "a" / "runtime" / "kernels").glob("*.c")))
    assert len(cached(cache)) == kernels  # every kernel, once
    b = build_host(api.generate(OTHER, tmp_path / "b"))  # another model, another folder
    assert len(cached(cache)) == kernels  # nothing new compiled for it
    monkeypatch.setenv(CACHE_ENV, "off")
    a2 = build_host(api.generate(MODEL, tmp_path / "a2"))
    assert a2.read_bytes() == a.read_bytes()  # the cached objects are what cc makes
    assert b.is_file() and not (tmp_path / "a" / "build" / ".tc_host.obj").exists()


@pytest.mark.qemu
def test_firmware_from_cached_objects_is_byte_identical(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = api.plan(MODEL)
    first = build_firmware(api.generate(p, tmp_path / "a"), "stm32f746", variant="board")
    n = len(cached(cache))
    assert n > 0
    again = build_firmware(api.generate(p, tmp_path / "b"), "stm32f746", variant="board")
    assert len(cached(cache)) == n
    monkeypatch.setenv(CACHE_ENV, "off")
    fresh = build_firmware(api.generate(p, tmp_path / "c"), "stm32f746", variant="board")
    for ext in ("elf", "bin"):
        one = getattr(first, ext).read_bytes()
        assert one == getattr(again, ext).read_bytes() == getattr(fresh, ext).read_bytes(), ext
    assert first.warnings == again.warnings == fresh.warnings == ()


def test_changed_kernel_is_compiled_again(cache: Path, tmp_path: Path) -> None:
    build_host(api.generate(MODEL, tmp_path / "a"))
    proj = api.generate(MODEL, tmp_path / "b")
    src = proj / "runtime" / "kernels" / "tc_copy.c"
    src.write_text(src.read_text() + "\n#error edited kernel\n")
    with pytest.raises(ToolchainError, match="edited kernel"):
        build_host(proj)  # not the cached object of the unedited source
    hdr = proj / "runtime" / "include" / "tc_copy.h"
    src.write_text(src.read_text().replace("#error edited kernel", ""))
    hdr.write_text(hdr.read_text() + "\n#error edited header\n")
    with pytest.raises(ToolchainError, match="edited header"):
        build_host(proj)


def test_warnings_come_back_on_every_hit(cache: Path, tmp_path: Path) -> None:
    def project(name: str) -> Path:
        proj = api.generate(MODEL, tmp_path / name)
        src = proj / "runtime" / "kernels" / "tc_copy.c"
        src.write_text(src.read_text() + "\nstatic int tc_unused_fn(void) { return 0; }\n")
        return proj

    one = build_firmware(project("a"), "stm32f746", variant="board").warnings
    two = build_firmware(project("b"), "stm32f746", variant="board").warnings
    assert one == two and any("tc_unused_fn" in w for w in one), one


def test_a_kernel_reading_an_outside_header_is_not_cached(tmp_path: Path) -> None:
    proj = api.generate(MODEL, tmp_path / "a")
    headers = kernel_headers(proj)
    src = proj / "runtime" / "kernels" / "tc_copy.c"
    assert object_key("cc", ["-O2"], src, headers, proj) is not None
    src.write_text('#include "tc_model.h"\n' + src.read_text())  # the model's own header
    assert object_key("cc", ["-O2"], src, headers, proj) is None


def test_cache_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    build_host(api.generate(MODEL, tmp_path / "a"))
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_oldest_entries_are_dropped(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tinycompile.build import objcache

    folder = cache / "objects"
    folder.mkdir(parents=True)
    for i in range(5):
        for suffix in (".o", ".txt"):
            (folder / f"k{i}{suffix}").write_text(str(i))
        os.utime(folder / f"k{i}.o", (1000 + i, 1000 + i))
    monkeypatch.setattr(objcache, "MAX_ENTRIES", 3)
    objcache._prune(folder)
    assert sorted(p.name for p in folder.iterdir()) == [
        f"k{i}{s}" for i in (2, 3, 4) for s in (".o", ".txt")
    ]


def test_an_unwritable_cache_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_ENV, str(blocker))  # objects/ cannot be made under a file
    exe = build_host(api.generate(MODEL, tmp_path / "a"))
    assert exe.is_file() and blocker.is_file()
