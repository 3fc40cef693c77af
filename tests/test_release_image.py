"""Board images built by `tinycompile build` carry no test vector (the validation protocol feeds
inputs; the start-up inference runs on zero inputs); `--test-vector` builds one sample in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import ROOT

from tinycompile.cli import main

MODEL = ROOT / "examples" / "digits.tflite"


def _symbols(elf: Path) -> dict[str, int]:
    out = subprocess.run(
        ["arm-none-eabi-nm", "-S", str(elf)], check=True, capture_output=True, text=True
    ).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            syms[parts[3]] = int(parts[1], 16)
    return syms


def test_release_image_has_no_test_vector(tmp_path: Path) -> None:
    plain, vec = tmp_path / "plain", tmp_path / "vec"
    assert main(["build", str(MODEL), "--board", "stm32f746", "-o", str(plain)]) == 0
    assert main(["build", str(MODEL), "--board", "stm32f746", "-o", str(vec), "--test-vector"]) == 0
    elf = "build/stm32f746-board/firmware.elf"
    a, b = _symbols(plain / elf), _symbols(vec / elf)
    assert not any(s.startswith("tc_testvec_") and s[11:].isdigit() for s in a)
    assert b["tc_testvec_0"] == 8 * 8 * 1  # the digits input: 8x8x1 int8
    fa = json.loads((plain / "report.json").read_text())["size"]["flash_used"]
    fb = json.loads((vec / "report.json").read_text())["size"]["flash_used"]
    assert fb - fa >= 64
