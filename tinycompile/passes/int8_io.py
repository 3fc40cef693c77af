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

A TRANSPOSE right after the QUANTIZE (PyTorch's NCHW input made NHWC) goes into the port too:
the firmware takes the int8 tensor in the layout its first layer reads (NHWC), and the port's
``perm`` says how the file's NCHW maps to it (as for ONNX models), so the arena holds neither
the NCHW copy nor the transposition's output beside it.

A float input read by anything but one QUANTIZE, or a float output not written by a DEQUANTIZE,
cannot become int8: refused with the op and the reason (the user asked for int8 I/O).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op, Port

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
        drop.add(readers[0])
        perm = None
        after = cons.get(q, [])
        if len(after) == 1 and (perm := _layout_move(g, g.ops[after[0]])) is not None:
            drop.add(after[0])  # the caller gives the tensor in the layout the layers read
            q = g.ops[after[0]].outputs[0]
        inputs[k] = q
        ports[q] = _port(g, tid, q, perm)
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


def _layout_move(g: Graph, op: Op) -> tuple[int, ...] | None:
    """The permutation of a TRANSPOSE that only moves bytes (constant permutation, same type
    and quantization: an NCHW input made NHWC), else None."""
    if op.kind != "TRANSPOSE" or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    x, perm_t, y = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
    if perm_t.data is None or x.dtype != y.dtype or op.outputs[0] in g.outputs:
        return None
    if x.quant is None or y.quant is None or x.quant.per_channel or y.quant.per_channel:
        return None
    if (x.quant.s, x.quant.zp) != (y.quant.s, y.quant.zp):
        return None
    perm = tuple(int(p) for p in np.asarray(perm_t.data).reshape(-1))
    if sorted(perm) != list(range(len(x.shape))) or [x.shape[p] for p in perm] != list(y.shape):
        return None
    return perm


def _port(g: Graph, file_tid: int, tid: int, perm: tuple[int, ...] | None = None) -> Port:
    """What the file shows of quantized tensor ``tid``: its float tensor ``file_tid`` (whose
    axes ``perm`` makes ``tid``'s, where a TRANSPOSE was taken into the port too)."""
    old = g.ports.get(file_tid)
    shape = old.shape if old is not None else tuple(g.t(file_tid).shape)
    return Port(shape=shape, dtype="float32", qdtype=g.t(tid).dtype, perm=perm, source=file_tid)


def _refuse(g: Graph, why: str) -> CompileError:
    return CompileError(f"--int8-io: {why}", source=g.source or None)
