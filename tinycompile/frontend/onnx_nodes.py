"""ONNX nodes into IR ops, for both forms onnxruntime's quantizer writes.

- QOperator: QLinearConv, QGemm, QLinearMatMul, QLinearAdd, QLinearGlobalAveragePool and int8
  MaxPool / Flatten / Reshape / Transpose on quantized tensors.
- QDQ: a float Conv, Gemm, MatMul, Add, GlobalAveragePool (or a data-movement op) whose inputs
  are DequantizeLinear outputs and whose one consumer is a QuantizeLinear becomes the same IR op
  as its QOperator twin: this is the fusion onnxruntime's default session applies.

Both become one description (``_Q``: quantized tensor names, constant weights, attributes)
handed to the ``_emit_*`` methods, which build the IR. Layout: 4-D activations are NCHW in ONNX
and NHWC in the IR (converted here, once); conv weights are re-laid OIHW -> OHWI, Gemm/MatMul
weights to [units, depth]. uint8 tensors are stored as int8 minus 128 (values and zero points):
exact for every op here, which only sees ``q - zero_point`` (QLinearAdd is told, ``uint8``).
The float interface: the QuantizeLinear of a graph input gives the IR's int8 input, the
DequantizeLinear of a graph output reads the IR's int8 output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op, Quant, Tensor
from .onnx_model import QUANTIZED_OPS, plain

FLOAT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "GlobalAveragePool", "AveragePool", "Concat",
             "Sigmoid", "Softmax"}  # fmt: skip
MOVES = {
    "MaxPool",
    "Flatten",
    "Reshape",
    "Transpose",
    "Pad",
}  # int8 as they are (no requantization)
NCHW_TO_NHWC = (0, 2, 3, 1)
DYNAMIC = {"MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "DynamicQuantizeMatMul"}


@dataclass
class _Act:
    """A quantized activation: its IR tensor and its ONNX (NCHW) shape."""

    tid: int
    onnx_shape: tuple[int, ...]


@dataclass
class _Const:
    """A constant quantized tensor (int values as stored, model scale and zero point)."""

    data: np.ndarray
    scale: np.ndarray
    zp: np.ndarray
    axis: int = 0


@dataclass
class _Builder:
    model: Any
    tensors: list[Tensor] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    acts: dict[str, _Act] = field(default_factory=dict)
    consts: dict[str, _Const] = field(default_factory=dict)  # DequantizeLinear of constants
    dq: dict[str, str] = field(default_factory=dict)  # float name -> quantized activation name
    inits: dict[str, np.ndarray] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)  # node indices consumed by a fusion
    node: Any = None
    index: int = 0

    # ------------------------------------------------------------------ errors and tensors

    def fail(self, reason: str) -> CompileError:
        n = self.node
        name = plain(n.name) if n is not None and n.name else ""
        where = f"node '{name}': " if name else ""
        return CompileError(where + reason, op_index=self.index, op_kind=n.op_type if n else None)

    def tensor(self, name: str, shape: tuple[int, ...], dtype: str, quant: Quant | None = None,
               data: np.ndarray | None = None) -> int:  # fmt: skip
        tid = len(self.tensors)
        self.tensors.append(Tensor(tid, name, tuple(int(d) for d in shape), dtype, quant, data))
        return tid

    def op(self, kind: str, ins: list[int], outs: list[int], **attrs: Any) -> None:
        self.ops.append(Op(len(self.ops), kind, ins, outs, attrs=attrs))

    def init(self, name: str, what: str) -> np.ndarray:
        if name not in self.inits:
            raise self.fail(f"{what} '{plain(name)}' must be a constant initializer")
        return self.inits[name]

    def qparams(
        self, scale: str, zp: str | None, *, int32: bool = False
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """Scale (float32) and zero point (int64, uint8 shifted to int8) and whether uint8;
        ``int32``: int32 zero points too (a bias)."""
        s = np.asarray(self.init(scale, "scale"), np.float32).reshape(-1)
        if not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise self.fail("quantization scale must be positive and finite")
        if not zp:
            return s, np.zeros(s.size, np.int64), False
        z = self.init(zp, "zero point")
        if z.dtype == np.uint8:
            return s, z.astype(np.int64).reshape(-1) - 128, True
        if z.dtype != np.int8 and not (int32 and z.dtype == np.int32):
            raise self.fail(f"{z.dtype} quantization is not supported (int8 or uint8 only)")
        return s, z.astype(np.int64).reshape(-1), False

    def act(self, name: str) -> _Act:
        if name not in self.acts:
            raise self.fail(f"input '{plain(name)}' is not a quantized activation")
        return self.acts[name]

    def new_act(self, name: str, onnx_shape: tuple[int, ...], s: np.ndarray,
                z: np.ndarray) -> int:  # fmt: skip
        if s.size != 1:
            raise self.fail("per-channel activation quantization is not supported")
        shape = _ir_shape(onnx_shape)
        tid = self.tensor(name, shape, "int8", Quant(s[:1].copy(), z[:1].copy()))
        self.acts[name] = _Act(tid, tuple(onnx_shape))
        return tid

    def same_quant(self, a: _Act, s: np.ndarray, z: np.ndarray) -> None:
        q = self.tensors[a.tid].quant
        if s.size != 1 or q.s != float(s[0]) or q.zp != int(z[0]):
            raise self.fail("a tensor's scale or zero point differs from its producer's")

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

    # ------------------------------------------------------------------ Q / DQ

    def _DequantizeLinear(self, n: Any) -> None:
        axis = _attr(n, "axis", 1)
        const = n.input[0] in self.inits
        zp = n.input[2] if len(n.input) > 2 else None
        s, z, _ = self.qparams(n.input[1], zp, int32=const)
        if const:
            raw = self.inits[n.input[0]]
            data = raw.astype(np.int64) - 128 if raw.dtype == np.uint8 else raw.astype(np.int64)
            self.consts[n.output[0]] = _Const(data, s, z, axis)
            return
        a = self.act(n.input[0])
        self.same_quant(a, s, z)
        self.dq[n.output[0]] = n.input[0]

    def _QuantizeLinear(self, n: Any) -> None:
        raise self.fail("a QuantizeLinear that is not a graph input's nor closes a quantized"
                        " op (requantizing a dequantized tensor) is not supported")  # fmt: skip

    def _qdq_out(self, n: Any) -> tuple[str, np.ndarray, np.ndarray, bool]:
        """The QuantizeLinear closing a float node: its output name and parameters."""
        users = self.consumers.get(n.output[0], [])
        gr = self.model.graph
        if len(users) != 1 or gr.node[users[0]].op_type != "QuantizeLinear":
            raise self.fail("float (unquantized) node: its output is not quantized by one"
                            " QuantizeLinear")  # fmt: skip
        q = gr.node[users[0]]
        self.done.add(users[0])
        s, z, u8 = self.qparams(q.input[1], q.input[2] if len(q.input) > 2 else None)
        return q.output[0], s, z, u8

    def _qdq_in(self, name: str) -> str:
        if name not in self.dq:
            raise self.fail(f"float (unquantized) node: input '{plain(name)}' is not the output"
                            " of a DequantizeLinear")  # fmt: skip
        return self.dq[name]

    def _qdq_const(self, name: str, what: str) -> _Const:
        if name not in self.consts:
            raise self.fail(f"{what} '{plain(name)}' is not a dequantized constant")
        return self.consts[name]

    # ------------------------------------------------------------------ QOperator nodes

    def _QLinearConv(self, n: Any) -> None:
        i = list(n.input) + [""] * (9 - len(n.input))
        w = self._const_of(i[3], i[4], i[5], 0)
        b = self.init(i[8], "bias") if i[8] else None
        self._emit_conv(n, i[0], (i[1], i[2]), w, b, n.output[0], self.qparams(i[6], i[7])[:2])

    def _QGemm(self, n: Any) -> None:
        i = list(n.input) + [""] * (9 - len(n.input))
        if _attr(n, "transA", 0):
            raise self.fail("transA=1 is not supported")
        if not i[7]:
            raise self.fail("a QGemm with a float output is not supported")
        w = self._const_of(i[3], i[4], i[5], 0 if _attr(n, "transB", 0) else 1)  # scales per N
        b = self.init(i[6], "bias") if i[6] else None
        alpha = float(_attr(n, "alpha", 1.0))
        if float(_attr(n, "beta", 1.0)) != 1.0:
            raise self.fail("beta other than 1 is not supported")
        self._emit_gemm(n, i[0], (i[1], i[2]), w, bool(_attr(n, "transB", 0)), b,
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
        if _attr(n, "channels_last", 0):
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
        opset = int(_attr(n, "opset", 13))
        self._emit_softmax(n, i[0], n.output[0], self.qparams(i[3], i[4]), opset)

    def _QLinearAveragePool(self, n: Any) -> None:
        i = list(n.input) + [""] * (5 - len(n.input))
        self._check_in(i[0], i[1], i[2])
        if _attr(n, "channels_last", 0):
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

    def _const_of(self, name: str, scale: str, zp: str, axis: int) -> _Const:
        raw = self.init(name, "weights")
        s, z, _ = self.qparams(scale, zp)
        data = raw.astype(np.int64) - 128 if raw.dtype == np.uint8 else raw.astype(np.int64)
        return _Const(data, s, z, axis)

    def _maybe_const(self, name: str, scale: str, zp: str) -> _Const | None:
        return self._const_of(name, scale, zp, 0) if name in self.inits else None

    def _check_in(self, name: str, scale: str, zp: str) -> None:
        s, z, _ = self.qparams(scale, zp)
        self.same_quant(self.act(name), s, z)

    # ------------------------------------------------------------------ QDQ float nodes

    def _Conv(self, n: Any) -> None:
        x = self._qdq_in(n.input[0])
        w = self._qdq_const(n.input[1], "weights")
        b = self._qdq_bias(n, 2)
        out, s, z, _ = self._qdq_out(n)
        self._emit_conv(n, x, None, w, b, out, (s, z))

    def _Gemm(self, n: Any) -> None:
        if _attr(n, "transA", 0):
            raise self.fail("transA=1 is not supported")
        if float(_attr(n, "beta", 1.0)) != 1.0:
            raise self.fail("beta other than 1 is not supported")
        x = self._qdq_in(n.input[0])
        w = self._qdq_const(n.input[1], "weights")
        b = self._qdq_bias(n, 2)
        out, s, z, _ = self._qdq_out(n)
        self._emit_gemm(n, x, None, w, bool(_attr(n, "transB", 0)), b, out, (s, z),
                        float(_attr(n, "alpha", 1.0)))  # fmt: skip

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

    # ------------------------------------------------------------------ data movement

    def _move_io(self, n: Any) -> tuple[str, str]:
        """Input and output names of an int8 data-movement node (QOperator: int8 in and out;
        QDQ: DQ -> op -> Q with the same parameters, which onnxruntime runs on int8)."""
        src = n.input[0]
        if src in self.acts:
            return src, n.output[0]
        x = self._qdq_in(src)
        out, s, z, _ = self._qdq_out(n)
        self.same_quant(self.acts[x], s, z)
        return x, out

    def _MaxPool(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        if len(n.output) > 1 or _attr(n, "ceil_mode", 0) or _attr(n, "storage_order", 0):
            raise self.fail("MaxPool with indices, ceil_mode or storage_order is not supported")
        if any(d != 1 for d in _attr(n, "dilations", [1, 1])):
            raise self.fail("dilated MaxPool is not supported")
        if _attr(n, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.fail("auto_pad is not supported (explicit pads only)")
        kh, kw = _attr(n, "kernel_shape", None) or [0, 0]
        sh, sw = _attr(n, "strides", [1, 1])
        pads = list(_attr(n, "pads", [0, 0, 0, 0]))
        nb, c, h, w = a.onnx_shape
        oh = (h + pads[0] + pads[2] - kh) // sh + 1
        ow = (w + pads[1] + pads[3] - kw) // sw + 1
        padding = _tflite_padding(h, w, kh, kw, sh, sw, pads, oh, ow)
        if padding is None:
            raise self.fail(f"MaxPool pads {pads} are neither VALID nor SAME-like")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, (nb, c, oh, ow), q.scale, q.zero_point)
        self.op("MAX_POOL_2D", [a.tid], [o], padding=padding, stride=(sh, sw), filter=(kh, kw),
                activation="NONE")  # fmt: skip

    def _Flatten(self, n: Any) -> None:
        x, out = self._move_io(n)
        shape = self.acts[x].onnx_shape
        axis = _attr(n, "axis", 1) % max(len(shape), 1)
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        self._reshape(x, out, (rows, int(np.prod(shape, dtype=np.int64)) // rows))

    def _Reshape(self, n: Any) -> None:
        x, out = self._move_io(n)
        shape = self.acts[x].onnx_shape
        want = [int(v) for v in self.init(n.input[1], "shape").reshape(-1)]
        want = [shape[i] if v == 0 else v for i, v in enumerate(want)]
        if -1 in want:
            known = int(np.prod([v for v in want if v != -1], dtype=np.int64))
            want[want.index(-1)] = int(np.prod(shape, dtype=np.int64)) // known
        self._reshape(x, out, tuple(want))

    def _reshape(self, x: str, out: str, new: tuple[int, ...]) -> None:
        a = self.acts[x]
        q = self.tensors[a.tid].quant
        src = a.tid
        if len(a.onnx_shape) == 4 and a.onnx_shape[2] * a.onnx_shape[3] != 1:
            # NHWC bytes in NCHW order first, then the reshape
            nchw = self.tensor(out + "/nchw", a.onnx_shape, "int8", q)
            perm = self.tensor(out + "/perm", (4,), "int32", data=np.array([0, 3, 1, 2], np.int32))
            self.op("TRANSPOSE", [src, perm], [nchw])
            src = nchw
        if len(new) == 4 and new[2] * new[3] != 1:
            raise self.fail("a reshape into a 4-D tensor with spatial dimensions is not supported")
        if int(np.prod(new, dtype=np.int64)) != self.tensors[src].size:
            raise self.fail(f"cannot reshape {list(a.onnx_shape)} into {list(new)}")
        o = self.new_act(out, new, q.scale, q.zero_point)
        shape = self.tensor(out + "/shape", (len(new),), "int32",
                            data=np.array(self.tensors[o].shape, np.int32))  # fmt: skip
        self.op("RESHAPE", [src, shape], [o])

    def _Transpose(self, n: Any) -> None:
        x, out = self._move_io(n)
        a = self.acts[x]
        rank = len(a.onnx_shape)
        perm = [int(p) for p in _attr(n, "perm", list(range(rank))[::-1])]
        q = self.tensors[a.tid].quant
        o = self.new_act(out, tuple(a.onnx_shape[p] for p in perm), q.scale, q.zero_point)
        if rank == 4:  # both sides NHWC in the IR: compose with the layout changes
            perm = [NCHW_TO_NHWC.index(perm[NCHW_TO_NHWC[i]]) for i in range(4)]
        pt = self.tensor(out + "/perm", (rank,), "int32", data=np.array(perm, np.int32))
        self.op("TRANSPOSE", [a.tid, pt], [o])

    def _Resize(self, n: Any) -> None:
        """Nearest-mode Resize of height and width (int8 in onnxruntime: bytes move)."""
        x, out = self._move_io(n)
        a = self.acts[x]
        mode = _text(_attr(n, "mode", "nearest"))
        if mode != "nearest":
            raise self.fail(f"Resize mode {plain(mode)} is not supported (nearest only)")
        ctm = _text(_attr(n, "coordinate_transformation_mode", "half_pixel"))
        near = _text(_attr(n, "nearest_mode", "round_prefer_floor"))
        if _attr(n, "antialias", 0) or _attr(n, "axes", None) is not None:
            raise self.fail("Resize with antialias or axes is not supported")
        if _text(_attr(n, "keep_aspect_ratio_policy", "stretch")) != "stretch":
            raise self.fail("keep_aspect_ratio_policy is not supported")
        if len(a.onnx_shape) != 4:
            raise self.fail("only 4-D (NCHW) Resize is supported")
        ins = list(n.input) + [""] * (4 - len(n.input))
        if ins[3]:
            sizes = [int(v) for v in self.init(ins[3], "sizes").reshape(-1)]
            if len(sizes) != 4:
                raise self.fail("sizes must have 4 values")
            scales = [
                float(np.float32(o) / np.float32(i))
                for o, i in zip(sizes, a.onnx_shape, strict=True)
            ]
        elif ins[2]:
            scales = [float(v) for v in self.init(ins[2], "scales").reshape(-1)]
            if len(scales) != 4:
                raise self.fail("scales must have 4 values")
            sizes = [
                int(np.floor(d * np.float32(s))) for d, s in zip(a.onnx_shape, scales, strict=True)
            ]
        else:
            raise self.fail("Resize needs constant scales or sizes")
        if sizes[:2] != list(a.onnx_shape[:2]):
            raise self.fail("only height and width may be resized")
        q = self.tensors[a.tid].quant
        o = self.new_act(out, tuple(sizes), q.scale, q.zero_point)
        self.op("ONNX_RESIZE_NEAREST", [a.tid], [o], coordinate_mode=ctm, nearest_mode=near,
                scales=(scales[2], scales[3]))  # fmt: skip

    def _Pad(self, n: Any) -> None:
        """Constant-mode Pad whose value is the zero point (the quantizer's form): PAD."""
        qdq = n.input[0] not in self.acts
        x, out = self._move_io(n)
        a = self.acts[x]
        q = self.tensors[a.tid].quant
        mode = _attr(n, "mode", b"constant")
        if mode not in (b"constant", "constant"):
            raise self.fail(f"Pad mode {plain(str(mode))} is not supported (constant only)")
        if len(n.input) > 3 and n.input[3]:
            raise self.fail("Pad with axes is not supported")
        if len(n.input) > 2 and n.input[2]:
            v = self.init(n.input[2], "constant value").reshape(-1)[0]
            if (
                qdq
                and float(v) != 0.0
                or not qdq
                and int(v) - (128 if v.dtype == np.uint8 else 0) != q.zp
            ):
                raise self.fail("Pad value other than zero (the zero point) is not supported")
        pads = [int(p) for p in self.init(n.input[1], "pads").reshape(-1)]
        rank = len(a.onnx_shape)
        if len(pads) != 2 * rank or min(pads) < 0:
            raise self.fail(f"pads {pads} do not fit a rank-{rank} input")
        pairs = [(pads[d], pads[d + rank]) for d in range(rank)]
        shape = tuple(a.onnx_shape[d] + b + e for d, (b, e) in enumerate(pairs))
        if rank == 4:
            pairs = [pairs[d] for d in NCHW_TO_NHWC]
        o = self.new_act(out, shape, q.scale, q.zero_point)
        pt = self.tensor(out + "/pads", (rank, 2), "int32", data=np.array(pairs, np.int32))
        self.op("PAD", [a.tid, pt], [o])

    # ------------------------------------------------------------------ emitters

    def _emit_conv(self, n: Any, x: str, xq: tuple | None, w: _Const, bias: np.ndarray | None,
                   out: str, oq: tuple) -> None:  # fmt: skip
        a = self.act(x)
        if xq is not None:
            self._check_in(x, *xq)
        if len(a.onnx_shape) != 4 or w.data.ndim != 4:
            raise self.fail("only 2-D convolutions (rank-4 tensors) are supported")
        if _attr(n, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.fail("auto_pad is not supported (explicit pads only)")
        nb, c, h, wd = a.onnx_shape
        oc, cpg, kh, kw = w.data.shape
        group = int(_attr(n, "group", 1))
        sh, sw = _attr(n, "strides", [1, 1])
        dh, dw = _attr(n, "dilations", [1, 1])
        pt, pl, pb, pr = _attr(n, "pads", [0, 0, 0, 0])
        oh = (h + pt + pb - (kh - 1) * dh - 1) // sh + 1
        ow = (wd + pl + pr - (kw - 1) * dw - 1) // sw + 1
        wt = self._weights(w, oc, np.transpose(w.data, (0, 2, 3, 1)), f"{out}/weights")
        ins = [a.tid, wt]
        if bias is not None:
            ins.append(self._bias(bias, oc, out))
        o = self.new_act(out, (nb, oc, oh, ow), *oq)
        self.op("ONNX_CONV", ins, [o], groups=group, stride=(sh, sw), dilation=(dh, dw),
                pads=(pt, pl, pb, pr))  # fmt: skip
        del c, cpg

    def _emit_gemm(
        self,
        n: Any,
        x: str,
        xq: tuple | None,
        w: _Const,
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
        mat = w.data if trans_b else w.data.T  # [units, depth]
        units, depth = mat.shape
        if a.onnx_shape[-1] != depth:
            raise self.fail(f"input {list(a.onnx_shape)} does not match B's depth {depth}")
        if w.scale.size > 1 and w.axis % 2 != (0 if trans_b else 1):
            raise self.fail("B is not quantized along its output axis")
        wt = self._weights(w, units, mat, f"{out}/weights")
        ins = [a.tid, wt]
        if bias is not None:
            ins.append(self._bias(np.asarray(bias).reshape(-1), units, out))
        o = self.new_act(out, (*a.onnx_shape[:-1], units), *oq)
        self.op("ONNX_GEMM", ins, [o], alpha=alpha)

    def _emit_add(
        self, n: Any, aq: tuple, bq: tuple, bconst: _Const | None, out: str, oq: tuple, u8: bool
    ) -> None:
        self._emit_binary("ONNX_ADD", n, aq, bq, bconst, out, oq, u8)

    def _emit_binary(self, kind: str, n: Any, aq: tuple, bq: tuple, bconst: _Const | None,
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
        self.op(kind, [a.tid, bt], [o], **({"uint8": u8} if kind == "ONNX_ADD" else {}))

    def _emit_concat(self, n: Any, xs: list[str], out: str, oq: tuple) -> None:
        """Inputs quantized differently from the output go through a rescaling table first
        (ONNX_REQUANT), then one CONCATENATION of equal parameters copies bytes."""
        acts = [self.act(x) for x in xs]
        rank = len(acts[0].onnx_shape)
        axis = int(_attr(n, "axis", 0)) % max(rank, 1)
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
        axis = int(_attr(n, "axis", 1 if opset < 13 else -1)) % max(rank, 1)
        if rank == 4 or (axis != rank - 1 and int(np.prod(a.onnx_shape[axis + 1 :])) != 1):
            raise self.fail("Softmax is supported along the last axis of a rank < 4 tensor")
        self._emit_unary("ONNX_SOFTMAX", x, out, oq, uint8=bool(oq[2]))

    def _emit_avgpool(self, n: Any, x: str, out: str, oq: tuple) -> None:
        a = self.act(x)
        if len(a.onnx_shape) != 4:
            raise self.fail("only 2-D pooling (rank-4 tensors) is supported")
        if _attr(n, "ceil_mode", 0) or _attr(n, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise self.fail("ceil_mode and auto_pad are not supported")
        if any(d != 1 for d in _attr(n, "dilations", [1, 1])):
            raise self.fail("dilated AveragePool is not supported")
        kh, kw = _attr(n, "kernel_shape", [1, 1])
        sh, sw = _attr(n, "strides", [1, 1])
        pt, pl, pb, pr = _attr(n, "pads", [0, 0, 0, 0])
        nb, c, h, w = a.onnx_shape
        oh = (h + pt + pb - kh) // sh + 1
        ow = (w + pl + pr - kw) // sw + 1
        o = self.new_act(out, (nb, c, oh, ow), *oq[:2])
        self.op("ONNX_AVG_POOL", [a.tid], [o], kernel=(kh, kw), stride=(sh, sw),
                pads=(pt, pl, pb, pr), include_pad=bool(_attr(n, "count_include_pad", 0)),
                uint8=bool(oq[2]))  # fmt: skip

    def _emit_gap(self, x: str, out: str, oq: tuple) -> None:
        a = self.act(x)
        if len(a.onnx_shape) != 4:
            raise self.fail("expects a rank-4 input")
        nb, c = a.onnx_shape[:2]
        o = self.new_act(out, (nb, c, 1, 1), *oq)
        self.op("ONNX_GLOBAL_AVG_POOL", [a.tid], [o])

    def _weights(self, w: _Const, units: int, data: np.ndarray, name: str) -> int:
        if np.any(w.zp != 0):
            raise self.fail("weights with a nonzero zero point are not supported (quantize"
                            " weights symmetrically)")  # fmt: skip
        if w.scale.size not in (1, units):
            raise self.fail(f"weights have {w.scale.size} scales for {units} output channels")
        q = Quant(w.scale.copy(), w.zp.copy(), 0)
        arr = np.ascontiguousarray(data.astype(np.int8))
        return self.tensor(name, arr.shape, "int8", q, arr)

    def _bias(self, b: np.ndarray, units: int, out: str) -> int:
        b = np.asarray(b).reshape(-1)
        if b.dtype != np.int32 or b.size != units:
            raise self.fail(f"bias must be {units} int32 values")
        return self.tensor(out + "/bias", (units,), "int32", data=b.copy())


def _ir_shape(onnx_shape: tuple[int, ...]) -> tuple[int, ...]:
    s = tuple(int(d) for d in onnx_shape)
    return tuple(s[i] for i in NCHW_TO_NHWC) if len(s) == 4 else s


def _text(v: Any) -> str:
    return v.decode("ascii", "replace") if isinstance(v, bytes) else str(v)


def _attr(n: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _tflite_padding(h: int, w: int, kh: int, kw: int, sh: int, sw: int, pads: list[int],
                    oh: int, ow: int) -> str | None:  # fmt: skip
    """The TFLite padding that computes the same windows as ONNX's explicit pads (pooling
    skips padded taps in both), or None."""
    if not any(pads):
        return "VALID"
    same = []
    for size, k, s, o in ((h, kh, sh, oh), (w, kw, sw, ow)):
        if o != (size + s - 1) // s:
            return None
        total = max((o - 1) * s + k - size, 0)
        same += [total // 2, total - total // 2]
    if [pads[0], pads[2], pads[1], pads[3]] == same:
        return "SAME"
    return None


def build(model: Any) -> Graph:
    """The IR of a quantized ONNX model."""
    return _Builder(model).run()
