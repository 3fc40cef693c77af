"""Which tensor of the reference each of our tensors is, checked rather than assumed.

- **TFLite** (the reference: TFLM): our tensor ids are the file's tensor indices (the frontend
  numbers them so), and TFLM's tensors are read by index (``GetTensor(index, 0)``); graph
  inputs and outputs go by position (TFLM's input ``i`` is the subgraph's input ``i``). The
  map checks every tensor it maps against the file: the index exists, and the name (where the
  file gives one), shape and type are ours; the graph's inputs and outputs are the file's.
- **ONNX** (the numpy reference, onnxruntime): a value is found by its name. Graph inputs and
  outputs go by position in the file's lists (initializers are no inputs) and are fed and read
  under the file's names; any other tensor of ours is the quantized value of the same name a
  node of the file produces, if there is one. A tensor the frontend added (a layout transpose,
  a rescaled Concat input) has no twin: it is *untwinned*, reported "not compared".

Either way a mismatch is a RunError naming the tensor, never a silent wrong comparison; and
``check_twin`` checks each twin's shape and type against ours once the reference ran.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import RunError
from ..ir import Graph

if TYPE_CHECKING:
    from ..pipeline import Plan

Key = int | str  # a reference tensor: TFLM's index, or an ONNX value's name
RULE = "our tensor ids must be the model file's tensor indices (TFLM looks tensors up by them)"
# where each QLinear op keeps its output zero point (its element type is the output's)
_OUT_ZP = {
    "QuantizeLinear": 2, "QLinearConv": 7, "QLinearMatMul": 7, "QGemm": 8, "QLinearAdd": 7,
    "QLinearGlobalAveragePool": 4, "QLinearConcat": 1, "QLinearMul": 7, "QLinearSigmoid": 4,
    "QLinearSoftmax": 4, "QLinearAveragePool": 4,
}  # fmt: skip
_MOVES = ("MaxPool", "Flatten", "Reshape", "Transpose", "Pad", "Resize")


@dataclass(frozen=True)
class TensorMap:
    """The reference's key of each of our graph inputs, outputs and compared tensors."""

    format: str  # "tflite" or "onnx"
    inputs: tuple[Key, ...]  # per graph input, in the graph's order
    outputs: tuple[Key, ...]  # per graph output
    tensors: dict[int, Key]  # compared tensor id -> its twin
    untwinned: tuple[int, ...] = ()  # compared tensors without a twin: "not compared"


def is_onnx_model(model: str | Path) -> bool:
    """Whether ``model`` is an ONNX file (compared with the ONNX reference, not TFLM)."""
    return str(model).lower().endswith(".onnx")


def compared_tensors(p: Plan) -> list[int]:
    """The tensors a layer comparison checks besides the outputs: every layer's output in
    execution order, then every variable tensor (the state after each sample)."""
    layers = [p.lowering.ops[i].op.outputs[0] for i in p.order]
    return layers + sorted(t for t in p.state if not p.graph.t(t).hidden)


def tensor_map(g: Graph, model: str | Path, tids: Sequence[int] = ()) -> TensorMap:
    """The map of ``g`` (read from ``model``) to the reference's tensors, for ``tids``."""
    if is_onnx_model(model):
        return onnx_map(g, model, tids)
    return tflite_map(g, model, tids)


# ---------------------------------------------------------------------------- TFLite


@dataclass(frozen=True)
class _FileTensor:
    name: str
    shape: tuple[int, ...]
    dtype: str


