"""The Helium CONV_2D of the Cortex-M55 (firmware/kernels/tc_conv2d_mve.c), bit-exact with TFLM
in every layer under QEMU's mps3-an547 (qemu-m55): only that core compiles it.

The models are test_kernels_fast_conv.py's, chosen for what the Helium path does differently:
its column of three pixels (and of two where the planner's column holds no more), windows of
any length (K not a multiple of 16: the zeroed chunk tails), odd output channel counts (a lone
last channel paired with itself), partial blocks of pixels, the in-place 1x1 walk forwards and
backwards, the in-place k x k ring (pairs), borders with padding, strides and dilations, the
few-channel first layers (which it takes over from tc_conv_few_s8), and random stacks of its
own seeds. ONNX layers (the requantization's ONNX variant, lane by lane) run on it in
test_onnx_models.py's emulator test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_kernels_fast_conv import _nets, _random_stack

from tinycompile import api

NETS = [
    "first_c1",
    "first_c3",
    "first_c7",
    "pointwise",
    "pw_grow_odd",
    "pw_shrink",
    "ring",
    "ring_k5_wide",
    "col16_c3",
    "edge_dil13",
    "edge_k5_s2_c18",
]


@pytest.mark.qemu
@pytest.mark.parametrize("name", NETS)
def test_mve_conv_matches_tflm(name: str, tmp_path: Path) -> None:
    path = _nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board="qemu-m55", n=4, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("seed", range(6))
def test_mve_random_stacks_match_tflm(seed: int, tmp_path: Path) -> None:
    path = _random_stack(7100 + seed).save(tmp_path / f"r{seed}.tflite")
    r = api.compare(path, board="qemu-m55", n=3, layers=True)
    assert r.ok, str(r)
