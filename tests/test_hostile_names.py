"""Names and strings from a model never reach generated C unescaped, nor choose file paths.

A valid model gets hostile tensor names, subgraph name, description and metadata names (comment
terminators, newlines, backslash line splices, trigraphs, preprocessor lines, non-UTF-8 bytes,
path traversal). The generated project must compile warning-free with -Werror, be pure ASCII,
never contain the hostile text, differ from the clean model's project only inside comments,
compute the same outputs, and be written only under the chosen output folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import ai_edge_litert.schema_py_generated as schema  # the TFLite object API (ModelT)
import flatbuffers
import numpy as np
import pytest
from conftest import ROOT

from tinycompile import api
from tinycompile.build import HOST_CFLAGS, host_cc

MODEL = ROOT / "examples" / "digits.tflite"
HOSTILE = [
    b'*/ system("rm -rf /"); /*',
    b"line one\nline two */ int evil;\n#define TC_NUM_INPUTS 99",
    b"ends with a backslash \\",
    b"splice \\\nint evil2 = 1;",
    b"trigraph ??/\nint evil3; ??= define X ??( ??)",
    b'#include "/etc/passwd"',
    b"non-utf8 \xff\xfe\x80\xc3\x28 bytes",
    b"// comment \\\n int evil4;",
    b"../../../../tmp/tc_escape_dir/x",
    b"/tmp/tc_escape_abs",
    b"\r\n\x00\x1b[2J\xe2\x80\xae",
    b"%s%n%08x{{ model_name }}{% raw %}",
]
CLEAN_FILES = ["model/tc_model.c", "model/tc_model.h", "model/tc_weights.c", "model/tc_weights.h"]


def hostile_model(data: bytes, extra: tuple[bytes, ...] | list[bytes] = ()) -> bytes:
    """The same model with every name and free-text string replaced by hostile text (tensor
    names: ``extra`` first, then HOSTILE)."""
    m = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    sg = m.subgraphs[0]
    names = [*extra, *HOSTILE]
    for i, t in enumerate(sg.tensors):
        t.name = names[i % len(names)] + b" #" + str(i).encode()
    sg.name = HOSTILE[0] + HOSTILE[3]
    m.description = HOSTILE[1] + HOSTILE[4]
    for k, md in enumerate(m.metadata or []):
        md.name = HOSTILE[(k + 5) % len(HOSTILE)]
    b = flatbuffers.Builder(4096)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "/**/", text, flags=re.S)


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The clean and the hostile model (under a hostile file name), each generated once."""
    td = tmp_path_factory.mktemp("hostile")
    clean = td / "clean.tflite"
    clean.write_bytes(MODEL.read_bytes())
    bad = td / "we\\ird*\n??= name #include.tflite"
    bad.write_bytes(hostile_model(MODEL.read_bytes()))
    return {
        "clean_model": clean,
        "bad_model": bad,
        "clean": api.generate(clean, td / "out_clean"),
        "bad": api.generate(bad, td / "out_bad"),
    }


def test_names_are_really_in_the_model(projects: dict[str, Path]) -> None:
    """Guard: the reader does see the hostile names (else the test proves nothing)."""
    g = api.plan(projects["bad_model"]).graph
    assert any("rm -rf" in t.name for t in g.tensors)
    assert "\n" in g.tensors[1].name and "rm -rf" in g.name


def test_generated_text_is_ascii_and_free_of_hostile_text(projects: dict[str, Path]) -> None:
    for rel in CLEAN_FILES:
        raw = (projects["bad"] / rel).read_bytes()
        assert raw.isascii(), rel
        text = raw.decode("ascii")
        for h in HOSTILE:
            for piece in (h.decode("utf-8", "replace"), h.decode("latin-1")):
                assert piece not in text, (rel, piece)
        # words may survive inside comments; the characters that could end one may not
        for needle in ("??", '"rm', "/etc/passwd", "/tmp/", "\r", "\x00", "\x1b"):
            assert needle not in text, (rel, needle)
        assert not re.search(r"\\\s*$", text, flags=re.M), f"{rel}: backslash at a line end"


