"""QDQ nodes of the ONNX reader: a float Conv, Gemm, MatMul, Add, Mul, Sigmoid, Softmax,
AveragePool, GlobalAveragePool or Concat whose inputs are DequantizeLinear outputs and whose one
consumer is a QuantizeLinear becomes the same IR op as its QOperator twin (the fusion onnxruntime
applies with ``session.qdqisint8allowed``); an elementwise float function between them (Relu,
Clip, LeakyRelu, HardSigmoid, HardSwish) becomes a table."""

from __future__ import annotations

from typing import Any

import numpy as np

from .onnx_core import attr_of
from .onnx_emit import Emitters


class QdqNodes(Emitters):
    """The QDQ float-node handlers."""

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
        self._table(n, clip=(lo, hi))

    def _table(self, n: Any, **attrs: Any) -> None:
        """DQ -> an elementwise float function -> Q: a 256-entry table (``ONNX_REQUANT``) of
        ``Q(f(DQ(q)))``, each step in float32 as onnxruntime computes it."""
        x = self._qdq_in(n.input[0])
        out, s, z, _ = self._qdq_out(n)
        a = self.act(x)
        o = self.new_act(out, a.onnx_shape, s, z)
        self.op("ONNX_REQUANT", [a.tid], [o], **attrs)

    def _LeakyRelu(self, n: Any) -> None:
        """DQ -> LeakyRelu -> Q: onnxruntime fuses it into QLinearLeakyRelu (a table of
        ``x >= 0 ? x : alpha * x``)."""
        self._table(n, fn=("leaky_relu", float(np.float32(attr_of(n, "alpha", 0.01)))))

    def _HardSigmoid(self, n: Any) -> None:
        """DQ -> HardSigmoid -> Q (left in float by the quantizer; onnxruntime computes
        ``max(0, min(1, alpha * x + beta))`` in float32): a table."""
        alpha = float(np.float32(attr_of(n, "alpha", 0.2)))
        beta = float(np.float32(attr_of(n, "beta", 0.5)))
        self._table(n, fn=("hard_sigmoid", alpha, beta))

    def _HardSwish(self, n: Any) -> None:
        """DQ -> HardSwish -> Q: ``x * HardSigmoid(x)`` with alpha 1/6 and beta 0.5 (its
        function body, which onnxruntime runs in float32): a table."""
        self._table(n, fn=("hard_swish",))

    def _Mul(self, n: Any) -> None:
        a = self._qdq_in(n.input[0])
        if n.input[1] in self.consts:
            bq: tuple = (None, self.consts[n.input[1]])
        else:
            bq = (self._qdq_in(n.input[1]), None)
        out, s, z, u8 = self._qdq_out(n)
        self._emit_binary("ONNX_MUL", n, (a, None, None), (bq[0], None, None), bq[1], out,
                          (s, z), u8)  # fmt: skip

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
