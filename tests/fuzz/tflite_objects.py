"""The TFLite object API (``ModelT`` of ai-edge-litert) for the object-level mutators: unpacking
and packing a model, and the parts of its first subgraph they work on."""

from __future__ import annotations

from typing import Any

_schema: Any = None


def schema() -> Any:
    """The generated TFLite schema with the object API (ModelT), from ai-edge-litert."""
    global _schema
    if _schema is None:
        import ai_edge_litert.schema_py_generated as s

        _schema = s
    return _schema


def unpack(data: bytes) -> Any:
    return schema().ModelT.InitFromPackedBuf(bytearray(data), 0)


def pack(model: Any) -> bytes:
    import flatbuffers

    b = flatbuffers.Builder(4096)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def subgraph(m: Any) -> Any:
    return m.subgraphs[0]


def operators(m: Any) -> list[Any]:
    return subgraph(m).operators or []


def activations(m: Any) -> list[int]:
    """Tensor ids produced by ops or fed as graph inputs (not constants)."""
    sg = subgraph(m)
    ids = set(int(x) for x in (sg.inputs if sg.inputs is not None else []))
    for op in operators(m):
        ids.update(int(x) for x in (op.outputs if op.outputs is not None else []))
    return sorted(i for i in ids if 0 <= i < len(sg.tensors or []))
