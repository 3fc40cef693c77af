"""The worst-case stack from the call graph (tinycompile/build/stack.py) against reality and on
made-up listings.

Reality: the stm32f407 board image runs in QEMU's netduinoplus2 (the real chip's model), its
start-up report prints the painted stack's high-water mark after one inference (`tc-stack
used=N`): it must not exceed the bound the size report printed for that image. The listings
check the parser's arithmetic (register lists, SUB SP, VPUSH ranges, tail calls, indirect calls
through stored addresses, recursion)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from conftest import ROOT

from tinycompile.build.stack import parse_functions
from tinycompile.cli import main
from tinycompile.serialport import Port
from tinycompile.validate.emulate import board_elf, emulated_board

LISTING = """
08000100 <leaf>:
 8000100:\tpush\t{r4, r5, r6, lr}
 8000102:\tsub\tsp, #16
 8000104:\tpop\t{r4, r5, r6, pc}

08000110 <fp>:
 8000110:\tvpush\t{d8-d15}
 8000114:\tstmdb\tsp!, {r4, r5, r6, r7, r8, r9, sl, fp, lr}
 8000118:\tsub.w\tsp, sp, #716\t@ 0x2cc
 800011c:\tbl\t8000100 <leaf>
 8000120:\tb.w\t8000140 <tail>

08000140 <tail>:
 8000140:\tstr.w\tlr, [sp, #-4]!
 8000144:\tblx\tr3
 8000146:\t.word\t0x08000101
"""


def test_parser_on_a_listing() -> None:
    funcs, words = parse_functions(LISTING)
    assert funcs["leaf"].frame == 4 * 4 + 16 and not funcs["leaf"].calls
    assert funcs["fp"].frame == 8 * 8 + 9 * 4 + 716
    assert funcs["fp"].calls == {"leaf", "tail"}  # a branch to another function: a tail call
    assert funcs["tail"].frame == 4 and funcs["tail"].indirect
    assert 0x08000101 in words  # leaf's address (Thumb bit set) is stored: an indirect target


def test_parser_keeps_same_named_static_functions_apart() -> None:
    # two objects each with their own copy of a header's static helper: not one function
    listing = """
08000100 <helper>:
 8000100:\tpush\t{r4, lr}
 8000102:\tpop\t{r4, pc}

08000110 <a>:
 8000110:\tpush\t{lr}
 8000112:\tbl\t8000100 <helper>

08000120 <helper>:
 8000120:\tpush\t{r4, r5, r6, lr}
 8000122:\tpop\t{r4, r5, r6, pc}

08000130 <b>:
 8000130:\tpush\t{lr}
 8000132:\tbl\t8000120 <helper>
"""
    funcs, _ = parse_functions(listing)
    assert funcs["helper"].frame == 8 and funcs["helper@8000120"].frame == 16
    assert funcs["a"].calls == {"helper"} and funcs["b"].calls == {"helper@8000120"}


@pytest.mark.qemu
@pytest.mark.parametrize("model", ["examples/digits.tflite", "tests/models/kws_dscnn.tflite"])
def test_bound_covers_the_measured_stack(model: str, tmp_path: Path) -> None:
    out = tmp_path / "build"
    assert main(["build", str(ROOT / model), "--board", "stm32f407", "-o", str(out)]) == 0
    size = json.loads((out / "report.json").read_text())["size"]
    bound, reserve = size["stack_bound"], size["stack"]
    assert bound is not None, size["stack_note"]
    assert bound <= reserve
    board, elf = board_elf(out, "stm32f407")
    text = ""
    with emulated_board(board, elf) as emu, Port(emu.pty, board.uart.baud) as port:
        deadline = time.monotonic() + 300
        while "tc-stack" not in text and time.monotonic() < deadline:
            text += port.read_some(256, 1.0).decode("ascii", "replace")
        deadline = time.monotonic() + 5
        while not re.search(r"tc-stack used=\d+ reserve=\d+", text) and time.monotonic() < deadline:
            text += port.read_some(256, 1.0).decode("ascii", "replace")
    m = re.search(r"tc-stack used=(\d+) reserve=(\d+)", text)
    assert m, text[-400:]
    used = int(m.group(1))
    assert int(m.group(2)) == reserve
    assert 0 < used <= bound, (used, bound)
    print(f"{model}: stack used {used} <= bound {bound} <= reserve {reserve}")
