"""The graph IR: plain dataclasses shared by every stage after the frontend.

Shapes are NHWC as in TFLite. Quantization is affine: ``real = scale * (q - zero_point)``,
per tensor (one scale) or per channel along ``axis``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

DTYPE_BYTES = {
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "float32": 4,
    "uint32": 4,  # TFLM's signal library (energies, filter bank channels)
    "uint64": 8,
    "bool": 1,  # TFLite's BOOL: one byte, 0 or 1
}
# element type codes of the firmware's tensor descriptions (TC_INT8 ... in tc_types.h)
DTYPE_CODES = {"int8": 1, "uint8": 2, "int16": 3, "int32": 4, "float32": 5, "bool": 6}
CTYPES = {
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "float32": "float",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "uint8_t",
}


@dataclass
class Quant:
    """Affine quantization parameters."""

    scale: np.ndarray  # float32, shape (1,) or (channels,)
    zero_point: np.ndarray  # int64, same length as scale
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1

    @property
    def s(self) -> float:
        """The per-tensor scale as a Python float (float32 value widened to double)."""
        return float(self.scale[0])

    @property
    def zp(self) -> int:
        return int(self.zero_point[0])


@dataclass
class Tensor:
    """A value in the graph: an activation (data is None), a constant, or a variable (state an
    op reads and updates in place, kept from one inference to the next: TFLite's
    ``is_variable``)."""

    id: int
    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: Quant | None = None
    data: np.ndarray | None = None
    variable: bool = False
    hidden: bool = False  # made by a pass (an op's internal state): the model file has no twin

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.size * DTYPE_BYTES[self.dtype]

    @property
    def ctype(self) -> str:
        return CTYPES[self.dtype]


@dataclass
class Op:
    """One operator.

    ``options`` is what the model file said, untyped and in the file format's own vocabulary (for
    TFLite: the builtin options table's fields in snake_case, enums as integers), or None once
    read. ``attrs`` holds the typed attributes the operator's unit derives from them (strides,
    padding, fused activation, ...; see ``tinycompile.ops.decode``).
    """

    index: int
    kind: str
    inputs: list[int]
    outputs: list[int]
    attrs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] | None = None


@dataclass(frozen=True)
class Port:
    """How the model file shows a graph input or output where that differs from its IR tensor
    (run/samples.py converts between the two; a tensor without a port is shown as it is).

    ``shape`` is the file's (ONNX: NCHW), ``perm`` the axes of the file's tensor that make the
    IR's (``ir = file.transpose(perm)``; None: the same order). ``dtype`` is what the file's
    interface carries: float32 where the file quantizes (QuantizeLinear) or dequantizes at the
    boundary, else the quantized type. ``qdtype`` is the file's quantized type of the value
    (uint8 values are held in the IR as int8 minus 128: ``offset`` -128). ``rounding`` is the
    file's float -> integer rule: "half_away" (TFLite's QUANTIZE) or "half_even" (ONNX's
    QuantizeLinear). ``view``: the shape the file's tensor is reshaped to before ``perm``
    (a float Reshape in front of the QuantizeLinear; None: ``shape``). ``source``: the file's
    tensor (a TFLite index) the port shows where that is another tensor than the IR's (``--int8-io``
    drops a TFLite QUANTIZE / DEQUANTIZE at the boundary: ``passes.int8_io``)."""

    shape: tuple[int, ...]
    dtype: str
    qdtype: str
    perm: tuple[int, ...] | None = None
    view: tuple[int, ...] | None = None
    offset: int = 0
    rounding: str = "half_away"
    source: int | None = None


@dataclass
class Graph:
    """Tensors, ops in a valid execution order, and the graph's inputs and outputs."""

    name: str
    tensors: list[Tensor]
    ops: list[Op]
    inputs: list[int]
    outputs: list[int]
    source: str = ""
    sha256: str = ""  # hex SHA-256 of the model file's bytes (the firmware's model fingerprint)
    ports: dict[int, Port] = field(default_factory=dict)  # graph inputs/outputs the file shows
    # otherwise than the IR holds them (ONNX: NCHW, float or uint8 interfaces)

    def t(self, tid: int) -> Tensor:
        return self.tensors[tid]

    def consumers(self) -> dict[int, list[int]]:
        """Map tensor id -> positions in ``ops`` of the ops reading it."""
        out: dict[int, list[int]] = {}
        for i, op in enumerate(self.ops):
            for tid in op.inputs:
                if tid >= 0:
                    out.setdefault(tid, []).append(i)
        return out
