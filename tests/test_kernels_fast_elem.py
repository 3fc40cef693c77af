"""The fast int8 ADD (exact linear forms, ops/elem_fast.py) and pooling (DSP) paths, bit-exact
with TFLM: the forms checked over every input pair in Python, and models written here run on
the host (the portable form), stm32f746 (M7) and stm32f407 (M4) (the DSP form, SSUB8/SEL
max pooling, SADD16 average pooling) and samd21 (M0+). Shapes cover every broadcast pattern
(scalar, channel vector, row, column, ranks 2 to 5, either operand broadcast), odd sizes (the
one-by-one tails after four-element words), extreme scales, relu / relu6; pooling 2x2 / 3x3 at
strides 1 and 2, SAME and VALID, odd sizes, channels not multiples of 4, fused activations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.elem_models import binary, pool
from modelgen.elem_models import clamp as _clamp

from tinycompile import api
from tinycompile.ops.add import double_reals, rescale_fields
from tinycompile.ops.elem_fast import add_exact, add_forms, add_forms_check
from tinycompile.quant.qmath import quantize_multiplier_smaller_than_one as qm1

BOARDS = ("host", "stm32f746", "stm32f407", "samd21")


def _fields(sa, za, sb, zb, so, zo, act) -> dict[str, int]:
    lo, hi = _clamp(act, so, zo)
    f = {"in1_offset": -za, "in2_offset": -zb, "left_shift": 20}
    for name, real in zip(("in1", "in2", "out"), double_reals(sa, sb, so, 20), strict=True):
        m, s = qm1(real)
        f.update({f"{name}_multiplier": m, f"{name}_shift": s})
    f.update(out_offset=zo, act_min=lo, act_max=hi)
    return f


def test_forms_exact_on_random_scales() -> None:
    """Every form found reproduces TFLM's ADD on all 65,536 pairs; most ADDs get both."""
    rng = np.random.default_rng(5)
    found = 0
    for i in range(60):
        sa = float(np.float32(rng.uniform(0.004, 0.1)))
        sb = float(np.float32(sa * rng.uniform(0.1, 8)))
        so = float(np.float32(max(sa, sb) * [0.01, 0.3, 1, 3, 60][i % 5]))
        za, zb, zo = (int(v) for v in rng.integers(-128, 128, 3))
        f = _fields(sa, za, sb, zb, so, zo, ["none", "relu", "relu6"][i % 3])
        forms = add_forms(f)
        add_forms_check(f, forms)
        found += bool(forms.get("lin_k")) and bool(forms.get("dsp_ok"))
    assert found >= 40  # the misses are the extreme output scales (0.01x, 60x)


def test_exact_matches_the_kernel_arithmetic() -> None:
    """add_exact is rescale_fields' arithmetic (spot check against a scalar evaluation)."""
    from tinycompile.quant.qmath import multiply_by_quantized_multiplier_np as mbqm

    f = _fields(0.02, 3, 0.05, -7, 0.04, -2, "relu")
    e = add_exact(f)
    for x, y in ((-128, 127), (0, 0), (5, -9), (127, -128)):
        a = mbqm(np.int64(x - 3) << 20, f["in1_multiplier"], f["in1_shift"])
        b = mbqm(np.int64(y + 7) << 20, f["in2_multiplier"], f["in2_shift"])
        raw = int(mbqm(a + b, f["out_multiplier"], f["out_shift"])) - 2
        assert e[x + 128, y + 128] == min(max(raw, f["act_min"]), 127)
    assert rescale_fields  # the op's own fields builder is what AddOp.prepare uses


def _binary(path: Path, a, b, act, qa, qb, qo) -> Path:
    return binary(path, "ADD", a, b, act, qa, qb, qo)