def _tflite_file(model: str | Path) -> tuple[list[_FileTensor], list[int], list[int]]:
    """The first subgraph's tensors (name, shape, type), inputs and outputs, as the file says."""
    import tflite

    types = {v: k.lower() for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
    try:
        sg = tflite.Model.GetRootAsModel(Path(model).read_bytes(), 0).Subgraphs(0)
        ts = []
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
            name = t.Name().decode("utf-8", "replace") if t.Name() else ""
            ts.append(_FileTensor(name, shape, types.get(t.Type(), str(t.Type()))))
        ins = [int(x) for x in sg.InputsAsNumpy()] if sg.InputsLength() else []
        outs = [int(x) for x in sg.OutputsAsNumpy()] if sg.OutputsLength() else []
    except Exception as e:  # the generated accessors raise anything on a corrupt file
        raise RunError(f"{model}: cannot read the model's tensors ({type(e).__name__})") from None
    return ts, ins, outs


def tflite_map(g: Graph | None, model: str | Path, tids: Sequence[int] = ()) -> TensorMap:
    """The identity map of ids to TFLM's indices, checked against the file (see the module
    docstring); without ``g`` only that each of ``tids`` is one of the file's tensors."""
    ts, ins, outs = _tflite_file(model)
    for tid in tids:
        if not 0 <= tid < len(ts):
            named = g is not None and 0 <= tid < len(g.tensors)
            what = f"tensor {tid}" + (f" '{_plain(g.t(tid).name)}'" if named else "")
            raise RunError(f"{what}: the model file has {len(ts)} tensors; {RULE}")
    if g is None:
        return TensorMap("tflite", tuple(ins), tuple(outs), {t: t for t in tids})
    for what, ours, theirs in (
        ("input", _shown(g, g.inputs), ins),
        ("output", _shown(g, g.outputs), outs),
    ):
        if list(ours) != theirs:
            raise RunError(
                f"the graph's {what}s are tensors {list(ours)}, the model file's {theirs}; {RULE}"
            )
    for tid in dict.fromkeys([*g.inputs, *g.outputs, *tids]):
        t, f = g.t(tid), ts[tid]
        if (f.name and f.name != t.name) or f.shape != tuple(t.shape) or f.dtype != t.dtype:
            raise RunError(
                f"tensor {tid} '{_plain(t.name)}' {list(t.shape)} {t.dtype}: the model file's"
                f" tensor {tid} is '{_plain(f.name)}' {list(f.shape)} {f.dtype}; {RULE}"
            )
    return TensorMap("tflite", tuple(ins), tuple(outs), {t: t for t in tids})


def _shown(g: Graph, tids: Sequence[int]) -> list[int]:
    """The file's tensors behind graph inputs or outputs (``Port.source``: ``--int8-io``)."""
    return [p.source if (p := g.ports.get(t)) is not None and p.source is not None else t
            for t in tids]  # fmt: skip


# ---------------------------------------------------------------------------- ONNX


def quantized_values(m: Any) -> dict[str, int]:
    """ONNX element type of every int8/uint8 value a node of model ``m`` produces (QLinear
    outputs and the data-movement ops after them): the values a tensor of ours can twin."""
    inits = {t.name: t.data_type for t in m.graph.initializer}
    types: dict[str, int] = {}
    for n in m.graph.node:
        k = _OUT_ZP.get(n.op_type)
        if k is not None and len(n.input) > k and n.input[k] in inits:
            types[n.output[0]] = inits[n.input[k]]
        elif n.op_type in _MOVES and n.input[0] in types:
            types[n.output[0]] = types[n.input[0]]
    return types


def onnx_map(g: Graph, model: str | Path | Any, tids: Sequence[int] = ()) -> TensorMap:
    """The map by name (see the module docstring); ``model``: a path or a loaded ModelProto."""
    import onnx

    m = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    inits = {t.name for t in m.graph.initializer}
    ins = tuple(i.name for i in m.graph.input if i.name not in inits)
    outs = tuple(o.name for o in m.graph.output)
    if len(ins) != len(g.inputs) or len(outs) != len(g.outputs):
        raise RunError(
            f"the graph has {len(g.inputs)} inputs and {len(g.outputs)} outputs, the model file"
            f" {len(ins)} and {len(outs)}: they are matched by position"
        )
    values = quantized_values(m)
    tensors: dict[int, Key] = {}
    untwinned = []
    for tid in tids:
        name = g.t(tid).name
        if tid in g.outputs:
            tensors[tid] = outs[g.outputs.index(tid)]
        elif name in values and name not in outs:
            tensors[tid] = name
        else:
            untwinned.append(tid)
    seen: dict[Key, int] = {}
    for tid, key in tensors.items():
        if key in seen and seen[key] != tid:
            raise RunError(
                f"tensors {seen[key]} and {tid} of the graph both twin the model's value"
                f" '{_plain(str(key))}': a value is found by its name, names must be unique"
            )
        seen[key] = tid
    return TensorMap("onnx", ins, outs, tensors, tuple(untwinned))


# ---------------------------------------------------------------------------- after a run


def check_twin(g: Graph, tid: int, key: Key, shape: Sequence[int], dtype: Any) -> None:
    """RunError unless the reference's tensor ``key`` (of ``shape`` and ``dtype``, in our
    layout) is of our tensor ``tid``'s shape and type."""
    t = g.t(tid)
    if tuple(int(d) for d in shape) != tuple(t.shape) or np.dtype(dtype) != np.dtype(t.dtype):
        raise RunError(
            f"tensor {tid} '{_plain(t.name)}' {list(t.shape)} {t.dtype}: the reference's twin"
            f" {key!r} is {[int(d) for d in shape]} {np.dtype(dtype)}"
        )


def _plain(text: str) -> str:
    """A model-supplied name fit for a one-line message."""
    return re.sub(r"[^\x20-\x7e]", "?", text)[:60]
