"""A small TFLite flatbuffer writer, for test models the converter cannot make (it turns
tf.squeeze and tf.expand_dims into RESHAPE) and need no TensorFlow. Built on the ``tflite``
package's generated builder functions; it writes schema version 3 with one subgraph."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import flatbuffers
import numpy as np
import tflite

TYPES = {
    "int8": tflite.TensorType.INT8,
    "int16": tflite.TensorType.INT16,
    "int32": tflite.TensorType.INT32,
    "int64": tflite.TensorType.INT64,
    "float32": tflite.TensorType.FLOAT32,
    "uint32": tflite.TensorType.UINT32,
    "uint64": tflite.TensorType.UINT64,
    "bool": tflite.TensorType.BOOL,
}


@dataclass
class T:
    """A tensor: quantized ones carry (scale, zero point); constants carry data; variables
    (``is_variable``) are state an operator reads and updates in place. Per-channel quantized
    ones carry lists of scales and zero points and their axis (``quant_axis``)."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "int8"
    quant: tuple[float, int] | tuple[list[float], list[int]] | None = None
    data: np.ndarray | None = None
    variable: bool = False  # state tensors (LSTM, SVDF): written by no operator
    quant_axis: int = 0


@dataclass
class Node:
    """An operator: builtin name (or ``CUSTOM:code``), tensor indices, and its options (type
    name, writer)."""

    op: str
    inputs: list[int]
    outputs: list[int]
    options: str = "NONE"
    write_options: Callable[[flatbuffers.Builder], int] | None = None
    custom_options: bytes | None = None  # a custom op's flexbuffer (``flexbuffers.Dumps``)


def _ivec(b: flatbuffers.Builder, start: Callable, values: list[int]) -> int:
    start(b, len(values))
    for v in reversed(values):
        b.PrependInt32(int(v))
    return b.EndVector()


def _fvec(b: flatbuffers.Builder, start: Callable, values: list[float]) -> int:
    start(b, len(values))
    for v in reversed(values):
        b.PrependFloat32(float(v))
    return b.EndVector()


def _lvec(b: flatbuffers.Builder, start: Callable, values: list[int]) -> int:
    start(b, len(values))
    for v in reversed(values):
        b.PrependInt64(int(v))
    return b.EndVector()


def _tables(b: flatbuffers.Builder, start: Callable, offsets: list[int]) -> int:
    start(b, len(offsets))
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def write(tensors: list[T], nodes: list[Node], inputs: list[int], outputs: list[int]) -> bytes:
    b = flatbuffers.Builder(1024)
    # buffers: 0 is the empty sentinel, then one per constant
    buf_offsets = [(tflite.BufferStart(b), tflite.BufferEnd(b))[1]]
    buffer_of: dict[int, int] = {}
    for i, t in enumerate(tensors):
        if t.data is None:
            continue
        raw = np.ascontiguousarray(t.data, dtype=t.dtype).tobytes()
        data = b.CreateByteVector(raw)
        tflite.BufferStart(b)
        tflite.BufferAddData(b, data)
        buffer_of[i] = len(buf_offsets)
        buf_offsets.append(tflite.BufferEnd(b))
    t_offsets = []
    for i, t in enumerate(tensors):
        name = b.CreateString(t.name)
        shape = _ivec(b, tflite.TensorStartShapeVector, list(t.shape))
        q = None
        if t.quant is not None:
            scales, zps = t.quant
            scales = list(scales) if isinstance(scales, (list, np.ndarray)) else [scales]
            zps = list(zps) if isinstance(zps, (list, np.ndarray)) else [zps]
            sc = _fvec(b, tflite.QuantizationParametersStartScaleVector, scales)
            zp = _lvec(b, tflite.QuantizationParametersStartZeroPointVector, zps)
            tflite.QuantizationParametersStart(b)
            tflite.QuantizationParametersAddScale(b, sc)
            tflite.QuantizationParametersAddZeroPoint(b, zp)
            if len(scales) > 1:
                tflite.QuantizationParametersAddQuantizedDimension(b, t.quant_axis)
            q = tflite.QuantizationParametersEnd(b)
        tflite.TensorStart(b)
        tflite.TensorAddShape(b, shape)
        tflite.TensorAddType(b, TYPES[t.dtype])
        tflite.TensorAddBuffer(b, buffer_of.get(i, 0))
        tflite.TensorAddName(b, name)
        if t.variable:
            tflite.TensorAddIsVariable(b, True)
        if q is not None:
            tflite.TensorAddQuantization(b, q)
        t_offsets.append(tflite.TensorEnd(b))
    kinds = sorted({n.op for n in nodes})
    code_offsets = []
    for k in kinds:
        custom = b.CreateString(k.split(":", 1)[1]) if k.startswith("CUSTOM:") else None
        code = getattr(tflite.BuiltinOperator, k.split(":")[0])
        tflite.OperatorCodeStart(b)
        if custom is not None:
            tflite.OperatorCodeAddCustomCode(b, custom)
        tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
        tflite.OperatorCodeAddBuiltinCode(b, code)
        tflite.OperatorCodeAddVersion(b, 1)
        code_offsets.append(tflite.OperatorCodeEnd(b))
    op_offsets = []
    for n in nodes:
        opts = n.write_options(b) if n.write_options is not None else None
        custom_opts = b.CreateByteVector(n.custom_options) if n.custom_options else None
        ins = _ivec(b, tflite.OperatorStartInputsVector, n.inputs)
        outs = _ivec(b, tflite.OperatorStartOutputsVector, n.outputs)
        tflite.OperatorStart(b)
        tflite.OperatorAddOpcodeIndex(b, kinds.index(n.op))
        tflite.OperatorAddInputs(b, ins)
        tflite.OperatorAddOutputs(b, outs)
        if opts is not None:
            tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, n.options))
            tflite.OperatorAddBuiltinOptions(b, opts)
        if custom_opts is not None:
            tflite.OperatorAddCustomOptions(b, custom_opts)
        op_offsets.append(tflite.OperatorEnd(b))
    tv = _tables(b, tflite.SubGraphStartTensorsVector, t_offsets)
    iv = _ivec(b, tflite.SubGraphStartInputsVector, inputs)
    ov = _ivec(b, tflite.SubGraphStartOutputsVector, outputs)
    opv = _tables(b, tflite.SubGraphStartOperatorsVector, op_offsets)
    sg_name = b.CreateString("main")
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, tv)
    tflite.SubGraphAddInputs(b, iv)
    tflite.SubGraphAddOutputs(b, ov)
    tflite.SubGraphAddOperators(b, opv)
    tflite.SubGraphAddName(b, sg_name)
    sg = tflite.SubGraphEnd(b)
    codes = _tables(b, tflite.ModelStartOperatorCodesVector, code_offsets)
    sgs = _tables(b, tflite.ModelStartSubgraphsVector, [sg])
    bufs = _tables(b, tflite.ModelStartBuffersVector, buf_offsets)
    desc = b.CreateString("tinycompile test model (tests/modelgen/tflite_writer.py)")
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, codes)
    tflite.ModelAddSubgraphs(b, sgs)
    tflite.ModelAddBuffers(b, bufs)
    tflite.ModelAddDescription(b, desc)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())
