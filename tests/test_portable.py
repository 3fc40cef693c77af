"""The portable kernel build (-DTC_PORTABLE, `portable=True`: no DSP or ARMv6-M fast paths), the
baseline `make bench` measures the fast paths against: the same outputs as the fast build, both
bit-exact with TFLM in every layer."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from tinycompile import api

pytestmark = pytest.mark.qemu

DIGITS = ROOT / "examples" / "digits.tflite"


@pytest.mark.parametrize("board", ["stm32f407", "samd21"])
def test_portable_build_matches_fast_build(board: str) -> None:
    xs = api.make_inputs(api.plan(DIGITS).graph, 4, 1)
    fast = api.compare(DIGITS, board=board, inputs=xs, layers=True)
    port = api.compare(DIGITS, board=board, inputs=xs, layers=True, portable=True)
    assert fast.ok and port.ok, (str(fast), str(port))
    for a, b in zip(fast.result.outputs, port.result.outputs, strict=True):
        assert np.array_equal(a, b)
    # the switch took effect: the fast paths (DSP on M4, ARMv6-M on M0+) run fewer instructions
    assert fast.profile["instructions"] < port.profile["instructions"]
