"""Compute ops of the ONNX reader: one IR op per quantized ONNX op (either form), with the
layout change (NCHW -> NHWC) and the weights re-laid at compile time."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import Quant
from .onnx_check import accumulator_overflow
from .onnx_core import NCHW_TO_NHWC, Core, QConst, attr_of


class Emitters(Core):
    """``_emit_*``: the IR op of a normalized node, whichever form it came in."""

    def _emit_conv(self, n: Any, x: str, xq: tuple | None, w: QConst, bias: np.ndarray | None,
                   out: str, oq: tuple) -> None:  # fmt: skip
        a = self.act(x)
        if xq is not None:
            self._check_in(x, *xq)
        if len(a.onnx_shape) != 4 or w.data.ndim != 4:
            raise self.fail("only 2-D convolutions (rank-4 tensors) are supported")
        if attr_of(n, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.fail("auto_pad is not supported (explicit pads only)")
        nb, c, h, wd = a.onnx_shape
        oc, cpg, kh, kw = w.data.shape
        group = int(attr_of(n, "group", 1))
        if group < 1 or c % group or oc % group or c // group != cpg:
            raise self.fail(f"group {group} does not fit {c} input channels and weights"
                            f" {list(w.data.shape)}")  # fmt: skip
        sh, sw = attr_of(n, "strides", [1, 1])
        dh, dw = attr_of(n, "dilations", [1, 1])
        pt, pl, pb, pr = attr_of(n, "pads", [0, 0, 0, 0])
        oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
        ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
        wt = self._weights(w, oc, np.transpose(w.data, (0, 2, 3, 1)), f"{out}/weights")
        ins = [a.tid, wt]
        if bias is not None:
            ins.append(self._bias(bias, oc, out, wt))
        o = self.new_act(out, (nb, oc, oh, ow), *oq)
        self.op("ONNX_CONV", ins, [o], groups=group, stride=(sh, sw), dilation=(dh, dw),
                pads=(pt, pl, pb, pr))  # fmt: skip
        del c, cpg

    def _emit_gemm(
        self,
        n: Any,
        x: str,
        xq: tuple | None,
        w: QConst,
        trans_b: bool,
        bias: np.ndarray | None,
        out: str,
        oq: tuple,
        alpha: float = 1.0,
    ) -> None:
        a = self.act(x)
        if xq is not None:
            self._check_in(x, *xq)
        if w.data.ndim != 2:
            raise self.fail("B must be a 2-D constant")
        if len(a.onnx_shape) == 4:  # held NHWC: its last axis is not the file's
            raise self.fail("a MatMul / Gemm of a 4-D tensor is not supported")
        mat = w.data if trans_b else w.data.T  # [units, depth]
        units, depth = mat.shape
        if a.onnx_shape[-1] != depth:
            raise self.fail(f"input {list(a.onnx_shape)} does not match B's depth {depth}")
        if w.scale.size > 1 and w.axis % 2 != (0 if trans_b else 1):
            raise self.fail("B is not quantized along its output axis")
        wt = self._weights(w, units, mat, f"{out}/weights")
        ins = [a.tid, wt]
        if bias is not None:
            ins.append(self._bias(np.asarray(bias).reshape(-1), units, out, wt))
        o = self.new_act(out, (*a.onnx_shape[:-1], units), *oq)
        self.op("ONNX_GEMM", ins, [o], alpha=alpha)

    def _emit_add(
        self, n: Any, aq: tuple, bq: tuple, bconst: QConst | None, out: str, oq: tuple, u8: bool
    ) -> None:
        self._emit_binary("ONNX_ADD", n, aq, bq, bconst, out, oq, u8)

    def _emit_binary(self, kind: str, n: Any, aq: tuple, bq: tuple, bconst: QConst | None,
                     out: str, oq: tuple, u8: bool) -> None:  # fmt: skip
        a = self.act(aq[0])
        if aq[1]:
            self._check_in(*aq)
        if bconst is not None:
            if bconst.scale.size != 1:
                raise self.fail("a per-channel quantized constant B is not supported")
            shape = tuple(bconst.data.shape)
            if len(a.onnx_shape) == 4 and len(shape) >= 3 and int(np.prod(shape[-2:])) != 1:
                raise self.fail("a spatial constant B of a 4-D Add is not supported")
            q = Quant(bconst.scale[:1].copy(), bconst.zp[:1].copy())
            flat = bconst.data.astype(np.int8).reshape(-1)
            bt = self.tensor(out + "/b", (flat.size,), "int8", q, flat)
        else:
            if bq[1]:
                self._check_in(*bq)
            b = self.act(bq[0])
            if b.onnx_shape != a.onnx_shape:
                raise self.fail(f"broadcast of {list(b.onnx_shape)} to {list(a.onnx_shape)}"
                                " is not supported")  # fmt: skip
            bt = b.tid
        if len(a.onnx_shape) == 4 and bconst is not None and bconst.data.size not in (1,):
            if bconst.data.size != a.onnx_shape[1]:
                raise self.fail("constant B must be a scalar or one value per channel")
        o = self.new_act(out, a.onnx_shape, *oq)
        self.op(kind, [a.tid, bt], [o], uint8=u8)

    def _emit_concat(self, n: Any, xs: list[str], out: str, oq: tuple) -> None:
        """Inputs quantized differently from the output go through a rescaling table first
        (ONNX_REQUANT), then one CONCATENATION of equal parameters copies bytes."""
        acts = [self.act(x) for x in xs]
        rank = len(acts[0].onnx_shape)
        axis = int(attr_of(n, "axis", 0)) % max(rank, 1)
        shape = list(acts[0].onnx_shape)
        shape[axis] = sum(a.onnx_shape[axis] for a in acts)
        o = self.new_act(out, tuple(shape), *oq)
        q = self.tensors[o].quant
        ins = []
        for k, a in enumerate(acts):
            t = self.tensors[a.tid]
            if t.quant.s == q.s and t.quant.zp == q.zp:
                ins.append(a.tid)
                continue
            r = self.tensor(
                f"{out}/in{k}", t.shape, "int8", Quant(q.scale.copy(), q.zero_point.copy())
            )
            self.op("ONNX_REQUANT", [a.tid], [r])
            ins.append(r)
        ir_axis = NCHW_TO_NHWC.index(axis) if rank == 4 else axis
        self.op("CONCATENATION", ins, [o], axis=ir_axis, activation="NONE")

    def _emit_unary(self, kind: str, x: str, out: str, oq: tuple, **attrs: Any) -> None:
        a = self.act(x)
        o = self.new_act(out, a.onnx_shape, *oq[:2])
        self.op(kind, [a.tid], [o], **attrs)

    def _emit_softmax(self, n: Any, x: str, out: str, oq: tuple, opset: int) -> None:
        a = self.act(x)
        rank = len(a.onnx_shape)
        axis = int(attr_of(n, "axis", 1 if opset < 13 else -1)) % max(rank, 1)
        if rank == 4 or (axis != rank - 1 and int(np.prod(a.onnx_shape[axis + 1 :])) != 1):
            raise self.fail("Softmax is supported along the last axis of a rank < 4 tensor")
        self._emit_unary("ONNX_SOFTMAX", x, out, oq, uint8=bool(oq[2]))

    def _emit_avgpool(self, n: Any, x: str, out: str, oq: tuple) -> None:
        a = self.act(x)
        if len(a.onnx_shape) != 4:
            raise self.fail("only 2-D pooling (rank-4 tensors) is supported")
        if attr_of(n, "ceil_mode", 0) or attr_of(n, "auto_pad", b"NOTSET") not in (
            b"NOTSET",
            "NOTSET",
        ):
            raise self.fail("ceil_mode and auto_pad are not supported")
        if any(d != 1 for d in attr_of(n, "dilations", [1, 1])):
            raise self.fail("dilated AveragePool is not supported")
        kh, kw = attr_of(n, "kernel_shape", [1, 1])
        sh, sw = attr_of(n, "strides", [1, 1])
        pt, pl, pb, pr = attr_of(n, "pads", [0, 0, 0, 0])
        nb, c, h, w = a.onnx_shape
        oh = (h + pt + pb - kh) // sh + 1
        ow = (w + pl + pr - kw) // sw + 1
        o = self.new_act(out, (nb, c, oh, ow), *oq[:2])
        self.op("ONNX_AVG_POOL", [a.tid], [o], kernel=(kh, kw), stride=(sh, sw),
                pads=(pt, pl, pb, pr), include_pad=bool(attr_of(n, "count_include_pad", 0)),
                uint8=bool(oq[2]))  # fmt: skip

    def _emit_gap(self, x: str, out: str, oq: tuple) -> None:
        a = self.act(x)
        if len(a.onnx_shape) != 4:
            raise self.fail("expects a rank-4 input")
        nb, c = a.onnx_shape[:2]
        o = self.new_act(out, (nb, c, 1, 1), *oq)
        self.op("ONNX_GLOBAL_AVG_POOL", [a.tid], [o])

    def _weights(self, w: QConst, units: int, data: np.ndarray, name: str) -> int:
        """The IR weight tensor [units, ...] of a constant B / W: int8 values whose real integer
        value is ``w - zero_point``. A weight zero point is folded into the values where the
        differences fit int8 (symmetric weights, uint8 weights with zero point 128); otherwise
        each unit keeps the smallest offset that makes them fit (its own zero point), which the
        op's unit handles (uint8 weights with zero point 255, int8 ones with -13, ...)."""
        if w.scale.size not in (1, units):
            raise self.fail(f"weights have {w.scale.size} scales for {units} output channels")
        if w.zp.size not in (1, units):
            raise self.fail(f"weights have {w.zp.size} zero points for {units} output channels")
        zp = np.broadcast_to(w.zp, (units,)).astype(np.int64)
        real = data.astype(np.int64) - zp.reshape((units,) + (1,) * (data.ndim - 1))
        flat = real.reshape(units, -1)
        lo, hi = flat.min(axis=1), flat.max(axis=1)
        off = np.clip(0, hi - 127, lo + 128)  # closest to 0 that fits: |off| <= 128
        if np.any(off):  # one zero point per unit (and so one scale per unit)
            q = Quant(np.broadcast_to(w.scale, (units,)).astype(np.float32), -off, 0)
        else:
            q = Quant(w.scale.copy(), np.zeros(w.scale.size, np.int64), 0)
        stored = real - off.reshape((units,) + (1,) * (data.ndim - 1))
        arr = np.ascontiguousarray(stored.astype(np.int8))
        return self.tensor(name, arr.shape, "int8", q, arr)

    def _bias(self, b: np.ndarray, units: int, out: str, weights: int) -> int:
        """An int32 bias of one value per unit, or one value for all (a scalar C of Gemm), that
        cannot overflow the int32 accumulator with the ``weights`` tensor."""
        b = np.asarray(b).reshape(-1)
        if b.dtype != np.int32 or b.size not in (1, units):
            raise self.fail(f"bias must be {units} int32 values or one")
        b = np.broadcast_to(b, (units,))
        unit = accumulator_overflow(self.tensors[weights], b)
        if unit is not None:
            raise self.fail(f"the bias and weights of output channel {unit} can overflow the"
                            " int32 accumulator")  # fmt: skip
        return self.tensor(out + "/bias", (units,), "int32", data=b.copy())
