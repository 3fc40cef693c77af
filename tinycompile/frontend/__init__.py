"""Model readers: each turns a file into the graph IR (tinycompile.ir.Graph)."""

from __future__ import annotations

from pathlib import Path

from ..errors import CompileError
from ..ir import Graph


def load_model(path: str | Path) -> Graph:
    """Read a model file, choosing the reader by content, and validate it."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise CompileError(f"cannot read model: {e.strerror}", source=str(p)) from None
    if len(data) >= 8 and data[4:8] == b"TFL3":
        from .tflite import read_tflite

        return read_tflite(data, source=str(p))
    from .onnx_model import is_onnx

    if is_onnx(data):
        from .onnx_model import read_onnx

        return read_onnx(data, source=str(p))
    raise CompileError(
        "not a TFLite flatbuffer (missing 'TFL3' identifier) nor an ONNX model; supported:"
        " .tflite, .onnx",
        source=str(p),
    )
