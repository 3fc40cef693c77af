"""Kernel parameter structs are declared once, in C, and every lowering's dict is checked against
that declaration (tinycompile/ops/cstructs.py): a field left out, a field C does not have, or a
number where C has a pointer fails the compile instead of silently becoming 0."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tinycompile import api
from tinycompile.ops import cstructs
from tinycompile.ops.cstructs import Field, check_params, kernel_structs, parse_structs
from tinycompile.paths import EXAMPLE_MODEL

OPS = Path(__file__).resolve().parent.parent / "tinycompile" / "ops"

HEADER = """
/* a comment with typedef struct { int32_t fake; } not_a_struct_t; inside */
typedef struct tc_demo_s {
    int32_t a, b;              /* two on a line */
    const int8_t *ptr, plain;  // a pointer, then an int8_t
    int8_t * const *pp;
    int32_t dims[6];
    void (*fn)(const int8_t *in, int32_t n);
    uint16_t last;
} tc_demo_t;

typedef struct {
    int32_t only;
} tc_small_t;
"""


def test_parse_reads_every_member_in_order() -> None:
    s = parse_structs(HEADER)
    assert list(s) == ["tc_demo_t", "tc_small_t"]
    assert s["tc_demo_t"] == (
        Field("a", False, False),
        Field("b", False, False),
        Field("ptr", True, False),
        Field("plain", False, False),
        Field("pp", True, False),
        Field("dims", False, True),
        Field("fn", True, False),
        Field("last", False, False),
    )
    assert s["tc_small_t"] == (Field("only", False, False),)


def test_parse_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="preprocessor"):
        parse_structs("typedef struct {\n#if X\n int32_t a;\n#endif\n} t_t;")
    with pytest.raises(ValueError, match="cannot read"):
        parse_structs("typedef struct { int32_t a, 3b; } t_t;")


def test_every_header_struct_parses_with_its_members() -> None:
    """The runtime's headers: every struct typedef found, each with members (a regex that
    stopped matching would make the check vacuous)."""
    structs = kernel_structs()
    text = "".join(p.read_text() for p in (OPS.parent.parent / "firmware" / "include").glob("*.h"))
    declared = re.findall(r"\}\s*(tc_\w+_t)\s*;", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    assert sorted(structs) == sorted(declared)
    assert all(structs[name] for name in structs)
    assert [f.name for f in structs["tc_copy_params_t"]] == [
        "rank", "count", "in_stride", "table_at", "table", "in_offset", "run"
    ]  # fmt: skip


def test_every_struct_the_units_name_exists() -> None:
    named = set()
    for py in OPS.glob("*.py"):
        named |= set(re.findall(r"params\(\s*\"(tc_\w+_t)\"", py.read_text()))
    assert len(named) > 25
    assert named <= set(kernel_structs()), sorted(named - set(kernel_structs()))


def test_check_names_each_disagreement() -> None:
    full = {"size": 4, "lut": "tc_const_t1"}
    assert list(check_params("tc_lut_params_t", {"lut": "x", "size": 4})) == ["size", "lut"]
    assert check_params("tc_lut_params_t", full) == full
    with pytest.raises(RuntimeError, match=r"tc_lut_params_t.*missing.*: lut"):
        check_params("tc_lut_params_t", {"size": 4})
    with pytest.raises(RuntimeError, match="not in the C struct: sizes"):
        check_params("tc_lut_params_t", {**full, "sizes": 4})
    with pytest.raises(RuntimeError, match="pointer field lut given int 7"):
        check_params("tc_lut_params_t", {"size": 4, "lut": 7})
    with pytest.raises(RuntimeError, match="no typedef struct tc_nope_t"):
        check_params("tc_nope_t", full)
    assert check_params("tc_lut_params_t", {"size": 4, "lut": 0})["lut"] == 0  # NULL


def _with_struct(monkeypatch: pytest.MonkeyPatch, ctype: str, fields: tuple[Field, ...]) -> None:
    structs = dict(kernel_structs())
    structs[ctype] = fields
    monkeypatch.setattr(cstructs, "kernel_structs", lambda: structs)


def test_a_lowering_that_disagrees_with_its_header_fails_the_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bundled example lowers CONV_2D with tc_conv_params_t: a member C gains that the
    lowering does not fill, or one it fills that C lost, stops the compile with the names."""
    conv = kernel_structs()["tc_conv_params_t"]
    api.plan(EXAMPLE_MODEL)  # agrees today
    _with_struct(monkeypatch, "tc_conv_params_t", (*conv, Field("new_limit", False, False)))
    with pytest.raises(RuntimeError, match=r"tc_conv_params_t.*missing.*new_limit"):
        api.plan(EXAMPLE_MODEL)
    _with_struct(monkeypatch, "tc_conv_params_t", tuple(f for f in conv if f.name != "tmp"))
    with pytest.raises(RuntimeError, match=r"tc_conv_params_t.*not in the C struct: tmp"):
        api.plan(EXAMPLE_MODEL)


def test_generated_initializers_follow_the_header_order(tmp_path: Path) -> None:
    """Each struct's designated initializer lists the members in the header's order."""
    out = api.generate(api.plan(EXAMPLE_MODEL), tmp_path / "g")
    text = (out / "model" / "tc_model.c").read_text()
    blocks = re.findall(r"static (?:const )?(tc_\w+_t) tc_op\d+_params\w* = \{(.*?)\};", text, re.S)
    assert blocks
    for ctype, body in blocks:
        members = re.findall(r"^\s*\.(\w+) =", body, re.M)
        assert members == [f.name for f in kernel_structs()[ctype]], ctype
