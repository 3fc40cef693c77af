"""ONNX reader: a model quantized by onnxruntime's quantizer (QOperator or QDQ form) into the IR.

Loading and validation live here (opset range, external data, dynamic shapes, float models);
the node-by-node translation is ``onnx_nodes``. The ``onnx`` package is imported lazily (only
ONNX users pay for it). Every refusal is one CompileError line naming the node and its type.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from pathlib import Path
from typing import Any

from ..errors import CompileError
from ..ir import Graph

OPSET_MIN = 10  # the oldest default-domain opset accepted; the newest is the installed onnx's
MS_DOMAIN = "com.microsoft"
DOMAINS = ("", "ai.onnx", MS_DOMAIN)  # what a node may use; other imported domains are ignored
QUANTIZED_OPS = {
    "QuantizeLinear", "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul",
    "QLinearGlobalAveragePool", "QLinearAveragePool", "QLinearSigmoid", "QLinearConcat",
    "QLinearSoftmax", "ConvInteger", "MatMulInteger",
}  # fmt: skip


def plain(text: str | bytes) -> str:
    """A model-supplied name fit for a one-line message (printable ASCII, at most 40 chars);
    protobuf hands over a string field that is not UTF-8 as ``bytes``."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("ascii", "replace")
    return re.sub(r"[^\x20-\x7e]", "?", str(text))[:40]


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
        from .onnx_check import check_model
        from .onnx_nodes import build

        check_model(model)  # every field the reader trusts, checked against the data

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
        try:
            found = isinstance(loc, str) and bool(loc) and (base / loc).is_file()  # type: ignore[operator]
        except (TypeError, ValueError, OSError):  # no base, NUL in the name, ...
            found = False
        if not found:
            raise CompileError(
                f"initializer '{plain(t.name)}' is in external data file '{plain(loc)}',"
                " which is missing"
            )
    try:  # the onnx package checks locations, offsets and lengths (and warns: kept quiet)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load_external_data_for_model(model, str(base))
    except Exception as e:  # noqa: BLE001 - any refusal of the onnx package
        raise CompileError(f"external data cannot be loaded ({type(e).__name__})") from None


def opset_max() -> int:
    """The newest default-domain opset accepted: the newest the installed ``onnx`` defines (its
    schemas are what the reader's attribute defaults come from)."""
    import onnx

    return int(onnx.defs.onnx_opset_version())


def _check_opsets(model: Any) -> None:
    """The default domain's opset must be one the reader knows. Imports of other domains are
    fine as long as no node uses them (``quant_pre_process`` adds ``ai.onnx.ml`` and others);
    a node of an unsupported domain is refused where it stands (``onnx_nodes``)."""
    hi = opset_max()
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and not OPSET_MIN <= o.version <= hi:
            raise CompileError(f"opset {o.version} is out of the supported range {OPSET_MIN}..{hi}")
