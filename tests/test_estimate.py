"""The latency estimator (tinycompile/estimate/, issue 23): instructions classed per layer from
a QEMU trace, cycles from the cores' manuals, printed by `plan --board`.

Checks that do not restate the code: the classifier against the Thumb instructions' meaning;
the trace's per-layer instruction counts against `run`'s own (SysTick under -icount, an
independent count of the same execution); the cycles per instruction within what the cores
can do; and the CLI's output.
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

from tinycompile import api
from tinycompile.cli import main
from tinycompile.estimate import estimate
from tinycompile.estimate.cost import classify

DIGITS = ROOT / "examples" / "digits.tflite"


@pytest.fixture(autouse=True)
def _estimates_on(monkeypatch) -> None:
    monkeypatch.setenv("TINYCOMPILE_ESTIMATE", "on")


@pytest.mark.parametrize(
    ("mnemonic", "operands", "want"),
    [
        ("smlad", "r0, r1, r2, r0", ("mul", 1)),
        ("smlabb", "r3, r4, r5, r3", ("mul", 1)),
        ("muls", "r0, r1", ("mul", 1)),
        ("mls", "r0, r1, r2, r3", ("mul", 1)),
        ("umull", "r0, r1, r2, r3", ("mul", 1)),
        ("ldr.w", "r3, [r1, #4]!", ("load", 1)),
        ("ldrsb", "r2, [r0, r1]", ("load", 1)),
        ("strb.w", "r3, [r5, #1]!", ("store", 1)),
        ("ldmia.w", "r0!, {r1, r2, r3, r4}", ("load_n", 4)),
        ("push", "{r4, r5, r6, r7, lr}", ("store_n", 5)),
        ("stmdb", "sp!, {r4-r11, lr}", ("store_n", 9)),
        ("pop", "{r4, r5, pc}", ("ret", 3)),
        ("pop", "{r4, r5}", ("load_n", 2)),
        ("ldrd", "r2, r3, [sp, #8]", ("load_n", 2)),
        ("bx", "lr", ("ret", 1)),
        ("bl", "8000120 <tc_x>", ("call", 1)),
        ("bne.n", "80002d6 <f+0x1f2>", ("branch", 1)),
        ("b.w", "8000300", ("branch", 1)),
        ("cbz", "r3, 8000040", ("branch", 1)),
        ("ble", "8000010", ("branch", 1)),
        ("bic", "r3, r3, #7", ("alu", 1)),
        ("movge", "r3, #127", ("alu", 1)),
        ("blt", "8000010", ("branch", 1)),
        ("sxtb16", "r1, r2", ("alu", 1)),
        ("sdiv", "r0, r1, r2", ("div", 1)),
    ],
)
def test_classify_thumb_instructions(mnemonic: str, operands: str, want: tuple) -> None:
    assert classify(mnemonic, operands) == want


@pytest.mark.parametrize("board", ["qemu-m4", "samd21", "qemu-m33"])
def test_trace_counts_what_run_counts(board: str) -> None:
    """Per layer, the instructions the trace classed equal `run`'s instruction counts (SysTick
    ticks of -icount time, converted), within the hook's timer reads and the tick conversion
    (a few dozen instructions, 0.5%)."""
    p = api.plan(str(DIGITS), board=board)
    e = estimate(p, board)
    r = api.compare(str(DIGITS), board=board, n=1)
    run_layers = [la["instructions"] for la in r.profile["layers"]]
    assert len(e.layers) == len(run_layers) == len(p.layers)
    for la, n in zip(e.layers, run_layers, strict=True):
        assert abs(la.instructions - n) <= 40 + 0.005 * n, (la, n)
    assert e.instructions > 0.99 * r.profile["instructions"] - 60


def test_cycles_per_instruction_within_what_the_cores_do() -> None:
    """M7 (dual issue) below one cycle an instruction, the M4 and M0+ (2-cycle loads, taken
    branches 2-3 cycles) above one; each at its board's clock."""
    cpi = {}
    for board in ("stm32f746", "stm32f407", "samd21"):
        e = estimate(api.plan(str(DIGITS), board=board), board)
        cpi[e.core] = e.cycles / e.instructions
        assert e.ms == pytest.approx(1e3 * e.cycles / e.clock_hz)
        assert all(la.cycles > 0 for la in e.layers if la.instructions > 20)
    assert 0.5 < cpi["cortex-m7"] < 1.0 < cpi["cortex-m4"] < 3.0
    assert 1.0 < cpi["cortex-m0plus"] < 3.0


def test_plan_prints_milliseconds(capsys) -> None:
    assert main(["plan", str(DIGITS), "--board", "stm32f746"]) == 0
    out = capsys.readouterr().out
    assert "latency on stm32f746 (cortex-m7, 216 MHz): ~" in out
    assert " ms per inference, estimated (+-" in out
    assert out.count("CONV_2D") >= 4  # the plan's table and the estimate's, two layers each
    assert main(["plan", str(DIGITS), "--board", "stm32f746", "--json"]) == 0
    lat = json.loads(capsys.readouterr().out)["latency"]
    assert lat["ms"] > 0 and lat["core"] == "cortex-m7" and len(lat["layers"]) == 5
    assert lat["ms"] == pytest.approx(sum(la["ms"] for la in lat["layers"]), rel=1e-3)


def test_plan_says_when_it_does_not_estimate(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TINYCOMPILE_ESTIMATE", "off")
    assert main(["plan", str(DIGITS), "--board", "samd21"]) == 0
    assert "latency: not estimated (TINYCOMPILE_ESTIMATE=off)" in capsys.readouterr().out
    monkeypatch.setenv("TINYCOMPILE_ESTIMATE", "on")
    assert main(["plan", str(DIGITS), "--board", "host"]) == 0
    assert "latency" not in capsys.readouterr().out
    vww = ROOT / "tests" / "models" / "vww_mobilenet.tflite"  # over the SAMD21's flash
    assert main(["plan", str(vww), "--board", "samd21"]) == 1
    assert "latency: not estimated (it does not fit)" in capsys.readouterr().out


def test_run_adds_estimated_milliseconds(capsys) -> None:
    assert main(["run", str(DIGITS), "--board", "qemu-m4", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert "est. ms" in out and "estimated on qemu-m4 (cortex-m4, " in out
    assert main(["run", str(DIGITS), "--board", "qemu-m4", "-n", "2", "--json"]) == 0
    lat = json.loads(capsys.readouterr().out)["latency"]
    assert len(lat["layers"]) == 5 and lat["ms"] > 0


def test_build_report_carries_the_estimate(tmp_path) -> None:
    """A board build's report.json and report.html hold the estimate: each layer's instructions
    (those `run` counts) and estimated ms, and the total."""
    out = tmp_path / "b"
    assert main(["build", str(DIGITS), "--board", "stm32f746", "-o", str(out)]) == 0
    lat = json.loads((out / "report.json").read_text())["latency"]
    html = (out / "report.html").read_text()
    assert lat["core"] == "cortex-m7" and len(lat["layers"]) == 5
    assert 'id="latency"' in html and "<th>est. ms</th>" in html
    for la in lat["layers"]:
        assert f'<td class="n">{la["instructions"]:,}</td><td class="n">{la["ms"]:.4f}</td>' in html
