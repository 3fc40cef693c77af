"""Every operator unit is tested and documented, and every op test model matches TFLM.

Adding an operator touches its own module in tinycompile/ops/, its kernel file(s) in firmware/
and its test model(s) in tests/models/ops/ (docs/adding_an_op.md): the unit is discovered, and
the model is compared with TensorFlow Lite Micro here, layer by layer, with no list to edit.
These tests fail when a registered operator has no test model or no row in the README's table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REFUSED, ROOT, op_models

from tinycompile import api
from tinycompile.frontend import load_model
from tinycompile.ops import OPS, Operator, load_all

OPS_DIR = ROOT / "tinycompile" / "ops"
SHARED = {"__init__", "base", "common", "conv_common", "broadcast", "tables", "lowering"}
SHARED |= {"prepare"}  # the driver preparing every op once (``pipeline``)
SHARED |= {"datamove"}  # the data-movement operators' copy loops (tc_copy_s8)
SHARED |= {"s16"}  # what the 16x8 (int16 activation) operators share
SHARED |= {"rows"}  # row streaming's schedule (the STREAM unit and the units' row methods)
SHARED |= {"elem_fast"}  # int8 ADD's exact linear forms (add.py)
SHARED |= {"few"}  # the few-input-channel CONV_2D kernel's choice and weights (conv2d.py)
SHARED |= {"s16_fast"}  # the 16x8 fast kernels' choices and weight layouts
SHARED |= {"mul_fast"}  # int8 MUL's exact forms (mul.py)
SHARED |= {"pwf"}  # the few-input-channel pointwise kernel's choice and stream (conv2d.py)
SHARED |= {"cstructs"}  # the kernels' params structs read from C, and the check of every lowering


def _model_kinds() -> set[str]:
    """The registered kinds a model file can hold (not the planner's own, e.g. STREAM)."""
    return {k for k, unit in load_all().items() if not unit.internal}


def _kinds_in_models() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in op_models():
        if path.stem in REFUSED:
            continue
        for op in load_model(path).ops:
            found.setdefault(op.kind, []).append(path.stem)
    return found


def _readme_kinds() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Supported operators", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    return set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", " ".join(r.split("|")[2] for r in rows[2:])))


def test_every_operator_has_a_test_model() -> None:
    missing = sorted(_model_kinds() - set(_kinds_in_models()))
    assert not missing, f"registered operators with no model in tests/models/ops: {missing}"


def test_every_operator_has_a_readme_row() -> None:
    kinds = _model_kinds()
    documented = _readme_kinds()
    assert not kinds - documented, f"not in the README's operator table: {kinds - documented}"
    assert not documented - kinds, f"in the README but not registered: {documented - kinds}"


def test_every_op_module_registers_a_unit() -> None:
    """Modules are discovered: each op module defines (and registers) at least one unit; the
    shared helper modules register none."""
    load_all()
    units = {type(u) for u in OPS.values()}
    by_module: dict[str, list[type[Operator]]] = {}
    for cls in units:
        by_module.setdefault(cls.__module__.rsplit(".", 1)[1], []).append(cls)
    modules = {p.stem for p in OPS_DIR.glob("*.py")}
    assert set(by_module) == modules - SHARED, (sorted(by_module), sorted(modules - SHARED))
    for cls in units:
        assert cls.kinds and all(OPS[k].__class__ is cls for k in cls.kinds)


@pytest.mark.parametrize("path", op_models(tflm=True), ids=lambda p: p.stem)
def test_op_model_matches_tflm(path: Path) -> None:
    """Generated C built for the host, 20 random inputs, every layer compared with TFLM."""
    r = api.compare(path, n=20)
    assert r.layers, "no layer was compared"
    assert r.ok, str(r)
