"""A numpy interpreter of quantized ONNX models: the reference ``run`` compares an ONNX model with.

``NumpySession`` mimics the part of ``onnxruntime.InferenceSession`` the project uses
(``get_inputs()``, ``run(output_names, feed)``) and computes the arithmetic docs/onnx.md promises
(the kernels are in ``onnx_ref_ops``), the same on every machine: onnxruntime itself picks its
kernels by CPU feature (docs/onnx.md, "The reference"). Any value the graph computes may be asked
for by name: quantized values in their ONNX type, float values as float32, in ONNX layout.

Supported: the QOperator ops the frontend accepts (QLinearConv, QGemm, QLinearMatMul,
QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid,
QLinearSoftmax, QLinearConcat), QuantizeLinear / DequantizeLinear, MaxPool, Flatten, Reshape,
Transpose, Pad, Resize (nearest) and Concat on any type, and float Relu / Clip. A float Conv,
Gemm, MatMul, Add, Mul, GlobalAveragePool, AveragePool, Sigmoid or Softmax must form a QDQ group
(its inputs DequantizeLinear outputs, its one consumer a QuantizeLinear): it is computed as its
QOperator twin on the quantized inputs, the fusion onnxruntime performs with
``session.qdqisint8allowed=1``. The other float ops are exact on dequantized values (a move, a max,
a clamp), so evaluating them in float32 between a DequantizeLinear and a QuantizeLinear gives the
QOperator form's results. Anything else raises a CompileError naming the node and its op.
Independent of the compiler: nothing here comes from tinycompile.frontend or tinycompile.ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompileError
from . import onnx_ref_more  # noqa: F401  (registers its handlers)
from .onnx_ref_nodes import HANDLERS, MS, TYPES, attrs_of, out_type

# float ops computed as their QOperator twin inside a DQ -> op -> Q group
FUSED = {"Conv", "Gemm", "MatMul", "Add", "Mul", "GlobalAveragePool", "AveragePool", "Sigmoid",
         "Softmax"}  # fmt: skip


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output, as onnxruntime's NodeArg: name, shape, element type."""

    name: str
    shape: list[int | str | None] = field(default_factory=list)
    dtype: type = np.float32

    @property
    def type(self) -> str:
        return f"tensor({'float' if self.dtype is np.float32 else np.dtype(self.dtype).name})"


