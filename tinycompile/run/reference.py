"""Reference runs: TensorFlow Lite Micro's interpreter, the truth comparisons check against.

It is imported lazily: the compiler itself does not need it, only ``run`` comparisons and the
tests do.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CompileError
from ..ir import Graph
from . import samples
from .samples import batch_of, file_input, ir_output, stack
from .tensor_map import check_twin, onnx_map, quantized_values, tflite_map
from .tensor_map import is_onnx_model as is_onnx_model  # re-exported

INSTALL_HINT = "pip install 'tinycompile[reference]'"


def require_reference() -> None:
    """Raise a one-line CompileError naming the extra to install when TFLM is missing."""
    try:
        from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    except ImportError as e:
        raise CompileError(
            f"comparing with TFLM needs the 'reference' extra ({e.name or 'tflite_micro'}"
            f" is missing): {INSTALL_HINT}"
        ) from None


@dataclass
class ReferenceResult:
    """TFLM's outputs for a batch and, when asked, intermediate tensors per sample."""

    outputs: list[np.ndarray]  # one array per graph output, batch along axis 0
    tensors: list[dict[int, np.ndarray]] = field(default_factory=list)  # per sample: id -> value
    refused: TflmRefusal | None = None  # stop_on_refusal: where Invoke failed (samples before it)


@dataclass(frozen=True)
class TflmRefusal:
    """TFLM's Invoke failed on a sample (an op refused its input, e.g. RSQRT below zero)."""

    sample: int
    op_index: int | None  # from TFLM's "Node KIND (number N) failed to invoke" line
    kind: str | None
    message: str  # what TFLM printed


_NODE_FAILED = re.compile(r"Node (\S+) \(number (\d+)f?\) failed to invoke")


def run_tflm(
    model: str | Path,
    inputs: list[np.ndarray],
    *,
    tensor_ids: list[int] | None = None,
    n_outputs: int | None = None,
    reset_between: bool = False,
    stop_on_refusal: bool = False,
    g: Graph | None = None,
) -> ReferenceResult:
    """Run TFLM on a batch (``inputs[i]`` has the batch on axis 0, one sample per invoke).

    The samples run in order through one interpreter that is never reset between them, so
    variable tensors (state) carry over from one sample to the next, as in the compiled
    model's runner. With ``tensor_ids``, also return those tensors (intermediates, or variable
    tensors: the state after the sample) for every sample, found by ``tensor_map``: with our
    graph ``g``, checked to be ours by name, shape and type (a RunError otherwise).
    ``reset_between`` resets the interpreter after every sample instead (each sample from a
    fresh state: what state-carrying tests compare against).
    """
    require_reference()
    from tflite_micro.python.tflite_micro import runtime

    # checked before any GetTensor: TFLM crashes the process on an index it does not have
    keys = tflite_map(g, model, tensor_ids or []).tensors

    cfg = runtime.InterpreterConfig.kPreserveAllTensors if tensor_ids else None
    kwargs = {"intrepreter_config": cfg} if cfg is not None else {}
    # TFLM's default arena (10x the file size) is too small for tiny models once every tensor
    # is preserved, and TFLM then crashes the process instead of raising.
    arena = max(16 * Path(model).stat().st_size, 4 << 20)
    interp = runtime.Interpreter.from_file(str(model), arena_size=arena, **kwargs)
    in_shapes = [tuple(interp.get_input_details(i)["shape"]) for i in range(len(inputs))]
    rows = [batch_of(shape, 1)[0] for shape in in_shapes]
    n = inputs[0].shape[0] // rows[0]
    outs: list[list[np.ndarray]] = []
    tensors: list[dict[int, np.ndarray]] = []
    if n_outputs is None:
        n_outputs = _count_outputs(interp)
    shown = _float_ports(g)
    for s in range(n):
        for i, (x, shape, r) in enumerate(zip(inputs, in_shapes, rows, strict=True)):
            tid = g.inputs[i] if g is not None else -1
            if tid in shown:  # --int8-io: the float values the file's QUANTIZE maps to x
                interp.set_input(file_input(g, tid, x, s).reshape(shape), i)
                continue
            interp.set_input(x[s * r : (s + 1) * r].reshape(shape), i)
        try:
            _invoke(interp)
        except RuntimeError as e:
            if not stop_on_refusal:
                raise
            text = getattr(e, "tflm_output", "")
            m = _NODE_FAILED.search(text)
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            refused = TflmRefusal(
                s,
                int(m.group(2)) if m else None,
                m.group(1) if m else None,
                "; ".join(lines) or str(e),
            )
            break
        outs.append([np.array(interp.get_output(j)) for j in range(n_outputs)])
        if tensor_ids:
            tensors.append(_tflm_tensors(interp, keys, g if s == 0 else None))
        if reset_between:
            interp.reset()
    else:
        refused = None
    outputs = []
    for j in range(n_outputs):
        d = interp.get_output_details(j)
        shape = tuple(d["shape"])
        tid = g.outputs[j] if g is not None else -1
        if tid in shown:  # --int8-io: the codes of the file's DEQUANTIZE's float output
            t = g.t(tid)
            outputs.append(stack(t, [ir_output(g, tid, o[j]) for o in outs]))
            continue
        got = [o[j].reshape(batch_of(shape, 1)) for o in outs]
        outputs.append(np.concatenate(got) if got else np.zeros(batch_of(shape, 0), d["dtype"]))
    return ReferenceResult(outputs=outputs, tensors=tensors, refused=refused)


