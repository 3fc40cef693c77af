"""Mutators for hostile inputs: .tflite bytes, TFLite object trees, ONNX files, board TOML files.

Every mutator takes a ``random.Random`` and returns the mutant plus a short description, so a
case is reproducible from its seed and readable in a failure report. They live by kind:

- edge_values.py: the integers, dimensions, floats and hostile text they write;
- byte_mutators.py: byte-level ``m_*`` on a .tflite, aimed by flatmap.py (``mutate_bytes``);
- tflite_objects.py, tensor_mutators.py, graph_mutators.py, model_mutators.py: object-level
  ``s_*`` through the TFLite object API (``mutate_model``);
- board_mutators.py: board TOML files (``mutate_toml``);
- onnx_wire.py (protobuf- and byte-level ``w_*``, ``mutate_wire``), onnx_mutators.py and
  onnx_graph_mutators.py (``o_*`` through the ``onnx`` API, ``mutate_onnx``): .onnx files.

This module gathers their entry points.
"""

from __future__ import annotations

from .board_mutators import mutate_toml, toml_dumps
from .byte_mutators import BYTE_MUTATORS, mutate_bytes, safe_map, splice
from .model_mutators import STRUCT_MUTATORS, mutate_model
from .tflite_objects import pack, schema, unpack

__all__ = [
    "BYTE_MUTATORS",
    "STRUCT_MUTATORS",
    "mutate_bytes",
    "mutate_model",
    "mutate_toml",
    "pack",
    "safe_map",
    "schema",
    "splice",
    "toml_dumps",
    "unpack",
]