class NumpySession:
    """``NumpySession(model)`` (a path, or the serialized model): ``run(names, feed)``."""

    def __init__(self, model: str | Path | bytes) -> None:
        import onnx
        from onnx import numpy_helper

        m = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
        g = m.graph
        self.opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.nodes = list(g.node)
        self.users: dict[str, list[int]] = {}
        self.producer: dict[str, int] = {}
        for i, n in enumerate(self.nodes):
            for x in n.input:
                if x:
                    self.users.setdefault(x, []).append(i)
            for y in n.output:
                self.producer[y] = i
        self.graph_outputs = [_info(o) for o in g.output]
        self.graph_inputs = [_info(i) for i in g.input if i.name not in self.consts]

    def get_inputs(self) -> list[ValueInfo]:
        return list(self.graph_inputs)

    def get_outputs(self) -> list[ValueInfo]:
        return list(self.graph_outputs)

    def run(self, output_names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Compute the graph on ``feed`` and return ``output_names`` (None: the graph outputs)."""
        env: dict[str, np.ndarray] = dict(self.consts)
        for vi in self.graph_inputs:
            if vi.name not in feed:
                raise CompileError(f"ONNX reference: no value fed for input '{vi.name}'")
            x = np.asarray(feed[vi.name])
            if x.dtype != vi.dtype:
                raise CompileError(f"ONNX reference: input '{vi.name}' wants {np.dtype(vi.dtype)},"
                                   f" got {x.dtype}")  # fmt: skip
            env[vi.name] = x
        skip: set[int] = set()
        for i, n in enumerate(self.nodes):
            if i not in skip:
                self._node(i, n, env, skip)
        names = output_names or [o.name for o in self.graph_outputs]
        missing = [x for x in names if x not in env]
        if missing:
            raise CompileError(f"ONNX reference: no value '{missing[0]}' (not in the graph, or"
                               " a float value inside a fused DequantizeLinear -> op ->"
                               " QuantizeLinear group)")  # fmt: skip
        return [env[x] for x in names]

    # ------------------------------------------------------------------ nodes

    def _node(self, i: int, n: Any, env: dict[str, np.ndarray], skip: set[int]) -> None:
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        try:
            if domain == "" and n.op_type in FUSED:
                self._fused(i, n, env, skip)
                return
            fn = HANDLERS.get((domain, n.op_type))
            if fn is None:
                raise ValueError(f"operator {n.op_type} is not supported by the ONNX reference")
            ins = [_value(env, x) if x else None for x in n.input]
            for name, v in zip(n.output, fn(self, n, ins, attrs_of(n)), strict=False):
                env[name] = v
        except (ValueError, KeyError, IndexError, TypeError) as e:
            msg = str(e.args[0]) if e.args else type(e).__name__
            where = f"node '{_plain(n.name)}': " if n.name else ""
            raise CompileError(f"ONNX reference: {where}{msg}", op_index=i,
                               op_kind=n.op_type) from None  # fmt: skip

    def _fused(self, i: int, n: Any, env: dict[str, np.ndarray], skip: set[int]) -> None:
        """A float op of a DQ -> op -> Q group, computed as its QOperator twin."""
        dqs = []
        for x in n.input:
            p = self.producer.get(x) if x else None
            if x and (p is None or self.nodes[p].op_type != "DequantizeLinear"):
                raise ValueError(f"float {n.op_type}: input '{x}' is not a DequantizeLinear output")
            dqs.append(self.nodes[p] if p is not None else None)
        users = self.users.get(n.output[0], [])
        graph_out = n.output[0] in {o.name for o in self.graph_outputs}
        if len(users) != 1 or graph_out or self.nodes[users[0]].op_type != "QuantizeLinear":
            raise ValueError(f"float {n.op_type}: its output is not quantized by a QuantizeLinear")
        q = self.nodes[users[0]]
        yz = _value(env, q.input[2]) if len(q.input) > 2 and q.input[2] else None
        if yz is None:
            yz = np.zeros((), out_type(attrs_of(q)))
        y = [_value(env, q.input[1]), yz]
        attrs = attrs_of(n)
        trip = [_operand(env, d, n, k, attrs) if d is not None else None for k, d in enumerate(dqs)]
        first = [v for t in trip[:2] if t is not None for v in t]  # X (and W / B): value, s, zp
        bias = _bias(trip[2]) if len(trip) > 2 and trip[2] is not None else None
        if n.op_type == "Conv":
            ins = first + y + ([bias] if bias is not None else [])
        elif n.op_type == "Gemm":
            ins = [*first, bias, *y]
        else:
            ins = first + y
        if n.op_type == "Softmax":
            attrs["opset"] = self.opset
        twin = {"Conv": "QLinearConv", "Gemm": "QGemm", "MatMul": "QLinearMatMul",
                "Add": "QLinearAdd", "Mul": "QLinearMul", "Sigmoid": "QLinearSigmoid",
                "GlobalAveragePool": "QLinearGlobalAveragePool", "Softmax": "QLinearSoftmax",
                "AveragePool": "QLinearAveragePool"}[n.op_type]  # fmt: skip
        fn = HANDLERS.get(("", twin)) or HANDLERS[(MS, twin)]
        env[q.output[0]] = fn(self, n, ins, attrs)[0]
        skip.add(users[0])


def _plain(text: str) -> str:
    """A model-supplied name fit for a one-line message."""
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:40]


def _info(vi: Any) -> ValueInfo:
    tt = vi.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]
    return ValueInfo(vi.name, dims, TYPES.get(tt.elem_type, np.float32))


def _value(env: dict[str, np.ndarray], name: str) -> np.ndarray:
    if name not in env:
        raise KeyError(f"input '{name}' has no value (not computed before its use)")
    return env[name]


def _operand(env: dict, dq: Any, n: Any, k: int, attrs: dict) -> list:
    """(values, scale, zero point) of a DequantizeLinear input of a fused op; per-axis scales
    only along the op's output channels."""
    x = _value(env, dq.input[0])
    s = _value(env, dq.input[1])
    z = _value(env, dq.input[2]) if len(dq.input) > 2 and dq.input[2] else None
    if np.size(s) > 1:
        axis = int(attrs_of(dq).get("axis", 1)) % max(x.ndim, 1)
        want = {"Conv": {1: 0, 2: 0}, "Gemm": {1: 0 if attrs.get("transB", 0) else 1, 2: 0},
                "MatMul": {1: x.ndim - 1}}.get(n.op_type, {})  # fmt: skip
        if want.get(k) != axis:
            raise ValueError(f"input {k} is quantized per axis {axis}, not per output channel")
    return [x, s, z]


def _bias(t: list) -> np.ndarray:
    """The int32 values of a dequantized bias (its zero point must be 0)."""
    if t[2] is not None and np.any(t[2] != 0):
        raise ValueError("a bias with a nonzero zero point is not supported")
    return t[0]
