"""The ARMv6-M (Cortex-M0+) kernels (firmware/kernels/tc_*_m0.c, tc_m0.h), bit-exact with TFLM.

They only run on ARMv6-M, so they are checked in QEMU on samd21 (an MPS2 running the Armv6-M
code with unaligned accesses trapping, as a real M0+): every CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED op model and every in-place model, compared layer by layer. Between them they
take each path: channel counts not multiples of 4 (the one-channel tails), odd widths, padding
(border pixels, window copies with the zero point), strides 1 and 2, dilation, 1x1 and k x k,
windows copied to the stack and read in place, im2col scratch, grouped convolutions (left to
the portable path), depth multipliers 2 and 3, FC with odd sizes, several rows, per-tensor and
per-channel quantization, both in-place layouts.

The requantization tc_requant16 (tc_qmath.h's tc_requant on ARMv6-M) is checked on the host
against tc_requant_mul64 (the 64-bit form every other core runs), with the portable C form of its
four-product sum; the Thumb-1 form sums the same four products and is exercised by every model
above."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import MODELS, ROOT, TFLM_CRASHES
from modelgen.few_channel import Net

from tinycompile import api

FAMILIES = ("conv", "dwconv", "fc")
OP_MODELS = sorted(
    p
    for fam in FAMILIES
    for p in (MODELS / "ops").glob(f"{fam}_*.tflite")
    if p.stem not in TFLM_CRASHES
)
INPLACE = sorted((MODELS / "inplace").glob("*.tflite"))


def test_models_cover_the_shape_classes() -> None:
    names = {p.stem for p in OP_MODELS + INPLACE}
    for need in (
        "conv_pointwise",
        "conv_same_s2_relu6",
        "conv_valid_s2",
        "conv_dil2_n1to1",
        "conv_grouped",
        "conv_wide_direct",
        "dwconv_dil2_dm3",
        "dwconv_valid_s2_dm2",
        "dwconv_5x5_s2_relu",
        "fc_rows",
        "fc_n1to1",
        "pw_expand_odd",
        "pw_shrink_odd",
        "chain_dscnn",
    ):
        assert need in names, need


@pytest.mark.parametrize("model", OP_MODELS + INPLACE, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_m0_kernels_bit_exact(model: Path) -> None:
    r = api.compare(model, board="samd21", n=4, layers=True)
    assert r.ok, str(r)


def _window_nets() -> dict[str, Net]:
    """Layers whose windows tc_conv2d_m0.c copies row by row (tc_conv_m0_im2col: the columns
    inside the image copied, the rest the zero point), with borders on all four sides."""
    return {
        # a spectrogram's one-channel 10x4 window (DS-CNN's first layer), stride 2 and 1
        "c1_10x4_s2": Net((1, 25, 10, 1), 31).conv(12, (10, 4), 2, "SAME", "RELU"),
        "c1_10x4_s1": Net((1, 14, 7, 1), 32, zp=-128).conv(6, (10, 4), 1, "SAME"),
        # five channels, odd width: 15-byte window rows; then a stride-2 layer over its output
        "c5_3x3": Net((1, 9, 11, 5), 33).conv(7, 3, 1, "SAME", per_channel=True).conv(6, 3, 2),
        # a window wider than the image: both borders in one row
        "c2_5x7_narrow": Net((1, 8, 5, 2), 34).conv(4, (5, 7), 1, "SAME", "RELU6"),
    }


@pytest.mark.parametrize("name", sorted(_window_nets()))
def test_m0_window_copies_bit_exact(name: str, tmp_path: Path) -> None:
    path = _window_nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board="samd21", n=3, layers=True)
    assert r.ok, str(r)


def _small_nets() -> dict[str, Net]:
    """Depthwise layers over small images (tc_dwconv_s8_small: each block of four channels
    through a zero-point-padded copy), in place and out of place, and the layer each runs."""
    return {
        # in place (the single layer): the copy is the layer's temporary
        "inplace_3x3": Net((1, 3, 3, 16), 41).dw(1, 3, 1, "SAME", per_channel=True),
        "inplace_5x7": Net((1, 5, 7, 8), 42, zp=-128).dw(1, 3, 1, "SAME", "RELU6"),
        # out of place after a larger layer (the copy in the optional scratch): odd width,
        # stride 2 (single pixels), VALID, then a layer reading the result
        "after_conv_6x5": Net((1, 6, 5, 4), 43).conv(12, 1).dw(1, 3, 1, "SAME").conv(6, 1),
        "s2_7x7": Net((1, 14, 14, 4), 44).conv(16, 3, 2).dw(1, 3, 2, "SAME", "RELU").conv(4, 1),
        "valid_6x6": Net((1, 12, 12, 4), 45).conv(8, 3, 2).dw(1, 3, 1, "VALID").conv(4, 1),
    }


def test_small_nets_reach_the_small_path(tmp_path: Path) -> None:
    for name, net in _small_nets().items():
        p = api.plan(net.save(tmp_path / f"{name}.tflite"), board="samd21")
        stmts = [p.lowering.ops[i].stmt for i in p.order]
        assert any(s.startswith("tc_dwconv_s8_small(") for s in stmts), (name, stmts)


@pytest.mark.parametrize("name", sorted(_small_nets()))
def test_m0_small_depthwise_bit_exact(name: str, tmp_path: Path) -> None:
    path = _small_nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board="samd21", n=3, layers=True)
    assert r.ok, str(r)


@pytest.mark.parametrize("shape", [(1, 3, 3, 64), (1, 6, 6, 32)], ids=["3x3x64", "6x6x32"])
def test_small_depthwise_stays_fast(shape: tuple, tmp_path: Path) -> None:
    """A 3x3 layer over a small image in place runs tc_dwconv_s8_small: the fast build's
    instructions are a smaller share of the portable build's (whole inference, exact counts)
    than the general loop's borders and ring gave them (0.64 and 0.60 here against 0.90 and
    0.81 before the path)."""
    model = Net(shape, 51).dw(1, 3, 1, "SAME").save(tmp_path / "m.tflite")
    fast, slow = (
        api.compare(model, board="samd21", n=1, layers=False, portable=portable)
        for portable in (False, True)
    )
    assert fast.ok and slow.ok, (str(fast), str(slow))
    assert fast.profile["instructions"] < 0.75 * slow.profile["instructions"]


REQUANT_TEST = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tc_m0.h"

static uint64_t s = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }

static int check(int32_t x, int32_t m, int32_t sh)
{
    int32_t a = tc_requant_mul64(x, m, sh), b = tc_requant16(x, m, sh);
    if (a != b) {
        printf("x=%ld m=%ld shift=%ld: %ld != %ld\n", (long)x, (long)m, (long)sh, (long)a,
               (long)b);
        return 1;
    }
    return 0;
}

int main(void)
{
    static const int32_t xs[] = {0, 1, -1, 2, -2, 32767, -32768, 32768, -32769, 65535, -65536,
                                 65536, 1 << 20, -(1 << 20), INT32_MAX, INT32_MIN,
                                 INT32_MAX - 1, INT32_MIN + 1, 0x7FFF0000, -0x7FFF0000};
    static const int32_t ms[] = {0, 1, 0xFFFF, 0x10000, 1 << 30, (1 << 30) + 1, INT32_MAX,
                                 0x40008000, 0x7FFF8000, 0x5A5A5A5A};
    long bad = 0, i;
    int32_t sh;
    size_t a, b;
    for (sh = -31; sh <= 31; sh++) {
        for (a = 0; a < sizeof xs / sizeof xs[0]; a++) {
            for (b = 0; b < sizeof ms / sizeof ms[0]; b++) {
                bad += check(xs[a], ms[b], sh);
                bad += check(xs[a] >> (sh > 0 ? sh : 0), ms[b], sh);
            }
        }
    }
    for (i = 0; i < 4000000; i++) {
        uint32_t r = rnd();
        int32_t x = (int32_t)rnd() >> (r & 31);
        int32_t m = (int32_t)(rnd() >> 1) | (int32_t)((r >> 5) & 1 ? 0x40000000 : 0);
        int32_t shift = (int32_t)((r >> 8) % 63) - 31;
        if (shift > 0 && (r >> 16) & 1) {
            x >>= shift; /* accumulators that stay in range after the left shift */
        }
        bad += check(x, m, shift);
    }
    printf("bad %ld\n", bad);
    return bad != 0;
}
"""


def test_requant_m0_matches_tc_requant(tmp_path: Path) -> None:
    src = tmp_path / "t.c"
    src.write_text(REQUANT_TEST)
    exe = tmp_path / "t"
    inc = ["-I", str(ROOT / "firmware" / "include"), "-I", str(ROOT / "firmware" / "kernels")]
    cmd = ["cc", "-std=c99", "-O2", "-Wall", "-Werror", *inc, str(src), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "bad 0", r.stdout[-2000:]