def test_names_only_change_comments(projects: dict[str, Path]) -> None:
    """Apart from comments, the hostile model's sources equal the clean model's."""
    for rel in CLEAN_FILES:
        a = (projects["clean"] / rel).read_text("ascii")
        b = (projects["bad"] / rel).read_text("ascii")
        # The model fingerprint (the file's SHA-256) differs by design: 32 hex bytes, nothing else.
        sha = re.compile(
            r"^#define TC_MODEL_SHA256_BYTES (0x[0-9a-f]{2}, ){31}0x[0-9a-f]{2}$", re.M
        )
        (a, na), (b, nb) = sha.subn("SHA", a), sha.subn("SHA", b)
        assert na == nb == (1 if rel.endswith("tc_model.h") else 0), rel
        assert strip_comments(a) == strip_comments(b), rel
    runtime = sorted(p.relative_to(projects["bad"]) for p in projects["bad"].rglob("*"))
    assert runtime == sorted(p.relative_to(projects["clean"]) for p in projects["clean"].rglob("*"))


def test_generated_model_compiles_with_werror(projects: dict[str, Path]) -> None:
    """Every generated C file compiles warning-free (trigraphs on: -std=c99)."""
    proj = projects["bad"]
    inc = ["-I", str(proj / "model"), "-I", str(proj / "runtime" / "include")]
    for src in sorted((proj / "model").glob("*.c")):
        cmd = [
            host_cc(),
            *HOST_CFLAGS,
            "-Werror",
            "-Wcomment",
            "-Wtrigraphs",
            *inc,
            "-c",
            str(src),
            "-o",
            str(src.with_suffix(".o")),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        src.with_suffix(".o").unlink()


def test_hostile_model_computes_the_same_outputs(projects: dict[str, Path]) -> None:
    p_clean = api.plan(projects["clean_model"])
    p_bad = api.plan(projects["bad_model"])
    xs = [np.load(ROOT / "examples" / "digits_inputs.npy")[:8]]
    a = api.run_host(p_clean, projects["clean"], xs)
    b = api.run_host(p_bad, projects["bad"], xs)
    assert len(a.outputs) == len(b.outputs) == 1
    np.testing.assert_array_equal(a.outputs[0], b.outputs[0])
    assert np.unique(a.outputs[0]).size > 2  # real inputs: the outputs are alive


def _tree(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def test_model_names_do_not_choose_paths(tmp_path: Path) -> None:
    """A model whose names are relative and absolute paths still writes only under -o DIR."""
    escape_abs = Path("/tmp/tc_escape_abs")
    escape_rel = Path("/tmp/tc_escape_dir")
    for p in (escape_abs, escape_rel):
        assert not p.exists(), f"{p} exists before the test; remove it"
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    model = work / "model.tflite"
    m = schema.ModelT.InitFromPackedBuf(bytearray(MODEL.read_bytes()), 0)
    for i, t in enumerate(m.subgraphs[0].tensors):
        t.name = [b"../../../../tmp/tc_escape_dir/x", b"/tmp/tc_escape_abs", b"..", b"/"][i % 4]
    m.subgraphs[0].name = b"../../escape"
    m.description = b"/tmp/tc_escape_abs"
    b = flatbuffers.Builder(4096)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    model.write_bytes(bytes(b.Output()))
    before = _tree(tmp_path)
    out = work / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tinycompile.cli",
            "build",
            str(model),
            "--board",
            "host",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=work,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0, r.stderr
    new = _tree(tmp_path) - before
    assert new and all(p == out or out in p.parents for p in new), sorted(new - {out})
    assert not escape_abs.exists() and not escape_rel.exists()
    names = {p.relative_to(out).as_posix() for p in new if p != out}
    assert set(CLEAN_FILES) <= names
    assert not any("escape" in n or ".." in n for n in names)
