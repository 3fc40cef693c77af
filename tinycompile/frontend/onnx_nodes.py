"""ONNX nodes into IR ops, for both forms onnxruntime's quantizer writes.

- QOperator: QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearMul, QLinearSigmoid,
  QLinearSoftmax, QLinearAveragePool, QLinearGlobalAveragePool, QLinearConcat and int8 MaxPool /
  Flatten / Reshape / Transpose / Pad / Resize on quantized tensors.
- QDQ: a float Conv, Gemm, MatMul, Add, Mul, Sigmoid, Softmax, AveragePool, GlobalAveragePool,
  Concat (or a data-movement op) whose inputs are DequantizeLinear outputs and whose one consumer
  is a QuantizeLinear becomes the same IR op as its QOperator twin: the fusion onnxruntime
  applies (with ``session.qdqisint8allowed``; docs/onnx.md on its default x86-64 session).

Both become one description (quantized tensor names, constant weights, attributes) handed to the
``_emit_*`` methods (``onnx_emit``), which build the IR; data movement is ``onnx_moves``, the
shared state ``onnx_core``. Layout: 4-D activations are NCHW in ONNX
and NHWC in the IR (converted here, once); conv weights are re-laid OIHW -> OHWI, Gemm/MatMul
weights to [units, depth]. uint8 tensors are stored as int8 minus 128 (values and zero points):
exact for every op here, which only sees ``q - zero_point`` (QLinearAdd is told, ``uint8``).
The float interface: the QuantizeLinear of a graph input gives the IR's int8 input, the
DequantizeLinear of a graph output reads the IR's int8 output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import CompileError
from ..ir import Graph
from .onnx_core import attr_of
from .onnx_emit import Emitters
from .onnx_model import QUANTIZED_OPS, plain
from .onnx_moves import Moves

FLOAT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "GlobalAveragePool", "AveragePool", "Concat",
             "Sigmoid", "Softmax", "Relu", "Clip"}  # fmt: skip
MOVES = {"MaxPool", "Flatten", "Reshape", "Transpose", "Pad", "Resize"}  # int8 as they are
DYNAMIC = {"MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "DynamicQuantizeMatMul"}


class _Builder(Emitters, Moves):
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
        floats = {i.name: i for i in gr.input if i.name not in self.inits}
        if not any(n.op_type in QUANTIZED_OPS for n in gr.node):
            raise CompileError(
                "float (unquantized) model: quantize it with onnxruntime.quantization"
                ".quantize_static first"
            )
        self.consumers: dict[str, list[int]] = {}
        for i, n in enumerate(gr.node):
            for x in n.input:
                self.consumers.setdefault(x, []).append(i)
        inputs: list[int] = []
        for i, n in enumerate(gr.node):
            self.node, self.index = n, i
            if i in self.done or n.op_type == "Constant":
                continue
            if n.domain not in ("", "ai.onnx", "com.microsoft"):
                raise self.fail(f"domain '{plain(n.domain)}' is not supported")
            if n.op_type == "QuantizeLinear" and n.input[0] in floats:
                inputs.append(self._graph_input(n, floats[n.input[0]]))
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
        outputs = []
        for o in gr.output:
            name = self.dq.get(o.name, o.name)
            if name not in self.acts:
                self.node, self.index = None, -1
                raise CompileError(f"graph output '{plain(o.name)}' is not a quantized tensor")
            outputs.append(self.acts[name].tid)
        if not inputs:
            raise CompileError("no graph input is quantized by a QuantizeLinear")
        del onnx
        return Graph(gr.name or "model", self.tensors, self.ops, inputs, outputs)

    def _graph_input(self, n: Any, vi: Any) -> int:
        tt = vi.type.tensor_type
        dims = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value") or d.dim_value <= 0:
                raise self.fail(
                    f"input '{plain(vi.name)}' has a dynamic shape (fix every"
                    " dimension, e.g. with onnxruntime's make_dynamic_shape_fixed)"
                )
            dims.append(int(d.dim_value))
        if len(dims) not in (2, 4) and len(dims) > 4:
            raise self.fail(f"rank-{len(dims)} input is not supported")
        s, z, _ = self.qparams(n.input[1], n.input[2] if len(n.input) > 2 else None)
        return self.new_act(n.output[0], tuple(dims), s, z)

    # ------------------------------------------------------------------ QOperator nodes

    def _QLinearConv(self, n: Any) -> None:
        i = list(n.input) + [""] * (9 - len(n.input))
        w = self._const_of(i[3], i[4], i[5], 0)
        b = self.init(i[8], "bias") if i[8] else None
        self._emit_conv(n, i[0], (i[1], i[2]), w, b, n.output[0], self.qparams(i[6], i[7])[:2])

    def _QGemm(self, n: Any) -> None:
        i = list(n.input) + [""] * (9 - len(n.input))
        if attr_of(n, "transA", 0):
            raise self.fail("transA=1 is not supported")
        if not i[7]:
            raise self.fail("a QGemm with a float output is not supported")
        w = self._const_of(i[3], i[4], i[5], 0 if attr_of(n, "transB", 0) else 1)  # scales per N
        b = self.init(i[6], "bias") if i[6] else None
        alpha = float(attr_of(n, "alpha", 1.0))
        if float(attr_of(n, "beta", 1.0)) != 1.0:
            raise self.fail("beta other than 1 is not supported")
        self._emit_gemm(n, i[0], (i[1], i[2]), w, bool(attr_of(n, "transB", 0)), b,
                        n.output[0], self.qparams(i[7], i[8])[:2], alpha)  # fmt: skip

    def _QLinearMatMul(self, n: Any) -> None:
        i = list(n.input)
        w = self._const_of(i[3], i[4], i[5], 1)
        self._emit_gemm(n, i[0], (i[1], i[2]), w, False, None, n.output[0],
                        self.qparams(i[6], i[7])[:2])  # fmt: skip

    def _QLinearAdd(self, n: Any) -> None:
        i = list(n.input) + [""] * (8 - len(n.input))
        b = self._maybe_const(i[3], i[4], i[5])
        u8 = self.qparams(i[6], i[7])[2]
        self._emit_add(n, (i[0], i[1], i[2]), (i[3], i[4], i[5]), b, n.output[0],
                       self.qparams(i[6], i[7])[:2], u8)  # fmt: skip

    def _QLinearGlobalAveragePool(self, n: Any) -> None:
        if attr_of(n, "channels_last", 0):
            raise self.fail("channels_last=1 is not supported")
        i = list(n.input)
        self._check_in(i[0], i[1], i[2])
        self._emit_gap(i[0], n.output[0], self.qparams(i[3], i[4])[:2])

    def _QLinearMul(self, n: Any) -> None:
        i = list(n.input) + [""] * (8 - len(n.input))
        b = self._maybe_const(i[3], i[4], i[5])
        self._emit_binary("ONNX_MUL", n, (i[0], i[1], i[2]), (i[3], i[4], i[5]), b, n.output[0],
                          self.qparams(i[6], i[7])[:2], False)  # fmt: skip

    def _QLinearSigmoid(self, n: Any) -> None:
        i = list(n.input) + [""] * (5 - len(n.input))
        self._check_in(i[0], i[1], i[2])
        self._emit_unary("ONNX_SIGMOID", i[0], n.output[0], self.qparams(i[3], i[4])[:2])

    def _QLinearSoftmax(self, n: Any) -> None:
        i = list(n.input) + [""] * (5 - len(n.input))
        self._check_in(i[0], i[1], i[2])
        opset = int(attr_of(n, "opset", 13))
        self._emit_softmax(n, i[0], n.output[0], self.qparams(i[3], i[4]), opset)

    def _QLinearAveragePool(self, n: Any) -> None:
        i = list(n.input) + [""] * (5 - len(n.input))
        self._check_in(i[0], i[1], i[2])
        if attr_of(n, "channels_last", 0):
            raise self.fail("channels_last=1 is not supported")
        self._emit_avgpool(n, i[0], n.output[0], self.qparams(i[3], i[4]))

    def _QLinearConcat(self, n: Any) -> None:
        i = list(n.input)
        if len(i) < 5 or (len(i) - 2) % 3:
            raise self.fail(
                "expects the output's scale and zero point, then (x, scale, zp) triples"
            )
        xs = []
        for k in range(2, len(i), 3):
            self._check_in(i[k], i[k + 1], i[k + 2])
            xs.append(i[k])
        self._emit_concat(n, xs, n.output[0], self.qparams(i[0], i[1])[:2])

    # ------------------------------------------------------------------ QDQ float nodes

    def _Conv(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        w = self._qdq_const(n.input[1], "weights")
        b = self._qdq_bias(n, 2)
        out, s, z, _ = self._qdq_out(n)
        self._emit_conv(n, x, None, w, b, out, (s, z))

    def _Gemm(self, n: Any) -> None:
        if attr_of(n, "transA", 0):
            raise self.fail("transA=1 is not supported")
        if float(attr_of(n, "beta", 1.0)) != 1.0:
            raise self.fail("beta other than 1 is not supported")
        x = self._qdq_in(n.input[0])
        w = self._qdq_const(n.input[1], "weights")
        b = self._qdq_bias(n, 2)
        out, s, z, _ = self._qdq_out(n)
        self._emit_gemm(n, x, None, w, bool(attr_of(n, "transB", 0)), b, out, (s, z),
                        float(attr_of(n, "alpha", 1.0)))  # fmt: skip

    def _MatMul(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        w = self._qdq_const(n.input[1], "weights")
        out, s, z, _ = self._qdq_out(n)
        self._emit_gemm(n, x, None, w, False, None, out, (s, z))

    def _Add(self, n: Any) -> None:
        a = self._qdq_in(n.input[0])
        if n.input[1] in self.consts:
            c = self.consts[n.input[1]]
            bq: tuple = (None, c)
        else:
            bq = (self._qdq_in(n.input[1]), None)
        out, s, z, u8 = self._qdq_out(n)
        self._emit_add(n, (a, None, None), (bq[0], None, None), bq[1], out, (s, z), u8)

    def _GlobalAveragePool(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        out, s, z, _ = self._qdq_out(n)
        self._emit_gap(x, out, (s, z))

    def _Relu(self, n: Any) -> None:
        """DQ -> Relu -> Q the quantizer did not fold: a table (float max with 0)."""
        self._clamp(n, 0.0, None)

    def _Clip(self, n: Any) -> None:
        """DQ -> Clip -> Q the quantizer did not fold: a table (float clamp)."""
        lo, hi = attr_of(n, "min", None), attr_of(n, "max", None)
        for k, name in ((1, "min"), (2, "max")):
            if len(n.input) > k and n.input[k]:
                v = self.inits.get(n.input[k])
                if v is None:
                    c = self.consts.get(n.input[k])
                    if c is None:
                        raise self.fail(f"Clip {name} must be a constant")
                    v = (c.data - c.zp[0]).astype(np.float32) * c.scale[0]
                value = float(np.asarray(v, np.float32).reshape(-1)[0])
                lo, hi = (value, hi) if k == 1 else (lo, value)
        self._clamp(n, lo, hi)

    def _clamp(self, n: Any, lo: float | None, hi: float | None) -> None:
        x = self._qdq_in(n.input[0])
        out, s, z, _ = self._qdq_out(n)
        a = self.act(x)
        o = self.new_act(out, a.onnx_shape, s, z)
        self.op("ONNX_REQUANT", [a.tid], [o], clip=(lo, hi))

    def _Mul(self, n: Any) -> None:
        a = self._qdq_in(n.input[0])
        if n.input[1] in self.consts:
            bq: tuple = (None, self.consts[n.input[1]])
        else:
            bq = (self._qdq_in(n.input[1]), None)
        out, s, z, _ = self._qdq_out(n)
        self._emit_binary("ONNX_MUL", n, (a, None, None), (bq[0], None, None), bq[1], out,
                          (s, z), False)  # fmt: skip

    def _Sigmoid(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        out, s, z, _ = self._qdq_out(n)
        self._emit_unary("ONNX_SIGMOID", x, out, (s, z))

    def _Softmax(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        out, s, z, u8 = self._qdq_out(n)
        opset = next(o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx"))
        self._emit_softmax(n, x, out, (s, z, u8), opset)

    def _AveragePool(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        out, s, z, u8 = self._qdq_out(n)
        self._emit_avgpool(n, x, out, (s, z, u8))

    def _Concat(self, n: Any) -> None:
        xs = [self._qdq_in(x) for x in n.input]
        out, s, z, _ = self._qdq_out(n)
        self._emit_concat(n, xs, out, (s, z))

    def _qdq_bias(self, n: Any, k: int) -> np.ndarray | None:
        if len(n.input) <= k or not n.input[k]:
            return None
        c = self._qdq_const(n.input[k], "bias")
        if np.any(c.zp != 0):
            raise self.fail("bias with a nonzero zero point is not supported")
        return c.data.astype(np.int32)


def build(model: Any) -> Graph:
    """The IR of a quantized ONNX model."""
    return _Builder(model).run()
