"""``--int8-io``: the caller gives and takes the quantized tensors directly.

A model with a float interface starts with QUANTIZE (float32 -> int8/int16) and ends with
DEQUANTIZE; on the device the float tensors cost four times the int8 bytes of arena (a 224x224x3
float input alone is 602,112 B) and the conversions cost time. ``int8_io`` drops them: the
QUANTIZE's output becomes the graph input and the DEQUANTIZE's input the graph output, so the
plan holds no float buffer. Each new input or output keeps a ``Port`` saying what the file shows
(its float tensor, ``source``): the harness feeds TFLM the float values that quantize to the
codes given (``(q - zp) * scale`` in float32 quantizes back exactly) and reads the codes back
from TFLM's float output, and ``run --inputs`` quantizes a user's float data as the file's
QUANTIZE does (half away from zero). ONNX models need nothing: their frontend already takes the
QuantizeLinear / DequantizeLinear at the boundary into ports.

A float input read by anything but one QUANTIZE, or a float output not written by a DEQUANTIZE,
cannot become int8: refused with the op and the reason (the user asked for int8 I/O).
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import CompileError
from ..ir import Graph, Port

QUANTIZED = ("int8", "int16")


def int8_io(g: Graph) -> Graph:
    """A copy of ``g`` whose float inputs and outputs are the quantized tensors next to them."""
    cons = g.consumers()
    writer = {t: i for i, op in enumerate(g.ops) for t in op.outputs}
    drop: set[int] = set()
    ports = dict(g.ports)
    inputs, outputs = list(g.inputs), list(g.outputs)
    for k, tid in enumerate(g.inputs):
        t = g.t(tid)
        if t.dtype != "float32":
            continue
        readers = cons.get(tid, [])
        op = g.ops[readers[0]] if len(readers) == 1 else None
        if op is None or op.kind != "QUANTIZE" or g.t(op.outputs[0]).dtype not in QUANTIZED:
            what = ", ".join(f"op {g.ops[i].index} {g.ops[i].kind}" for i in readers) or "nothing"
            raise _refuse(g, f"float input '{t.name}' is read by {what}, not by one QUANTIZE")
        q = op.outputs[0]
        if q in g.outputs or q in inputs:
            raise _refuse(g, f"input '{t.name}': its QUANTIZE's output is a graph output")
        inputs[k] = q
        ports[q] = _port(g, tid, q)
        drop.add(readers[0])
    for k, tid in enumerate(g.outputs):
        t = g.t(tid)
        if t.dtype != "float32":
            continue
        i = writer.get(tid)
        op = g.ops[i] if i is not None else None
        if op is None or op.kind != "DEQUANTIZE" or g.t(op.inputs[0]).dtype not in QUANTIZED:
            what = f"op {op.index} {op.kind}" if op is not None else "no op"
            raise _refuse(g, f"float output '{t.name}' is written by {what}, not a DEQUANTIZE")
        if len(cons.get(tid, [])) or op.inputs[0] in outputs or op.inputs[0] in inputs:
            raise _refuse(g, f"output '{t.name}' is read inside the model too")
        outputs[k] = op.inputs[0]
        ports[op.inputs[0]] = _port(g, tid, op.inputs[0])
        drop.add(i)
    if not drop:
        return g
    for tid in (*g.inputs, *g.outputs):
        ports.pop(tid, None)
    ops = [op for i, op in enumerate(g.ops) if i not in drop]
    return replace(g, ops=ops, inputs=inputs, outputs=outputs, ports=ports)


def _port(g: Graph, file_tid: int, tid: int) -> Port:
    """What the file shows of quantized tensor ``tid``: its float tensor ``file_tid``."""
    old = g.ports.get(file_tid)
    shape = old.shape if old is not None else tuple(g.t(file_tid).shape)
    return Port(shape=shape, dtype="float32", qdtype=g.t(tid).dtype, source=file_tid)


def _refuse(g: Graph, why: str) -> CompileError:
    return CompileError(f"--int8-io: {why}", source=g.source or None)
