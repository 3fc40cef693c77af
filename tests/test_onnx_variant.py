"""Firmware without the ONNX requantization variant where no layer needs it: a TFLite model's
kernels are built with -DTC_ONNX_VARIANT=0 (firmware/include/tc_qmath.h) and link smaller, an
ONNX model's keep it. (That both stay bit-exact is every emulator test's business: the TFLite
ones now run without the variant, the ONNX ones with it.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tinycompile import api
from tinycompile.build import build_firmware

ROOT = Path(__file__).resolve().parent.parent
TFLITE = ROOT / "tests" / "models" / "kws_dscnn.tflite"
ONNX = ROOT / "tests" / "models" / "onnx" / "cnn_twin.onnx"


def test_only_onnx_layers_ask_for_the_variant() -> None:
    assert not api.plan(TFLITE).onnx_variant
    assert not api.plan(ROOT / "tests" / "models" / "onnx" / "cnn_twin.tflite").onnx_variant
    assert api.plan(ONNX).onnx_variant
    assert api.plan(ONNX, board="samd21", stream="min").onnx_variant  # streamed layers count


@pytest.mark.parametrize("board", ["stm32f746", "samd21"])
def test_without_the_variant_the_code_is_smaller(board: str, tmp_path: Path) -> None:
    p = api.plan(TFLITE, board=board)
    project = api.generate(p, tmp_path / "project")
    code = {}
    for with_it in (True, False):
        fw = build_firmware(project, board, variant="board", onnx_variant=with_it)
        code[with_it] = fw.size.code
        flags = (project / "board" / board / "Makefile").read_text()
        assert ("-DTC_ONNX_VARIANT=0" in flags) != with_it
    assert code[True] - code[False] > (4000 if board == "stm32f746" else 600), code
