"""Generate 16x8 models of operators TFLM runs on int8 only, which must stay refused (exit 2, one
line) rather than compile: tests/models/ops/{hardswish16,elu16}.tflite.

Run from the repository root: ``python -m tests.modelgen.ops_refused16`` (no TensorFlow needed;
the converter cannot be asked for these, so the flatbuffers are written with ``tflite_writer``).
TFLM registers HARD_SWISH and ELU for int8 (and float32) only; an int16 model of either fails
its Prepare there, so there is no reference to be bit-exact with. tests/conftest.py lists them
in INT16_REFUSED; tests/test_ops_int16.py checks the refusal.
"""

from __future__ import annotations

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
Q16 = (1.0 / 4096, 0)  # 16x8: zero point 0


def _unary16(kind: str) -> bytes:
    """int16 input -> RELU (int16, runs) -> ``kind`` (int16, refused)."""
    return write(
        [T("x", (1, 8, 8, 4), "int16", quant=Q16), T("r", (1, 8, 8, 4), "int16", quant=Q16),
         T("y", (1, 8, 8, 4), "int16", quant=Q16)],
        [Node("RELU", [0], [1]), Node(kind, [1], [2])],
        [0], [2],
    )  # fmt: skip


def build() -> dict[str, bytes]:
    return {"hardswish16": _unary16("HARD_SWISH"), "elu16": _unary16("ELU")}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, blob in build().items():
        (OUT / f"{name}.tflite").write_bytes(blob)
        print(f"wrote {OUT / name}.tflite ({len(blob)} bytes)")


if __name__ == "__main__":
    main()
