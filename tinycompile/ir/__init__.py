"""The graph IR shared by every stage after the frontend: plain dataclasses (``graph``) and
the structural checks every well-formed graph passes (``validate``)."""

from .graph import CTYPES, DTYPE_BYTES, DTYPE_CODES, Graph, Op, Port, Quant, Tensor
from .validate import problems, validate

__all__ = [
    "CTYPES", "DTYPE_BYTES", "DTYPE_CODES", "Graph", "Op", "Port", "Quant", "Tensor", "problems",
    "validate",
]  # fmt: skip
