"""The ONNX / TFLite twins of bench_emulator.py (issue 19): one CNN as a quantized ONNX model and
as a TFLite model with the same integer weights, biases and quantization parameters
(tests/onnxgen/twins.py, committed in tests/models/onnx), so that the two compiled models
differ only in their requantization. Their rows come out of bench_emulator's usual runs (the
ONNX one, named cnn_twin.onnx there, compared with `run`'s ONNX reference, the TFLite one with
TFLM); this module pairs them: per core
the fast builds' instructions per inference, their ratio (target: the ONNX model within 10% of
the TFLite one) and each plan's arena (target: the same).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TWINS = [ROOT / "tests" / "models" / "onnx" / f"cnn_twin.{ext}" for ext in ("tflite", "onnx")]
TARGET = 1.10  # ONNX instructions / TFLite instructions


def pairs(results: list[Any]) -> list[dict]:
    """Per core both twins ran on: their instructions, ratio and arenas (bench_emulator's
    CoreResult rows, matched by model stem and core)."""
    by = {(r.model, r.core): r for r in results}
    out = []
    for (model, core), r in by.items():
        if model != TWINS[0].stem or r.fast is None or r.fast.error:
            continue
        o = by.get((TWINS[1].name, core))
        if o is None or o.fast is None or o.fast.error:
            continue
        t_ins, o_ins = r.fast.instructions, o.fast.instructions
        out.append(
            {
                "core": core,
                "board": r.board,
                "tflite_instructions": t_ins,
                "onnx_instructions": o_ins,
                "ratio": o_ins / t_ins if t_ins else None,
                "meets": bool(t_ins) and o_ins <= TARGET * t_ins,
                "tflite_arena": r.fast.arena,
                "onnx_arena": o.fast.arena,
                "exact": r.exact and o.exact,
            }
        )
    return out


def format_pairs(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    head = (
        f"{'core':<4} {'board':<10} {'TFLite':>12} {'ONNX':>12} {'ONNX/TFL':>8} {'<=1.10':>6} "
        f"{'arena TFL':>9} {'arena ONNX':>10} {'exact':>5}"
    )
    lines = [
        "",
        "ONNX vs TFLite twin (tests/models/onnx/cnn_twin: one CNN, the same integer weights and",
        "quantization parameters; only the requantization differs): fast builds' instructions per",
        "inference, each plan's arena (bytes); exact: ONNX against run's ONNX reference, TFLite",
        "against TFLM.",
        head,
        "-" * len(head),
    ]
    for r in rows:
        lines.append(
            f"{r['core']:<4} {r['board']:<10} {r['tflite_instructions']:>12,} "
            f"{r['onnx_instructions']:>12,} {r['ratio']:>8.3f} {'yes' if r['meets'] else 'no':>6} "
            f"{r['tflite_arena']:>9,} {r['onnx_arena']:>10,} {'yes' if r['exact'] else 'NO':>5}"
        )
    return lines
