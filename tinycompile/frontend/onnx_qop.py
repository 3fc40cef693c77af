"""QOperator nodes of the ONNX reader: QLinearConv, QGemm, QLinearMatMul, QLinearAdd,
QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid, QLinearSoftmax,
QLinearConcat and QLinearLeakyRelu (com.microsoft), each normalized into the description the
``_emit_*`` methods (``onnx_emit``) take."""

from __future__ import annotations

from typing import Any

import numpy as np

from .onnx_core import attr_of
from .onnx_emit import Emitters


class QOperatorNodes(Emitters):
    """The QOperator node handlers."""

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
        oq = self.qparams(i[6], i[7])
        self._emit_binary("ONNX_MUL", n, (i[0], i[1], i[2]), (i[3], i[4], i[5]), b, n.output[0],
                          oq[:2], oq[2])  # fmt: skip

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

    def _QLinearLeakyRelu(self, n: Any) -> None:
        i = list(n.input) + [""] * (5 - len(n.input))
        self._check_in(i[0], i[1], i[2])
        a = self.act(i[0])
        o = self.new_act(n.output[0], a.onnx_shape, *self.qparams(i[3], i[4])[:2])
        alpha = float(np.float32(attr_of(n, "alpha", 0.01)))
        self.op("ONNX_REQUANT", [a.tid], [o], fn=("leaky_relu", alpha))
