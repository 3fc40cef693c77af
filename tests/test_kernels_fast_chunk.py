"""CONV_2D layers whose every pixel goes through the int16 column GEMM on the Cortex-M4/M7
(``tc_conv_s8_col`` and ``tc_conv_s8_chunk``, tc_conv2d_dsp.c; ops/conv2d.py ``col_entry``), the
latter with the column in chunks on the stack for k x k layers that got no column buffer
(tc_conv2d_chunk_dsp.c): bit-exact with
TFLM in QEMU, reached by the layers meant for them, and models whose convolutions all take the
entry link none of tc_conv_s8's other loops.

The chunk path's cases (written with test_kernels_fast_conv.py's net builder, each layer alone
so that it sets the SRAM peak and gets no column):
- in place through the ring: 3x3 over 16 channels (144 values: two chunks at whole window
  rows), 3x3 over 20 into 11 (chunks cut inside a tap, a lone last channel, 81 pixels: a lone
  last pixel), 32 output channels (the most: five chunks of 60 values), dilated windows (the
  taps read one at a time, borders as zero-point fills), a 5x5 window over 24 channels (10
  chunks), a 1x2 window (a ring of one slot, like its 2x1 twin with a granted column);
- out of place: stride 2 where the output's tail would leave more than a quarter of the
  pixels (every pixel in chunks), a VALID 3x3 layer whose output's tail holds a column for
  most pixels and leaves the last 37 to the chunks, a ReLU6 clamp.
A layer whose requantization SMMLAR cannot do exactly (a shift right by more than 22) stays on
tc_conv_s8, as do windows over channel counts that are not multiples of 4 at the peak.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from modelgen.tflite_writer import T
from test_kernels_fast_conv import _Net

from tinycompile import api
from tinycompile.build import build_firmware

BOARDS = ["stm32f407", "stm32f746"]  # Cortex-M4, Cortex-M7
MODELS = Path(__file__).parent / "models"


def _far_shift(net: _Net) -> _Net:
    """The last layer's output scale raised 2^26-fold: its requantization shifts right by more
    than 22 (its outputs mostly the zero point and a few neighbours)."""
    t = net.tensors[net.cur]
    assert isinstance(t.quant, tuple)
    scale, zp = t.quant
    net.tensors[net.cur] = T(t.name, t.shape, quant=(float(scale) * 2.0**26, int(zp)))
    return net


def _nets() -> dict[str, _Net]:
    return {
        "ring16": _Net((1, 12, 12, 16), 101).conv(16, 3, act="RELU"),
        "ring20_odd": _Net((1, 9, 9, 20), 102).conv(11, 3, act="RELU6"),
        "ring32": _Net((1, 6, 7, 32), 103).conv(32, 3),
        "ring_dil": _Net((1, 9, 8, 12), 104).conv(12, 3, dil_h=2, dil_w=2),
        "ring_k5": _Net((1, 7, 6, 24), 105).conv(24, 5, act="RELU6"),
        "all_s2": _Net((1, 11, 13, 12), 106).conv(24, 3, 2),
        "tail_valid": _Net((1, 20, 20, 16), 107).conv(16, 3, 1, "VALID", act="RELU6"),
        # a 1x2 window in place: no padding above or left, a ring of one slot (the pair's
        # first output goes straight to its place); its twin 2x1 with a granted column (the
        # random run that found the pair sharing the slot, then the pointwise stride-2 layer)
        "ring_1x2": _Net((1, 6, 7, 16), 110).conv(16, (1, 2)),
        "ring_2x1_col": _Net((1, 6, 7, 16), 111).conv(12, (2, 1), act="RELU").conv(40, 1, 2),
        "far_shift": _far_shift(_Net((1, 9, 9, 16), 108).conv(16, 3)),
        "c10_ring": _Net((1, 9, 9, 10), 109).conv(10, 3),
    }


WANT = {  # the kernel each layer calls
    "ring16": ["tc_conv_s8_chunk"],
    "ring20_odd": ["tc_conv_s8_chunk"],
    "ring32": ["tc_conv_s8_chunk"],
    "ring_dil": ["tc_conv_s8_chunk"],
    "ring_k5": ["tc_conv_s8_chunk"],
    "all_s2": ["tc_conv_s8_chunk"],
    "tail_valid": ["tc_conv_s8_chunk"],
    "ring_1x2": ["tc_conv_s8_chunk"],
    "ring_2x1_col": ["tc_conv_s8_col"],  # (then tc_conv_pw_s8: pwf.py)
    "far_shift": ["tc_conv_s8"],
    "c10_ring": ["tc_conv_s8"],
}


def _kernels(model: Path, out: Path) -> list[str]:
    """The CONV_2D kernels the generated model calls, in schedule order."""
    api.generate(model, out)
    src = (out / "model" / "tc_model.c").read_text()
    return re.findall(r"\b(tc_conv_s8(?:_col|_chunk|_grouped)?)\(", src)


def test_layers_take_the_entry_meant_for_them(tmp_path: Path) -> None:
    for name, net in _nets().items():
        path = net.save(tmp_path / f"{name}.tflite")
        p = api.plan(path)
        if name != "ring_2x1_col":
            assert all(not c.use_scratch for c in p.choices.values()), name  # no column
        assert _kernels(path, tmp_path / name) == WANT[name], name


@pytest.mark.qemu
@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("name", sorted(_nets()))
def test_chunks_match_tflm(name: str, board: str, tmp_path: Path) -> None:
    path = _nets()[name].save(tmp_path / f"{name}.tflite")
    r = api.compare(path, board=board, n=4, layers=True)
    assert r.ok, str(r)


def _symbols(elf: Path) -> set[str]:
    out = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.qemu
def test_column_entry_leaves_the_other_loops_out(tmp_path: Path) -> None:
    """DS-CNN's convolutions all take tc_conv_s8_col on the M7: its firmware links neither
    tc_conv_s8 nor the direct loops, ring and pointwise loops behind it, nor the chunks;
    ResNet-8 links the chunks (its in-place 3x3 layer at the peak, and the last pixels of the
    out-of-place one before it) and not tc_conv_s8."""
    for model, chunks in (("kws_dscnn", False), ("ic_resnet8", True)):
        p = api.plan(MODELS / f"{model}.tflite", board="stm32f746")
        fw = build_firmware(api.generate(p, tmp_path / model), "stm32f746")
        names = _symbols(fw.elf)
        assert "tc_conv_s8_col" in names, model
        assert not names & {"tc_conv_s8", "tc_conv_edge", "tc_conv_ring_inplace"}, model
        assert ("tc_conv_s8_chunk" in names) == chunks, model
        assert ("tc_conv_ring_chunk" in names) == chunks, model
