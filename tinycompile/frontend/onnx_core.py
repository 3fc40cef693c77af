"""The state and helpers the ONNX reader's parts share: IR tensors and ops being built, the
quantized activations by ONNX name (with their ONNX, NCHW shape), dequantized constants, and the
QuantizeLinear / DequantizeLinear bookkeeping of both forms (``onnx_nodes`` walks the graph;
``onnx_emit`` builds the compute ops; ``onnx_moves`` the data-movement ones)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CompileError
from ..ir import Op, Port, Quant, Tensor
from .onnx_check import MAX_ELEMENTS
from .onnx_model import plain

NCHW_TO_NHWC = (0, 2, 3, 1)
# Scales whose products and ratios (a_s * b_s / c_s times an int16 difference) stay finite in
# float32: far beyond any calibrated model (activation ranges of 10^8, or of 10^-16)
MAX_SCALE, MIN_ACT_SCALE = 2.0**20, 2.0**-60


@dataclass
class Act:
    """A quantized activation: its IR tensor and its ONNX (NCHW) shape."""

    tid: int
    onnx_shape: tuple[int, ...]


@dataclass
class QConst:
    """A constant quantized tensor (int values as stored, model scale and zero point)."""

    data: np.ndarray
    scale: np.ndarray
    zp: np.ndarray
    axis: int = 0


@dataclass
class Core:
    model: Any
    tensors: list[Tensor] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    acts: dict[str, Act] = field(default_factory=dict)
    consts: dict[str, QConst] = field(default_factory=dict)  # DequantizeLinear of constants
    dq: dict[str, str] = field(default_factory=dict)  # float name -> quantized activation name
    inits: dict[str, np.ndarray] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)  # node indices consumed by a fusion
    ports: dict[int, Port] = field(default_factory=dict)  # how the file shows the graph's I/O
    pending: list[tuple] = field(default_factory=list)  # requant_after's promises
    node: Any = None
    index: int = 0

    # ------------------------------------------------------------------ errors and tensors

    def fail(self, reason: str) -> CompileError:
        n = self.node
        name = plain(n.name) if n is not None and n.name else ""
        where = f"node '{name}': " if name else ""
        kind = plain(n.op_type) if n is not None else None
        return CompileError(where + reason, op_index=self.index, op_kind=kind)

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
        if not s.size or not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise self.fail("quantization scale must be positive and finite")
        if np.any(s > MAX_SCALE):  # products and ratios of scales must stay finite in float32
            raise self.fail(f"quantization scale {float(s.max()):g} is beyond 2^20")
        if not zp:
            return s, np.zeros(s.size, np.int64), False
        z = self.init(zp, "zero point")
        if z.size != s.size:
            raise self.fail(f"{s.size} quantization scales but {z.size} zero points")
        if z.dtype == np.uint8:
            return s, z.astype(np.int64).reshape(-1) - 128, True
        if z.dtype != np.int8 and not (int32 and z.dtype == np.int32):
            raise self.fail(f"{z.dtype} quantization is not supported (int8 or uint8 only)")
        return s, z.astype(np.int64).reshape(-1), False

    def act(self, name: str) -> Act:
        if name not in self.acts:
            raise self.fail(f"input '{plain(name)}' is not a quantized activation")
        return self.acts[name]

    def new_act(self, name: str, onnx_shape: tuple[int, ...], s: np.ndarray,
                z: np.ndarray) -> int:  # fmt: skip
        if s.size != 1:
            raise self.fail("per-channel activation quantization is not supported")
        if s[0] < MIN_ACT_SCALE:  # a divisor of the ops' float32 scale ratios
            raise self.fail(f"activation scale {float(s[0]):g} is below 2^-60")
        if any(d <= 0 for d in onnx_shape) or math.prod(onnx_shape) > MAX_ELEMENTS:
            raise self.fail(f"'{plain(name)}' would have shape {list(onnx_shape)[:8]}")
        shape = ir_shape(onnx_shape)
        tid = self.tensor(name, shape, "int8", Quant(s[:1].copy(), z[:1].copy()))
        self.acts[name] = Act(tid, tuple(onnx_shape))
        return tid

    def requant_after(self, x: str, out: str, s: np.ndarray, z: np.ndarray) -> str:
        """The name a data-movement node reading activation ``x`` writes for its QDQ output
        ``out`` of parameters ``s``, ``z``: ``out`` itself where they are ``x``'s; else another
        name, and once it is written (``flush``) an ONNX_REQUANT (``Q(DQ(x))``: a table) gives
        ``out`` the new parameters."""
        q = self.tensors[self.acts[x].tid].quant
        if s.size != 1 or (q.s == float(s[0]) and q.zp == int(z[0])):
            return out
        tmp = out + "/moved"
        self.pending.append((tmp, out, s, z))
        return tmp

    def flush(self) -> None:
        """Emit the requantizations ``requant_after`` promised."""
        for tmp, out, s, z in self.pending:
            a = self.act(tmp)
            o = self.new_act(out, a.onnx_shape, s, z)
            self.op("ONNX_REQUANT", [a.tid], [o])
        self.pending.clear()

    def same_quant(self, a: Act, s: np.ndarray, z: np.ndarray) -> None:
        q = self.tensors[a.tid].quant
        if s.size != 1 or q.s != float(s[0]) or q.zp != int(z[0]):
            raise self.fail("a tensor's scale or zero point differs from its producer's")

    # ------------------------------------------------------------------ Q / DQ

    def check_qdq(self, n: Any) -> None:
        """Refuse what newer opsets added to QuantizeLinear / DequantizeLinear and the reader
        does not do: blocked quantization, another output type than the zero point's, a
        computation precision other than float32."""
        if int(attr_of(n, "block_size", 0)):
            raise self.fail("blocked quantization (block_size) is not supported")
        if int(attr_of(n, "precision", 0)) not in (0, 1):  # 1: FLOAT
            raise self.fail("a precision other than float32 is not supported")
        out = int(attr_of(n, "output_dtype", 0))
        if n.op_type == "DequantizeLinear" and out not in (0, 1):
            raise self.fail("DequantizeLinear to another type than float32 is not supported")
        if n.op_type == "QuantizeLinear" and out not in (0, 2, 3):  # UINT8, INT8
            raise self.fail("QuantizeLinear to another type than int8 or uint8 is not supported")

    def _DequantizeLinear(self, n: Any) -> None:
        self.check_qdq(n)
        axis = attr_of(n, "axis", 1)
        const = n.input[0] in self.inits
        zp = n.input[2] if len(n.input) > 2 else None
        s, z, _ = self.qparams(n.input[1], zp, int32=const)
        if const:
            raw = self.inits[n.input[0]]
            data = raw.astype(np.int64) - 128 if raw.dtype == np.uint8 else raw.astype(np.int64)
            self.consts[n.output[0]] = QConst(data, s, z, axis)
            return
        a = self.act(n.input[0])
        self.same_quant(a, s, z)
        self.dq[n.output[0]] = n.input[0]

    def _QuantizeLinear(self, n: Any) -> None:
        """A QuantizeLinear of a dequantized activation (DQ -> Q): new parameters, a table."""
        self.check_qdq(n)
        if n.input[0] not in self.dq:
            raise self.fail("a QuantizeLinear of a float tensor that is neither a graph input"
                            " nor a quantized op's result is not supported")  # fmt: skip
        s, z, _ = self.qparams(n.input[1], n.input[2] if len(n.input) > 2 else None)
        a = self.act(self.dq[n.input[0]])
        o = self.new_act(n.output[0], a.onnx_shape, s, z)
        self.op("ONNX_REQUANT", [a.tid], [o])

    def _qdq_out(self, n: Any) -> tuple[str, np.ndarray, np.ndarray, bool]:
        """The QuantizeLinear closing a float node: its output name and parameters."""
        users = self.consumers.get(n.output[0], [])
        gr = self.model.graph
        if len(users) != 1 or gr.node[users[0]].op_type != "QuantizeLinear":
            raise self.fail("float (unquantized) node: its output is not quantized by one"
                            " QuantizeLinear")  # fmt: skip
        q = gr.node[users[0]]
        self.check_qdq(q)
        self.done.add(users[0])
        s, z, u8 = self.qparams(q.input[1], q.input[2] if len(q.input) > 2 else None)
        return q.output[0], s, z, u8

    def _qdq_in(self, name: str) -> str:
        if name not in self.dq:
            raise self.fail(f"float (unquantized) node: input '{plain(name)}' is not the output"
                            " of a DequantizeLinear")  # fmt: skip
        return self.dq[name]

    def _qdq_const(self, name: str, what: str) -> QConst:
        if name not in self.consts:
            raise self.fail(f"{what} '{plain(name)}' is not a dequantized constant")
        return self.consts[name]

    def _const_of(self, name: str, scale: str, zp: str, axis: int) -> QConst:
        raw = self.init(name, "weights")
        s, z, _ = self.qparams(scale, zp)
        data = raw.astype(np.int64) - 128 if raw.dtype == np.uint8 else raw.astype(np.int64)
        return QConst(data, s, z, axis)

    def _maybe_const(self, name: str, scale: str, zp: str) -> QConst | None:
        return self._const_of(name, scale, zp, 0) if name in self.inits else None

    def _check_in(self, name: str, scale: str, zp: str) -> None:
        s, z, _ = self.qparams(scale, zp)
        self.same_quant(self.act(name), s, z)


def ir_shape(onnx_shape: tuple[int, ...]) -> tuple[int, ...]:
    s = tuple(int(d) for d in onnx_shape)
    return tuple(s[i] for i in NCHW_TO_NHWC) if len(s) == 4 else s


def as_text(v: Any) -> str:
    return v.decode("ascii", "replace") if isinstance(v, bytes) else str(v)


def attr_of(n: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default