def _float_ports(g: Graph | None) -> set[int]:
    """Graph inputs and outputs whose file tensor is a float one beyond them (``--int8-io``)."""
    ports = g.ports.items() if g is not None else ()
    return {t for t, p in ports if p.source is not None and p.dtype == "float32"}


def _tflm_tensors(interp, keys: dict[int, int], g: Graph | None) -> dict[int, np.ndarray]:
    """Our tensors' values after an invoke, from their TFLM twins (with ``g``: each checked to
    be of our tensor's shape and type)."""
    out = {}
    for tid, key in keys.items():
        d = interp.GetTensor(key, 0)
        if g is not None:
            check_twin(g, tid, key, d["shape"], d["dtype"])
        out[tid] = np.array(d["tensor_data"])
    return out


def _invoke(interp) -> None:
    """``interp.invoke()`` with what TFLM prints on stderr captured (the failing node's name is
    printed there, not put in the exception): a RuntimeError carries it as ``tflm_output``;
    after a successful call it is passed on to stderr."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as cap:
        saved = os.dup(2)
        os.dup2(cap.fileno(), 2)
        try:
            interp.invoke()
            err = None
        except RuntimeError as e:
            err = e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        cap.seek(0)
        text = cap.read().decode(errors="replace")
    if err is not None:
        err.tflm_output = text  # type: ignore[attr-defined]
        raise err
    if text:
        sys.stderr.write(text)


def _count_outputs(interp) -> int:
    n = 0
    while True:
        try:
            interp.get_output_details(n)
        except Exception:
            return n
        n += 1
        if n > 64:
            return n


ONNX_REFERENCE = "the ONNX reference"  # what an .onnx model is compared with (onnx_reference)
ORT_HINT = "pip install 'tinycompile[reference]' (onnxruntime)"


def require_onnxruntime() -> None:
    """Raise a one-line CompileError when onnxruntime (the second opinion) is missing."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise CompileError(f"comparing an ONNX model needs onnxruntime: {ORT_HINT}") from None


