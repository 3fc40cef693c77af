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
from test_kernels_fast_conv import _Net, _nets, _random_stack

from tinycompile import api
from tinycompile.ops import DEFAULT_CHOICE

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


# the in-place ring in blocks of three pixels where D (pad_h * W + pad_w + 1, the outputs an
# input pixel waits for) is 1 (no padding above or left: every output straight to its place),
# 2 (fewer than a block), or nearly the whole image (2x3 pixels under a 3x3 window: R = 5)
RINGS = {
    "ring_d1": lambda: _Net((1, 6, 7, 12), 21).conv(12, 2, act="RELU").conv(8, 2),
    "ring_d2": lambda: _Net((1, 5, 7, 9), 22).conv(9, (2, 3)).conv(7, (1, 3), act="RELU6"),
    "ring_tiny": lambda: _Net((1, 2, 3, 40), 23).conv(40, 3).conv(36, 3, act="RELU"),
}


@pytest.mark.qemu
@pytest.mark.parametrize("name", sorted(RINGS))
def test_mve_ring_blocks_match_tflm(name: str, tmp_path: Path) -> None:
    path = RINGS[name]().save(tmp_path / f"{name}.tflite")
    p = api.plan(path)
    assert any(p.choices.get(i, DEFAULT_CHOICE).in_place for i in p.order), name
    r = api.compare(path, board="qemu-m55", n=4, layers=True)
    assert r.ok, str(r)


@pytest.mark.qemu
@pytest.mark.parametrize("seed", range(6))
def test_mve_random_stacks_match_tflm(seed: int, tmp_path: Path) -> None:
    path = _random_stack(7100 + seed).save(tmp_path / f"r{seed}.tflite")
    r = api.compare(path, board="qemu-m55", n=3, layers=True)
    assert r.ok, str(r)