Q = ((0.05, -3), (0.03, 10), (0.06, 4))  # ordinary: output scale near the inputs'
ADDS = {
    "same_odd": ((1, 7, 5, 3), (1, 7, 5, 3), "relu", Q),
    "same_relu6": ((1, 8, 8, 16), (1, 8, 8, 16), "relu6", ((0.1, 5), (0.08, -20), (0.05, -128))),
    "scalar": ((1, 9, 7, 6), (1,), "none", Q),
    "scalar_first": ((1, 1, 1, 1), (1, 6, 5, 4), "relu", Q),
    "channels": ((1, 6, 6, 13), (13,), "none", Q),
    "per_pixel": ((1, 5, 6, 8), (1, 5, 6, 1), "relu", Q),
    "row": ((1, 4, 9, 5), (1, 1, 9, 5), "none", Q),
    "column": ((1, 6, 1, 7), (1, 6, 5, 7), "none", Q),
    "rank2": ((10, 11), (1, 11), "relu", Q),
    "rank3": ((3, 5, 7), (3, 1, 7), "none", Q),
    "rank5": ((2, 3, 1, 4, 5), (1, 3, 4, 1, 5), "none", Q),
    "out_coarse": ((1, 6, 6, 9), (1, 6, 6, 9), "none", ((0.02, 1), (0.03, -5), (2.5, 0))),
    "out_fine": ((1, 6, 6, 9), (1, 6, 6, 9), "none", ((0.5, 1), (0.4, -5), (0.004, 3))),
}


@pytest.fixture(scope="module")
def add_models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fast_add")
    return {k: _binary(d / f"add_{k}.tflite", *v[:3], *v[3]) for k, v in ADDS.items()}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", list(ADDS))
def test_add_bit_exact(add_models, name: str, board: str) -> None:
    r = api.compare(add_models[name], board=board, n=3, layers=True)
    assert r.ok, (name, board, r.mismatches)


def test_add_models_get_both_forms() -> None:
    """The ordinary quantization of the models runs a linear form, not the rescaling path."""
    (sa, za), (sb, zb), (so, zo) = Q
    forms = add_forms(_fields(sa, za, sb, zb, so, zo, "relu"))
    assert forms.get("lin_k") and forms.get("dsp_ok")


def _pool(path: Path, kind: str, hwc, k: int, s: int, pad: str, act: str) -> Path:
    return pool(path, kind, hwc, k, s, pad, act)


POOLS = {
    "max_2x2_s2_valid_16": ("MAX_POOL_2D", (8, 8, 16), 2, 2, "valid", "none"),
    "max_2x2_s2_same_odd": ("MAX_POOL_2D", (7, 9, 7), 2, 2, "same", "relu"),
    "max_3x3_s1_same_c6": ("MAX_POOL_2D", (6, 5, 6), 3, 1, "same", "relu6"),
    "max_3x3_s2_valid_c5": ("MAX_POOL_2D", (9, 7, 5), 3, 2, "valid", "none"),
    "max_2x2_s1_valid_c12": ("MAX_POOL_2D", (5, 6, 12), 2, 1, "valid", "relu"),
    "avg_2x2_s2_valid_16": ("AVERAGE_POOL_2D", (8, 8, 16), 2, 2, "valid", "none"),
    "avg_2x2_s2_same_odd": ("AVERAGE_POOL_2D", (7, 9, 7), 2, 2, "same", "relu"),
    "avg_3x3_s1_same_c6": ("AVERAGE_POOL_2D", (6, 5, 6), 3, 1, "same", "relu6"),
    "avg_3x3_s2_same_c9": ("AVERAGE_POOL_2D", (9, 7, 9), 3, 2, "same", "none"),
    "avg_3x3_s1_valid_c4": ("AVERAGE_POOL_2D", (5, 5, 4), 3, 1, "valid", "none"),
}


@pytest.fixture(scope="module")
def pool_models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fast_pool")
    return {k: _pool(d / f"{k}.tflite", *v) for k, v in POOLS.items()}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", list(POOLS))
def test_pool_bit_exact(pool_models, name: str, board: str) -> None:
    r = api.compare(pool_models[name], board=board, n=3, layers=True)
    assert r.ok, (name, board, r.mismatches)
