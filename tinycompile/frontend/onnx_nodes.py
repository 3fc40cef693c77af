"""ONNX graphs into the IR, for both forms onnxruntime's quantizer writes: the walk over the
nodes, and the graph's inputs and outputs as the file shows them (``ir.Port``).

The node handlers are mixins: QOperator nodes (``onnx_qop``), QDQ groups (``onnx_qdq``: a float
op whose inputs are DequantizeLinear outputs and whose one consumer is a QuantizeLinear becomes
its QOperator twin's IR op, the fusion onnxruntime applies with ``session.qdqisint8allowed``;
docs/onnx.md on its default x86-64 session), data movement (``onnx_moves``, ``onnx_slices``);
they normalize a node into the description the ``_emit_*`` methods (``onnx_emit``) build the IR
from; the shared state is ``onnx_core``. Layout: 4-D activations are NCHW in ONNX and NHWC in
the IR (converted here, once); conv weights are re-laid OIHW -> OHWI, Gemm/MatMul weights to
[units, depth]. uint8 tensors are stored as int8 minus 128 (values and zero points): exact for
every op here, which only sees ``q - zero_point`` (QLinearAdd is told, ``uint8``).

Graph inputs: a float input quantized by a QuantizeLinear (perhaps after Reshape-like nodes, as
``quant_pre_process`` writes in front of a Gemm) gives the IR's int8 input, which the host
quantizes as the file does; an int8/uint8 input (its QuantizeLinear removed) is taken with the
parameters its first quantized reader uses. Outputs: a DequantizeLinear's float output reads the
IR's int8 output; an int8/uint8 output is the IR's.
"""

from __future__ import annotations

from typing import Any

from ..errors import CompileError
from ..ir import Graph, Port
from .onnx_core import NCHW_TO_NHWC
from .onnx_model import DOMAINS, QUANTIZED_OPS, plain
from .onnx_moves import Moves
from .onnx_qdq import QdqNodes
from .onnx_qop import QOperatorNodes
from .onnx_shapes import RESHAPES, reshaped
from .onnx_slices import Slices

FLOAT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "GlobalAveragePool", "AveragePool", "Concat",
             "Sigmoid", "Softmax", "Relu", "Clip", "LeakyRelu", "HardSigmoid",
             "HardSwish"}  # fmt: skip
MOVES = {"MaxPool", "Flatten", "Reshape", "Transpose", "Pad", "Resize", "Squeeze", "Unsqueeze",
         "Split", "Slice", "Gather", "GlobalMaxPool"}  # fmt: skip
