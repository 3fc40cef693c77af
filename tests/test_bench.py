"""`make bench`'s speed table (benchmarks/bench_emulator.py) kept from rotting: run on the small
example and one core, and its marks (ratio, target, mismatches, failures, does not fit)."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest
from conftest import ROOT

pytestmark = pytest.mark.qemu

DIGITS = ROOT / "examples" / "digits.tflite"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_emulator", ROOT / "benchmarks" / "bench_emulator.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_bench_table_and_json_on_digits_samd21() -> None:
    bench = _bench()
    results = bench.bench_model(DIGITS, ["M0+"], 1)
    [r] = results
    assert r.board == "samd21" and r.exact and r.reference is None
    assert 0 < r.fast.instructions < r.portable.instructions
    text = bench.format_table(results, 1)
    row = next(ln for ln in text.splitlines() if ln.startswith("M0+ "))
    assert row.split()[1] == "samd21" and row.split()[-1] == "yes"
    assert f"{r.fast.instructions:,}" in row and f"{r.portable.instructions:,}" in row
    assert "bit-exact with TFLM: all 2 runs (1 input each" in text
    assert "issue 11, measured by the filer; not reproduced here" in text
    slow = [ln for ln in text.splitlines() if ln.startswith("  M0+ ")]
    assert len(slow) == 5 and "CONV_2D" in slow[0] and "8x8x8 -> 4x4x16 k3x3 s2" in text
    data = json.loads(json.dumps(bench.as_json(results, 1)))
    [d] = data["results"]
    assert d["fast"]["instructions"] == r.fast.instructions and d["exact"] is True
    assert data["reference"]["source"] == bench.SOURCE


def test_bench_marks_reference_ratio_and_failures() -> None:
    bench = _bench()
    ok = bench.Build(instructions=5_000_000, instructions_min=5_000_000, exact=True, inputs=1)
    ok.instructions_max = 5_000_000
    bad = bench.Build(instructions=9_000_000, instructions_min=9_000_000, inputs=1)
    bad.instructions_max, bad.mismatching_bytes = 9_000_000, 3
    fast = bench.CoreResult("kws_dscnn", "M7", "stm32f746", 2_664_768, bad, ok, reference=7.60e6)
    slow = bench.CoreResult("kws_dscnn", "M4", "stm32f407", 2_664_768, ok, bad, reference=7.58e6)
    gone = bench.CoreResult(
        "kws_dscnn",
        "M0+",
        "",
        2_664_768,
        skipped=["does not fit board samd21: SRAM"],
        reference=29.0e6,
    )
    assert fast.meets is True and slow.meets is False and gone.ratio is None
    text = bench.format_table([fast, slow, gone], 1)
    rows = {
        ln.split()[0]: ln
        for ln in text.splitlines()
        if ln.split()[:1] in [[c] for c in bench.CORES]
    }
    assert rows["M7"].split()[-1] == "NO" and " 0.66 " in rows["M7"] and " yes " in rows["M7"]
    assert " 1.19 " in rows["M4"] and " no " in rows["M4"]
    assert "does not fit board samd21: SRAM" in rows["M0+"]
    assert "NOT bit-exact with TFLM: 2 of 4 runs" in text
    assert "portable build NOT bit-exact: 3 mismatching bytes" in text
    assert "7.60 M" in rows["M7"]
    crash = bench.Build(error="firmware hard fault at pc=0x00001234")
    moved = bench.CoreResult(
        "ad_autoencoder", "M0+", "rp2040", 264_192, ok, crash, ["does not fit board samd21: flash"]
    )
    text = bench.format_table([moved], 1)
    row = next(ln for ln in text.splitlines() if ln.startswith("M0+ "))
    assert row.split()[1:4] == ["rp2040*", "5,000,000", "FAILED"] and row.split()[-1] == "FAIL"
    assert "issue 11: 0.264 M MACs" in text
    assert "fast build FAILED: firmware hard fault at pc=0x00001234" in text
    assert "does not fit board samd21: flash; run on rp2040 (same core" in text


def test_function_profile_accounts_for_the_inference() -> None:
    """benchmarks/profile_functions.py: every instruction of a run is attributed to a function,
    the inference's kernels among them (the M0+ paths on the samd21), and the run holds at
    least the inference that the harness counts."""
    spec = importlib.util.spec_from_file_location(
        "profile_functions", ROOT / "benchmarks" / "profile_functions.py"
    )
    assert spec is not None and spec.loader is not None
    prof = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prof)
    counts, macs = prof.profile(DIGITS, "samd21")
    harness = _bench().run_build(DIGITS, "samd21", 1, portable=False, shapes=["?"] * 5)
    total = sum(counts.values())
    assert macs == 25_600 and total > harness.instructions > 0
    assert counts["tc_m0_dot14"] > 0 and counts["tc_fc_m0_dot4"] > 0
    assert not any(name.endswith("_dsp") for name in counts)  # an ARMv6-M build
    kernels = sum(n for name, n in counts.items() if name.startswith("tc_") and "m0" in name)
    assert kernels > harness.instructions / 2
    text = prof.format_table(counts, macs, 5)
    assert f"{total:,}" in text.splitlines()[-1] and "tc_m0_dot14" in text
