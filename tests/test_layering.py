"""The package-level import graph of tinycompile/ flows one way, along the pipeline:

    errors, paths, procs, serialport -> ir, quant -> frontend -> ops -> passes -> planner
        -> pipeline -> boards -> fit, report -> codegen -> outdir -> build -> run, flash,
        export -> estimate -> validate -> api -> cli

(read "a -> b" as "b may import a"). Every import counts, including those inside functions;
a module may import its own stage and earlier ones only. A new top-level module or package
must be given its place here, which is the point: where a change goes is decided once.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "tinycompile"
STAGES: list[set[str]] = [
    {"__init__", "errors", "paths", "procs", "serialport"},
    {"ir", "quant"},
    {"frontend"},
    {"ops"},
    {"passes"},
    {"planner"},
    {"pipeline"},
    {"boards"},
    {"fit", "report", "timeline"},
    {"codegen"},
    {"outdir"},
    {"build"},
    {"run", "flash", "export"},
    {"estimate"},
    {"validate"},
    {"api"},
    {"cli"},
]
RANK = {name: i for i, names in enumerate(STAGES) for name in names}


def _unit(path: Path) -> str:
    """The top-level module or package a file belongs to."""
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> set[str]:
    """Top-level tinycompile units imported by a file (absolute or relative, anywhere)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg_parts = ["tinycompile", *path.relative_to(PKG).parent.parts]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "tinycompile" and len(parts) > 1:
                    found.add(parts[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_parts[: len(pkg_parts) - node.level + 1]
                parts = base + (node.module.split(".") if node.module else [])
            else:
                parts = (node.module or "").split(".")
            if parts[0] != "tinycompile":
                continue
            if len(parts) > 1:
                found.add(parts[1])
            else:  # "from tinycompile import x" / "from .. import x"
                found.update(a.name for a in node.names)
    return found


@functools.cache
def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        unit = _unit(path)
        edges.setdefault(unit, set()).update(u for u in _imports(path) if u != unit)
    return edges


def test_every_unit_has_a_stage() -> None:
    missing = sorted(set(_edges()) - set(RANK))
    assert not missing, f"give these a place in STAGES (tests/test_layering.py): {missing}"


@pytest.mark.parametrize("unit", sorted(RANK))
def test_imports_flow_one_way(unit: str) -> None:
    back = {u for u in _edges().get(unit, set()) if RANK.get(u, 99) > RANK[unit]}
    assert not back, f"tinycompile.{unit} imports later stages {sorted(back)}"


def test_no_cycle() -> None:
    edges = _edges()
    state: dict[str, int] = {}

    def visit(u: str, path: list[str]) -> None:
        state[u] = 1
        for v in edges.get(u, ()):
            assert state.get(v) != 1, "import cycle: " + " -> ".join([*path, u, v])
            if v not in state:
                visit(v, [*path, u])
        state[u] = 2

    for u in edges:
        if u not in state:
            visit(u, [])


def test_the_scan_sees_imports() -> None:
    """The scanner is not blind: the planner imports ops, the CLI imports the api."""
    edges = _edges()
    assert "ops" in edges["planner"] and "ir" in edges["planner"]
    assert "api" in edges["cli"] and "ir" in edges["frontend"]


# The planner decides; it neither prepares nor lowers (issue 20). From the ops package it may
# read the contract's types and the row geometry, nothing that runs a unit's prepare or lower.
PLANNER_MAY_IMPORT = {
    "DEFAULT_CHOICE", "Choice", "Prepared", "PreparedOp", "fail", "unit_of",
    "Move", "RowLayer", "Segment", "check", "schedule",
}  # fmt: skip
FORBIDDEN_CALLS = {"prepare", "lower", "lower_row", "prepare_ops", "prepare_graph", "lower_graph"}


def _planner_files() -> list[Path]:
    return sorted((PKG / "planner").rglob("*.py"))


def test_planner_reads_only_the_ops_contract() -> None:
    for path in _planner_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and "ops" in node.module:
                assert node.module in ("ops", "ops.rows") and node.level == 2, (path, node.module)
                bad = {a.name for a in node.names} - PLANNER_MAY_IMPORT
                assert not bad, f"{path.name} imports {sorted(bad)} from tinycompile.{node.module}"
            assert not isinstance(node, ast.Import), f"{path.name}: use relative imports"


def test_planner_calls_neither_prepare_nor_lower() -> None:
    for path in _planner_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                assert name not in FORBIDDEN_CALLS, f"{path.name}:{node.lineno} calls {name}"


def test_the_planner_scan_sees_calls() -> None:
    """The call scan is not blind: the pipeline module calls both."""
    calls = {
        (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None))
        for n in ast.walk(ast.parse((PKG / "pipeline.py").read_text()))
        if isinstance(n, ast.Call)
    }
    assert {"prepare", "lower", "prepare_ops"} <= calls


KERNEL_LINES = 600  # firmware/ C and headers
MODULE_LINES = 400  # Python: the compiler, its tests and benchmarks


def test_files_stay_under_the_size_limits() -> None:
    root = PKG.parent
    over = [
        f"{p.relative_to(root)}: {n} lines"
        for pattern, limit in (
            ("firmware/**/*.[ch]", KERNEL_LINES),
            ("tinycompile/**/*.py", MODULE_LINES),
            ("tests/**/*.py", MODULE_LINES),
            ("benchmarks/*.py", MODULE_LINES),
        )
        for p in sorted(root.glob(pattern))
        if (n := len(p.read_text().splitlines())) > limit
    ]
    assert not over, "split these by what they hold: " + "; ".join(over)