def ort_session(model: str | bytes | Path, *, fuse_int8: bool = True):
    """An onnxruntime CPU session, one thread, graph optimizations on. ``fuse_int8``: also fuse
    int8 DQ -> op -> Q groups into onnxruntime's QLinear kernels (``session.qdqisint8allowed``):
    the default x86-64 session fuses only the groups its s8 -> u8 rewrite reaches and runs the
    others in float32 (docs/onnx.md)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    if fuse_int8:
        opts.add_session_config_entry("session.qdqisint8allowed", "1")
    src = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])


@functools.cache
def ort_saturates_u8s8() -> bool:
    """Whether this machine's onnxruntime sums uint8 x int8 products inexactly: on x86-64 CPUs
    with AVX2 but without VNNI its u8s8 GEMM kernel (``vpmaddubsw``) adds pairs of products in
    int16 with saturation. Probed once on a tiny QLinearMatMul built in memory: eight 255s times
    eight 127s sum to 259080 (output 63 at scale 4096), saturated pairs to 131068 (output 32)."""
    require_onnxruntime()
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, v: np.ndarray):
        return numpy_helper.from_array(v, name)

    k = 8
    inits = [
        const("one", np.array(1.0, np.float32)), const("az", np.array(0, np.uint8)),
        const("b", np.full((k, 4), 127, np.int8)), const("bz", np.array(0, np.int8)),
        const("ys", np.array(4096.0, np.float32)), const("yz", np.array(0, np.uint8)),
    ]  # fmt: skip
    ins = ["a", "one", "az", "b", "one", "bz", "ys", "yz"]
    node = helper.make_node("QLinearMatMul", ins, ["y"])
    graph = helper.make_graph(
        [node], "u8s8_probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])], inits,
    )  # fmt: skip
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    y = ort_session(m.SerializeToString()).run(None, {"a": np.full((1, k), 255, np.uint8)})[0]
    return bool(np.any(y != round(k * 255 * 127 / 4096)))


@functools.cache
def ort_add_departs() -> bool:
    """Whether this machine's onnxruntime computes QLinearAdd otherwise than MLAS's x86-64 AVX2
    kernel (the arithmetic documented and implemented by the reference): without AVX2 its SSE2
    kernel rounds the products separately, on ARM64 its NEON kernel is fixed-point. Probed once
    on every int8 pair through a QLinearAdd whose scales make 117 pairs depend on the fused
    multiply-adds, against the reference itself."""
    require_onnxruntime()
    from onnx import TensorProto, helper, numpy_helper

    from .onnx_reference import NumpySession

    inits = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (
        ("as", 0.0144, np.float32), ("az", 11, np.int8), ("bs", 0.0209, np.float32),
        ("bz", -5, np.int8), ("cs", 0.0094, np.float32), ("cz", -4, np.int8))]  # fmt: skip
    node = helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                            domain="com.microsoft")  # fmt: skip
    io = [helper.make_tensor_value_info(x, TensorProto.INT8, [256, 256]) for x in "abc"]
    graph = helper.make_graph([node], "add_probe", io[:2], io[2:], inits)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    v = np.arange(-128, 128, dtype=np.int8)
    feed = {"a": np.repeat(v, 256).reshape(256, 256), "b": np.tile(v, 256).reshape(256, 256)}
    data = m.SerializeToString()
    ours = NumpySession(data).run(None, feed)[0]
    return not np.array_equal(ort_session(data).run(None, feed)[0], ours)


def uses_op(model: str | Path, *op_types: str) -> bool:
    """Whether an ONNX model has a node of one of ``op_types`` (QDQ groups count as the
    QOperator twin they fuse into: Add for QLinearAdd)."""
    import onnx

    return any(n.op_type in op_types for n in onnx.load(str(model)).graph.node)


def uint8_activations(model: str | Path) -> bool:
    """Whether an ONNX model has uint8 quantized activations."""
    import onnx

    return onnx.TensorProto.UINT8 in quantized_values(onnx.load(str(model))).values()


def run_onnxruntime(
    model: str | Path,
    inputs: list[np.ndarray],
    g: Graph,
    *,
    tensor_ids: list[int] | None = None,
    fuse_int8: bool = True,
    model_inputs: list[np.ndarray] | None = None,
) -> ReferenceResult:
    """Run onnxruntime's CPU session (``ort_session``: every DQ -> op -> Q group of a QDQ model
    runs as the fused QLinear kernel, the QOperator form's arithmetic) one sample at a time, on
    the float interface the quantizer leaves.

    Each input sample is fed as the file takes it (``samples.file_input``): the user's own
    float data where given (``model_inputs``, ``UserInputs.model``), else the IR codes in the
    file's type and layout (NCHW), dequantized for a float input (``(q - zp) * scale`` in
    float32, which its QuantizeLinear maps back to exactly ``q``). Each float output is the
    final DequantizeLinear's, from which ``q = round(y / scale) + zp`` is recovered exactly
    (``samples.ir_output``).
    ``tensor_ids``: also return those IR tensors that twin a quantized value of the ONNX graph
    (``tensor_map.onnx_map``; made extra graph outputs, uint8 ones shifted to int8 as the IR
    stores them, checked to be of our shapes); untwinned ones (tensors the frontend added:
    layout transposes, rescaled Concat inputs) are left out. Graph outputs come from the
    model's own session; the other intermediates from a twin session with extra outputs,
    whose fusions may differ (a conservative check: a difference there shows as a layer
    mismatch, never as a pass)."""
    require_onnxruntime()
    return _run_onnx(
        model, inputs, g, lambda src: ort_session(src, fuse_int8=fuse_int8),
        tensor_ids=tensor_ids, model_inputs=model_inputs,
    )  # fmt: skip


def run_onnx_reference(
    model: str | Path,
    inputs: list[np.ndarray],
    g: Graph,
    *,
    tensor_ids: list[int] | None = None,
    model_inputs: list[np.ndarray] | None = None,
) -> ReferenceResult:
    """``run_onnxruntime``'s contract on the numpy reference (``onnx_reference.NumpySession``):
    the arithmetic docs/onnx.md promises, the same on every machine. THE reference of ``run``
    and the tests for ONNX models; onnxruntime is a second opinion (``compare_plan``)."""
    from .onnx_reference import NumpySession

    return _run_onnx(model, inputs, g, NumpySession, tensor_ids=tensor_ids,
                     model_inputs=model_inputs)  # fmt: skip


def _run_onnx(
    model: str | Path,
    inputs: list[np.ndarray],
    g: Graph,
    session: Callable[[str | bytes], Any],
    *,
    tensor_ids: list[int] | None,
    model_inputs: list[np.ndarray] | None,
) -> ReferenceResult:
    """Run an ONNX model one sample at a time in sessions ``session(path or serialized model)``
    makes (onnxruntime's, or the numpy reference's): see ``run_onnxruntime``."""
    import onnx

    m = onnx.load(str(model))
    tmap = onnx_map(g, m, tensor_ids or [])  # inputs, outputs and twins by name
    types = quantized_values(m)
    extra = [(tid, str(k)) for tid, k in tmap.tensors.items() if tid not in g.outputs]
    for _, name in extra:
        m.graph.output.append(onnx.helper.make_tensor_value_info(name, types[name], None))
    sess = session(model)
    # intermediates from a twin session (extra outputs could change what the optimizer fuses:
    # the outputs themselves always come from the model's own session)
    twin = session(m.SerializeToString()) if extra else None
    outs: list[list[np.ndarray]] = [[] for _ in g.outputs]
    tensors: list[dict[int, np.ndarray]] = []
    given = model_inputs or [None] * len(g.inputs)
    for s in range(samples.count(g.t(g.inputs[0]), inputs[0])):
        feed = {
            str(name): samples.file_input(g, tid, x, s, v)
            for name, x, tid, v in zip(tmap.inputs, inputs, g.inputs, given, strict=True)
        }
        res = sess.run([str(k) for k in tmap.outputs], feed)
        for j, (y, tid) in enumerate(zip(res, g.outputs, strict=True)):
            outs[j].append(samples.ir_output(g, tid, y))
        sample = {tid: outs[j][-1] for j, tid in enumerate(g.outputs) if tensor_ids}
        more = twin.run([name for _, name in extra], feed) if twin is not None else []
        for (tid, name), v in zip(extra, more, strict=True):
            v = np.asarray(v)
            v = (v.astype(np.int16) - 128).astype(np.int8) if v.dtype == np.uint8 else v
            v = v.transpose(0, 2, 3, 1) if v.ndim == 4 else v  # NCHW -> the IR's NHWC
            if s == 0:
                check_twin(g, tid, name, v.shape, v.dtype)
            sample[tid] = v
        tensors.append(sample)
    outputs = [samples.stack(g.t(t), o) for t, o in zip(g.outputs, outs, strict=True)]
    return ReferenceResult(outputs=outputs, tensors=tensors)
