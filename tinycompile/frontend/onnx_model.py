"""ONNX reader: a model quantized by onnxruntime's quantizer (QOperator or QDQ form) into the IR.

Loading and validation live here (opset range, external data, dynamic shapes, float models);
the node-by-node translation is ``onnx_nodes``. The ``onnx`` package is imported lazily (only
ONNX users pay for it). Every refusal is one CompileError line naming the node and its type.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..errors import CompileError
from ..ir import Graph

OPSET_MIN, OPSET_MAX = 10, 21  # default-domain opsets accepted
MS_DOMAIN = "com.microsoft"
QUANTIZED_OPS = {
    "QuantizeLinear", "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul",
    "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSigmoid", "QLinearConcat",
    "QLinearSoftmax", "ConvInteger", "MatMulInteger",
}  # fmt: skip


def plain(text: str) -> str:
    """A model-supplied name fit for a one-line message (printable ASCII, at most 40 chars)."""
    return re.sub(r"[^\x20-\x7e]", "?", text)[:40]


def is_onnx(data: bytes) -> bool:
    """Whether ``data`` looks like a serialized ONNX ModelProto: a protobuf whose first field is
    ``ir_version`` (field 1, varint) and which names a graph (field 7)."""
    return len(data) >= 2 and data[0] == 0x08 and b"\x3a" in data[:4096]


def read_onnx(data: bytes, *, source: str = "<model>") -> Graph:
    """Parse a quantized ONNX model into the IR."""
    try:
        import onnx
    except ImportError:
        raise CompileError("reading ONNX models needs the 'onnx' package", source=source) from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf raises DecodeError and others on corrupt input
        raise CompileError(f"malformed ONNX protobuf ({type(e).__name__})", source=source) from None
    try:
        _load_external(model, Path(source).parent if source != "<model>" else None)
        _check_opsets(model)
        from .onnx_nodes import build

        g = build(model)
    except CompileError as e:
        raise e.at(source=source) from None
    g.source = source
    g.sha256 = hashlib.sha256(data).hexdigest()
    return g


def _load_external(model: Any, base: Path | None) -> None:
    """Load initializers stored in external data files; refuse a missing file by name."""
    from onnx import TensorProto
    from onnx.external_data_helper import load_external_data_for_model

    ext = [t for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    if not ext:
        return
    for t in ext:
        loc = next((e.value for e in t.external_data if e.key == "location"), "")
        if base is None or not loc or not (base / loc).is_file():
            raise CompileError(
                f"initializer '{plain(t.name)}' is in external data file '{plain(loc)}',"
                " which is missing"
            )
    load_external_data_for_model(model, str(base))


def _check_opsets(model: Any) -> None:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and not OPSET_MIN <= o.version <= OPSET_MAX:
            raise CompileError(
                f"opset {o.version} is out of the supported range {OPSET_MIN}..{OPSET_MAX}"
            )
        if o.domain not in ("", "ai.onnx", MS_DOMAIN):
            raise CompileError(f"operator domain '{plain(o.domain)}' is not supported")
