"""The kernels' parameter structs, read from their C declarations, and the check of every
lowering's ``ctx.params`` dict against them.

A parameter struct is declared once, in C (``typedef struct { ... } tc_<op>_params_t;`` in
``firmware/include/tc_<op>.h``), where the kernels read it. A lowering fills it with a dict that
codegen renders as a designated initializer, in which a field left out silently becomes 0 (gcc
says nothing, even at ``-Wextra``). So every dict is checked here against the parsed typedef:
the same fields in the same order, pointers given a C expression or 0, no field unknown to C.
``_Ctx.params`` calls :func:`check_params` for every struct of every lowering, so a mismatch
fails the compile (an internal error naming the op and the fields), and every test that lowers
the op with it.

Why a check rather than generating the typedefs from Python: the headers are the kernels'
documentation (field comments, units, layouts) and ship with exported libraries; keeping them
hand-written and checked keeps one source of truth for each side without a generator step.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from ..paths import FIRMWARE_DIR

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_TYPEDEF = re.compile(r"typedef\s+struct\s*\w*\s*\{(?P<body>[^{}]*)\}\s*(?P<name>\w+)\s*;", re.S)
_FUNC_PTR = re.compile(r"\(\s*\*\s*(\w+)\s*\)")
_DECLARATOR = re.compile(
    r"(?<!\w)(?P<stars>\*[\s*]*)?(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)$"
)


@dataclass(frozen=True)
class Field:
    """One member of a C struct."""

    name: str
    pointer: bool  # a data or function pointer: takes a C expression (a symbol) or 0
    array: bool  # a fixed-size array member: takes a C initializer expression


def _fields(body: str, where: str) -> tuple[Field, ...]:
    out: list[Field] = []
    for decl in body.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        if decl.startswith("#"):
            raise ValueError(f"{where}: preprocessor lines inside a params struct: {decl!r}")
        fp = _FUNC_PTR.search(decl)
        if fp:
            out.append(Field(fp.group(1), True, False))
            continue
        parts = decl.split(",")
        first = _DECLARATOR.search(parts[0])
        if first is None or not parts[0][: first.start()].strip():
            raise ValueError(f"{where}: cannot read the member declaration {decl!r}")
        type_ptr = "*" in parts[0][: first.start()]
        for i, part in enumerate(parts):
            m = first if i == 0 else _DECLARATOR.fullmatch(part.strip())
            if m is None:
                raise ValueError(f"{where}: cannot read the member declaration {decl!r}")
            out.append(
                Field(m.group("name"), type_ptr or bool(m.group("stars")), bool(m.group("dims")))
            )
    return tuple(out)


def parse_structs(text: str, where: str = "<header>") -> dict[str, tuple[Field, ...]]:
    """``typedef struct {...} name;`` declarations of a C header: {name: fields in order}."""
    text = _COMMENT.sub(" ", text)
    return {
        m.group("name"): _fields(m.group("body"), f"{where}: {m.group('name')}")
        for m in _TYPEDEF.finditer(text)
    }


@functools.cache
def kernel_structs(include_dir: Path = FIRMWARE_DIR / "include") -> dict[str, tuple[Field, ...]]:
    """Every struct typedef of the runtime's public headers (``firmware/include/*.h``)."""
    out: dict[str, tuple[Field, ...]] = {}
    for h in sorted(include_dir.glob("*.h")):
        for name, fields in parse_structs(h.read_text(), h.name).items():
            if name in out:
                raise ValueError(f"{h.name}: struct {name} is declared twice in firmware/include")
            out[name] = fields
    return out


def params_problems(
    ctype: str, fields: dict[str, object], structs: dict[str, tuple[Field, ...]] | None = None
) -> list[str]:
    """What is wrong with a lowering's ``fields`` for the C struct ``ctype`` (empty: nothing)."""
    structs = kernel_structs() if structs is None else structs
    decl = structs.get(ctype)
    if decl is None:
        return [f"no typedef struct {ctype} in firmware/include"]
    names = [f.name for f in decl]
    given = list(fields)
    problems: list[str] = []
    missing = [n for n in names if n not in fields]
    unknown = [n for n in given if n not in names]
    if missing:
        problems.append(f"fields missing (they would silently be 0): {', '.join(missing)}")
    if unknown:
        problems.append(f"fields not in the C struct: {', '.join(unknown)}")
    for f in decl:
        v = fields.get(f.name)
        if (
            (f.pointer or f.array)
            and f.name in fields
            and not (isinstance(v, str) or (type(v) is int and v == 0))
        ):
            kind = "pointer" if f.pointer else "array"
            problems.append(
                f"{kind} field {f.name} given {type(v).__name__} {v!r}, not a C expression or 0"
            )
    return problems


def check_params(ctype: str, fields: dict[str, object]) -> dict[str, object]:
    """``fields`` in the C struct's order; RuntimeError (an internal error: a lowering and its
    kernel header disagree) when a field is missing, unknown or of the wrong kind."""
    problems = params_problems(ctype, fields)
    if problems:
        raise RuntimeError(f"params struct {ctype} (firmware/include): " + "; ".join(problems))
    return {f.name: fields[f.name] for f in kernel_structs()[ctype]}