DYNAMIC = {"MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "DynamicQuantizeMatMul"}
INT8, UINT8 = 3, 2  # TensorProto element types
_ONE = {"QLinearConv", "QGemm", "QLinearGlobalAveragePool", "QLinearAveragePool",
        "QLinearSigmoid", "QLinearSoftmax", "QLinearLeakyRelu", "DequantizeLinear"}  # fmt: skip
_TWO = {"QLinearMatMul", "QLinearAdd", "QLinearMul"}


def qparam_slots(op_type: str, n_inputs: int) -> list[tuple[int, int, int]]:
    """The (value, scale, zero point) input slots of a quantized op with ``n_inputs`` inputs."""
    if op_type in _ONE:
        return [(0, 1, 2)]
    if op_type in _TWO:
        return [(0, 1, 2), (3, 4, 5)]
    if op_type == "QLinearConcat":
        return [(k, k + 1, k + 2) for k in range(2, n_inputs, 3)]
    return []


class _Builder(QOperatorNodes, QdqNodes, Moves, Slices):
    """The walk over the graph and the node handlers of both forms."""

    # ------------------------------------------------------------------ the walk

    def run(self) -> Graph:
        import onnx
        from onnx import numpy_helper

        gr = self.model.graph
        for t in gr.initializer:
            self.inits[t.name] = numpy_helper.to_array(t)
        for n in gr.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        self.inits[n.output[0]] = numpy_helper.to_array(a.t)
        graph_inputs = [i for i in gr.input if i.name not in self.inits]
        if not any(n.op_type in QUANTIZED_OPS for n in gr.node):
            raise CompileError(
                "float (unquantized) model: quantize it with onnxruntime.quantization"
                ".quantize_static first"
            )
        self.consumers: dict[str, list[int]] = {}
        for i, n in enumerate(gr.node):
            for x in n.input:
                self.consumers.setdefault(x, []).append(i)
        floats: dict[str, tuple[Any, tuple[int, ...] | None]] = {}  # name -> input, reshaped
        tids: dict[str, int] = {}  # graph input name -> IR tensor
        for vi in graph_inputs:
            elem = vi.type.tensor_type.elem_type
            if elem in (INT8, UINT8):
                tids[vi.name] = self._raw_input(vi)
            else:
                floats[vi.name] = (vi, None)
        for i, n in enumerate(gr.node):
            self.node, self.index = n, i
            if i in self.done or n.op_type == "Constant":
                continue
            if n.domain not in DOMAINS:
                raise self.fail(f"domain '{plain(n.domain)}' is not supported")
            if n.op_type in RESHAPES and n.input[0] in floats:  # before the QuantizeLinear
                vi, shape = floats[n.input[0]]
                try:
                    new = reshaped(n, shape or self._dims(vi), self.init)
                except ValueError as e:
                    raise self.fail(str(e)) from None
                floats[n.output[0]] = (vi, new)
                continue
            if n.op_type == "QuantizeLinear" and n.input[0] in floats:
                vi, shape = floats[n.input[0]]
                if vi.name in tids:
                    raise self.fail(f"input '{plain(vi.name)}' is quantized twice")
                tids[vi.name] = self._graph_input(n, vi, shape)
                continue
            handler = getattr(self, "_" + n.op_type, None)
            if n.op_type in DYNAMIC:
                raise self.fail("dynamic quantization (quantize_dynamic) is not supported:"
                                " quantize with quantize_static")  # fmt: skip
            if handler is None:
                if n.op_type in FLOAT_OPS or n.op_type in MOVES:
                    raise self.fail(
                        "float (unquantized) node: its inputs are not dequantized"
                        " quantized tensors and its output is not quantized"
                    )
                raise self.fail(f"operator {plain(n.op_type)} is not supported")
            handler(n)
            self.flush()
        self.node, self.index = None, -1
        unused = [vi.name for vi in graph_inputs if vi.name not in tids]
        if unused:
            raise CompileError(
                f"graph input '{plain(unused[0])}' is neither quantized by a QuantizeLinear"
                " nor an int8/uint8 tensor"
            )
        inputs = [tids[vi.name] for vi in graph_inputs]  # the file's order
        outputs = []
        for o in gr.output:
            name = self.dq.get(o.name, o.name)
            if name not in self.acts:
                raise CompileError(f"graph output '{plain(o.name)}' is not a quantized tensor")
            tid = self.acts[name].tid
            outputs.append(tid)
            if name != o.name:  # a DequantizeLinear's float output
                dq = next(n for n in gr.node if o.name in n.output)
                u8 = self.qparams(dq.input[1], dq.input[2] if len(dq.input) > 2 else None)[2]
                self.port(tid, "float32", u8)
            else:
                self.port(tid, None, o.type.tensor_type.elem_type == UINT8)
        if not inputs:
            raise CompileError("the graph has no inputs")
        del onnx
        g = Graph(gr.name or "model", self.tensors, self.ops, inputs, outputs)
        g.ports = self.ports
        return g

    def _dims(self, vi: Any) -> tuple[int, ...]:
        """A graph input's fixed shape (a dynamic one is refused)."""
        dims = []
        for d in vi.type.tensor_type.shape.dim:
            if not d.HasField("dim_value") or d.dim_value <= 0:
                raise self.fail(
                    f"input '{plain(vi.name)}' has a dynamic shape (fix every"
                    " dimension, e.g. with onnxruntime's make_dynamic_shape_fixed)"
                )
            dims.append(int(d.dim_value))
        if len(dims) > 6:
            raise self.fail(f"rank-{len(dims)} input is not supported")
        return tuple(dims)

    def _graph_input(self, n: Any, vi: Any, view: tuple[int, ...] | None) -> int:
        """A float graph input and its QuantizeLinear: the IR's input is the quantized tensor
        (the host quantizes as QuantizeLinear does: round half to even). ``view``: the shape
        float Reshape-like nodes gave the input before the QuantizeLinear."""
        dims = self._dims(vi)
        self.check_qdq(n)
        s, z, u8 = self.qparams(n.input[1], n.input[2] if len(n.input) > 2 else None)
        tid = self.new_act(n.output[0], view or dims, s, z)
        self.port(tid, "float32", u8, file_shape=dims)
        return tid

    def _raw_input(self, vi: Any) -> int:
        """An int8/uint8 graph input (the QuantizeLinear removed, as exporters and users do):
        its scale and zero point are those its first quantized consumer reads it with."""
        self.node, self.index = None, -1
        dims = self._dims(vi)
        values, seen = [vi.name], set()
        while values:  # through data movement to the first op that reads it quantized
            v = values.pop(0)
            for i in self.consumers.get(v, []):
                n = self.model.graph.node[i]
                if n.op_type in MOVES and n.input[0] == v and i not in seen:
                    seen.add(i)
                    values.append(n.output[0])
                    continue
                for x, s, z in qparam_slots(n.op_type, len(n.input)):
                    if x >= len(n.input) or n.input[x] != v or s >= len(n.input):
                        continue
                    self.node, self.index = n, i
                    sc, zp, u8 = self.qparams(n.input[s], n.input[z] if z < len(n.input) else None)
                    want = UINT8 if u8 else INT8
                    if vi.type.tensor_type.elem_type != want:
                        raise self.fail(f"input '{plain(vi.name)}' is not of its zero point's type")
                    tid = self.new_act(vi.name, dims, sc, zp)
                    self.port(tid, None, u8)
                    return tid
        raise CompileError(f"int8 input '{plain(vi.name)}' is read by no quantized operator")

    def port(self, tid: int, dtype: str | None, u8: bool,
             file_shape: tuple[int, ...] | None = None) -> None:  # fmt: skip
        """Record how the file shows graph input/output ``tid``: ``dtype`` float32 where the
        file quantizes or dequantizes at the boundary (None: the quantized values), ``u8`` its
        quantized type is uint8; ``file_shape`` where the file's tensor is reshaped first."""
        shape = next(a.onnx_shape for a in self.acts.values() if a.tid == tid)
        qdtype = "uint8" if u8 else "int8"
        self.ports[tid] = Port(
            shape=file_shape or shape,
            dtype=dtype or qdtype,
            qdtype=qdtype,
            perm=NCHW_TO_NHWC if len(shape) == 4 else None,
            view=shape if file_shape is not None and file_shape != shape else None,
            offset=-128 if qdtype == "uint8" else 0,
            rounding="half_even",
        )


def build(model: Any) -> Graph:
    """The IR of a quantized ONNX model."""
    return _Builder(model).run()
