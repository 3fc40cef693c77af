"""The fast int8 MUL (ops/mul_fast.py: the Cortex-M4/M7 SMMLAR form and the 32-bit form of the
other cores) and the pooling fast paths (the ARMv6-M loops of tc_pool_m0.c, the division-free
rounding of AVERAGE_POOL_2D), bit-exact with TFLM: the forms checked over every input pair in
Python, the reciprocal identities over every count and sum, and models written here run on the
host (the 32-bit form in C), stm32f746 (M7) and stm32f407 (M4) (the DSP form) and samd21 (M0+,
the naked ARMv6-M loop). MUL shapes cover every broadcast pattern (scalar, channel vector, per
pixel, row, column, ranks 2 to 5, either operand broadcast), odd sizes (the tails after
four-element words), extreme scales (a multiplier of 0.5 and above, and one so small that no
form applies: the portable path), relu / relu6; pooling 2x2 / 3x3 at strides 1 and 2, SAME and
VALID, channel counts not multiples of 4 and above the M0+ loop's 32-channel blocks, fused
activations, and a window of more than 64 taps (the portable loops)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from modelgen.elem_models import binary, pool
from modelgen.elem_models import clamp as _clamp

from tinycompile import api
from tinycompile.ops.mul_fast import mul_exact, mul_forms, mul_forms_check
from tinycompile.quant.qmath import quantize_multiplier

BOARDS = ("host", "stm32f746", "stm32f407", "samd21")


def _fields(sa, za, sb, zb, so, zo, act) -> dict[str, int]:
    lo, hi = _clamp(act, so, zo)
    m, s = quantize_multiplier(sa * sb / so)
    return {
        "in1_offset": -za, "in2_offset": -zb, "out_multiplier": m, "out_shift": s,
        "out_offset": zo, "act_min": lo, "act_max": hi,
    }  # fmt: skip


def test_forms_exact_on_random_scales() -> None:
    """Every form found reproduces TFLM's MUL on all 65,536 pairs; ordinary MULs get both."""
    rng = np.random.default_rng(7)
    found = 0
    for i in range(80):
        sa = float(np.float32(rng.uniform(0.004, 0.1)))
        sb = 1 / 256 if i % 2 else float(np.float32(rng.uniform(0.004, 0.1)))
        so = float(np.float32(sa * sb * rng.uniform(3, 3000)))
        za, zb, zo = (int(v) for v in rng.integers(-128, 128, 3))
        zb = -128 if i % 2 else zb  # a sigmoid gate's zero point
        f = _fields(sa, za, sb, zb, so, zo, ["none", "relu", "relu6"][i % 3])
        forms = mul_forms(f)
        mul_forms_check(f, forms)
        found += bool(forms.get("dsp_r")) and bool(forms.get("m0_r"))
    assert found >= 76


def test_exact_is_tflm_arithmetic() -> None:
    """mul_exact against a scalar evaluation of MultiplyByQuantizedMultiplier."""
    from tinycompile.quant.qmath import rounding_divide_by_pot, srdhm

    f = _fields(0.02, 3, 1 / 256, -128, 0.015, -5, "relu")
    t, e = mul_exact(f)
    for x, y in ((-128, 127), (0, 0), (5, -9), (127, -128), (-77, 31)):
        v = (x - 3) * (y + 128)
        assert t[x + 128, y + 128] == v
        raw = rounding_divide_by_pot(srdhm(v, f["out_multiplier"]), -f["out_shift"]) - 5
        assert e[x + 128, y + 128] == min(max(raw, f["act_min"]), 127)


def test_no_form_outside_the_shift_range() -> None:
    """A multiplier of 0.5 or more (shift >= 0) or below 2^-24 leaves the portable path."""
    assert mul_forms(_fields(0.5, 0, 0.5, 0, 0.1, 0, "none")) == {}
    assert mul_forms(_fields(0.01, 0, 0.01, 0, 100000.0, 0, "none")) == {}


def test_avgpool_reciprocals_exact() -> None:
    """tc_pool_m0.c's (n * ceil(2^24 / d)) >> 24 in uint32 and tc_pool.c's SMULW form
    ((N * ceil(2^16 / d)) >> 16 for N < 2^15) equal floor(n / d) over every count d and every
    sum the kernels can see."""
    for d in range(1, 257):
        n = np.arange(0, 128 * d + d // 2 + 1, dtype=np.int64)
        m24 = -(-(1 << 24) // d)
        assert (((n * m24) & 0xFFFFFFFF) >> 24 == n // d).all() and (n * m24).max() < 1 << 32
        if d <= 16:
            big = np.arange(0, 255 * d + d // 2 + 1, dtype=np.int64)
            assert big.max() < 1 << 15
            assert ((big * -(-(1 << 16) // d)) >> 16 == big // d).all()


def _mul(path: Path, a, b, act, qa, qb, qo) -> Path:
    return binary(path, "MUL", a, b, act, qa, qb, qo)


G = ((0.05, -3), (1 / 256, -128), (0.03, 10))  # a tensor times a sigmoid gate
Q = ((0.05, -3), (0.04, 7), (0.1, 4))  # two activations
MULS = {
    "same_odd": ((1, 7, 5, 3), (1, 7, 5, 3), "relu", Q),
    "same_gate": ((1, 8, 8, 16), (1, 8, 8, 16), "none", G),
    "same_relu6": ((1, 6, 6, 9), (1, 6, 6, 9), "relu6", ((0.1, 5), (0.08, -20), (0.05, -128))),
    "scalar": ((1, 9, 7, 6), (1,), "none", G),
    "scalar_first": ((1, 1, 1, 1), (1, 6, 5, 4), "relu", Q),
    "channels": ((1, 6, 6, 24), (1, 1, 1, 24), "none", G),
    "channels_odd": ((1, 5, 6, 13), (13,), "relu", G),
    "channels_first": ((1, 1, 1, 16), (1, 4, 5, 16), "none", Q),
    "channels_long": ((1, 2, 3, 300), (1, 1, 1, 300), "none", G),
    "per_pixel": ((1, 5, 6, 8), (1, 5, 6, 1), "relu", G),
    "per_pixel_first": ((1, 4, 3, 1), (1, 4, 3, 7), "none", Q),
    "row": ((1, 4, 9, 5), (1, 1, 9, 5), "none", Q),
    "column": ((1, 6, 1, 7), (1, 6, 5, 7), "none", Q),
    "rank2": ((10, 11), (1, 11), "relu", Q),
    "rank3": ((3, 5, 7), (3, 1, 7), "none", Q),
    "rank5": ((2, 3, 1, 4, 5), (1, 3, 4, 1, 5), "none", Q),
    "out_coarse": ((1, 6, 6, 9), (1, 6, 6, 9), "none", ((0.2, 1), (0.3, -5), (0.25, 0))),
    "out_fine": ((1, 6, 6, 9), (1, 6, 6, 9), "none", ((0.05, 1), (0.04, -5), (0.5, 3))),
    "big_multiplier": ((1, 5, 5, 8), (1, 5, 5, 8), "none", ((0.5, 1), (0.5, -5), (0.1, 3))),
}


@pytest.fixture(scope="module")
def mul_models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fast_mul")
    return {k: _mul(d / f"mul_{k}.tflite", *v[:3], *v[3]) for k, v in MULS.items()}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", list(MULS))
def test_mul_bit_exact(mul_models, name: str, board: str) -> None:
    r = api.compare(mul_models[name], board=board, n=3, layers=True)
    assert r.ok, (name, board, r.mismatches)


def test_mul_models_get_both_forms() -> None:
    """The gate quantization of the models runs the fast forms, not the portable path."""
    (sa, za), (sb, zb), (so, zo) = G
    forms = mul_forms(_fields(sa, za, sb, zb, so, zo, "relu"))
    assert forms.get("dsp_r") and forms.get("m0_r")


def _pool(path: Path, kind: str, hwc, k: int, s: int, pad: str, act: str) -> Path:
    return pool(path, kind, hwc, k, s, pad, act)


POOLS = {
    "max_2x2_s2_valid_c3": ("MAX_POOL_2D", (6, 8, 3), 2, 2, "valid", "none"),
    "max_2x2_s1_same_c9": ("MAX_POOL_2D", (5, 6, 9), 2, 1, "same", "relu"),
    "max_3x3_s2_same_c7": ("MAX_POOL_2D", (9, 8, 7), 3, 2, "same", "relu6"),
    "max_3x3_s1_valid_c40": ("MAX_POOL_2D", (5, 6, 40), 3, 1, "valid", "none"),
    "max_4x4_s2_same_c5": ("MAX_POOL_2D", (9, 9, 5), 4, 2, "same", "none"),
    "max_9x9_s1_valid_c6": ("MAX_POOL_2D", (9, 10, 6), 9, 1, "valid", "relu"),
    "avg_2x2_s2_valid_c3": ("AVERAGE_POOL_2D", (6, 8, 3), 2, 2, "valid", "none"),
    "avg_2x2_s1_same_c9": ("AVERAGE_POOL_2D", (5, 6, 9), 2, 1, "same", "relu"),
    "avg_3x3_s2_same_c7": ("AVERAGE_POOL_2D", (9, 8, 7), 3, 2, "same", "relu6"),
    "avg_3x3_s1_same_c40": ("AVERAGE_POOL_2D", (5, 6, 40), 3, 1, "same", "none"),
    "avg_4x4_s2_same_c5": ("AVERAGE_POOL_2D", (9, 9, 5), 4, 2, "same", "none"),
    "avg_5x5_s1_same_c4": ("AVERAGE_POOL_2D", (6, 7, 4), 5, 1, "same", "relu"),
    "avg_9x9_s1_valid_c6": ("AVERAGE_POOL_2D", (9, 10, 6), 9, 1, "valid", "none"),
}


@pytest.fixture(scope="module")
def pool_models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fast_pool_m0")
    return {k: _pool(d / f"{k}.tflite", *v) for k, v in POOLS.items()}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", list(POOLS))
def test_pool_bit_exact(pool_models, name: str, board: str) -> None:
    r = api.compare(pool_models[name], board=board, n=3, layers=True)
    assert r.ok, (name, board, r.mismatches)
