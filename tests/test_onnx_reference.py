"""Issue 19: the numpy ONNX reference (tinycompile/run/onnx_reference.py), THE reference the
compiled ONNX models are compared with (tests/test_onnx_models.py, through ``compare_plan``).

- It equals onnxruntime bit for bit on every test model, outputs and every quantized value the
  graph computes, on calibrated inputs: int8-activation models on every host; uint8-activation
  models where this CPU's onnxruntime sums u8 x s8 products exactly (``ort_saturates_u8s8()``
  False); where it does not (AVX2 without VNNI), the comparison's second opinion must name the
  saturating kernel instead. Likewise for models with QLinearAdd where ``ort_add_departs()``:
  on x86-64 CPUs without AVX2 onnxruntime's QLinearAdd rounds its products separately (seen
  under ``qemu-x86_64 -cpu Nehalem``), on ARM64 it is fixed-point; the reference keeps the AVX2
  formula, docs/onnx.md "The reference".
- It equals onnxruntime on single-op edge cases where onnxruntime 1.32 departs from a first
  reading of its sources (QLinearMul's zero point, Resize's scale-1 axes, QLinearSoftmax).
- It equals ``onnx.reference.ReferenceEvaluator`` where the ONNX spec defines the same arithmetic:
  QuantizeLinear and DequantizeLinear always (float32 division / product, ties to even), and
  QLinearMatMul / QLinearConv with power-of-two scales, accumulators below 2^24 and even output
  zero points: the evaluator requantizes in float64 and adds the zero point before rounding,
  which is the same only where the product is exact and a tie keeps its parity.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tests.test_onnx_models import all_pairs, calibrated_inputs, wide_inputs
from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.run import onnx_ref_ops as K
from tinycompile.run.compare import CompareReport
from tinycompile.run.onnx_reference import NumpySession
from tinycompile.run.reference import (
    ort_add_departs,
    ort_saturates_u8s8,
    ort_session,
    run_onnx_reference,
    run_onnxruntime,
    uint8_activations,
    uses_op,
)

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper, numpy_helper  # noqa: E402

F32 = np.float32
MS = "com.microsoft"
OPS_DIR = Path(__file__).resolve().parent / "models" / "ops"
OPS = sorted(p.stem for p in OPS_DIR.glob("onnx_*.onnx"))


def _built_names() -> list[str]:
    """Every model tests/onnxgen builds: quantized variants and the hand-made ones (written to
    a scratch folder to learn their names: cheap, nothing is quantized)."""
    import tempfile

    from tests.onnxgen.handmade import build_handmade
    from tests.onnxgen.models import MODELS, VARIANTS

    with tempfile.TemporaryDirectory() as td:
        handmade = list(build_handmade(Path(td)))
    return [f"{m}_{v}" for m in MODELS for v in VARIANTS] + ["cnn_u8", "cnn_u8_qdq"] + handmade


BUILT = _built_names()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.onnxgen.handmade import build_handmade
    from tests.onnxgen.models import build_all

    out = tmp_path_factory.mktemp("onnx_reference_models")
    return {**build_all(out), **build_handmade(out), **{s: OPS_DIR / f"{s}.onnx" for s in OPS}}


def _inputs(name: str, g) -> list[np.ndarray]:
    if name == "wide":
        return wide_inputs(20)
    if name.startswith("binary"):
        return all_pairs()
    return calibrated_inputs(g, 50 if name.startswith("ties") else 20)


@pytest.mark.parametrize("name", BUILT + OPS)
def test_reference_equals_onnxruntime(models: dict[str, Path], name: str) -> None:
    """Outputs and every quantized value of the graph (all IR tensors with an ONNX twin)."""
    path = models[name]
    g = api.plan(path).graph
    xs = _inputs(name, g)
    tids = [t.id for t in g.tensors if t.data is None]
    ref = run_onnx_reference(path, xs, g, tensor_ids=tids)
    saturates = uint8_activations(path) and ort_saturates_u8s8()
    if saturates or (ort_add_departs() and uses_op(path, "QLinearAdd", "Add")):
        r = api.compare(path, inputs=xs)  # the compiled model against the reference
        so = r.second_opinion
        assert r.ok and so is not None, str(r)
        why = "saturating u8 x s8 kernel" if saturates else "QLinearAdd otherwise"
        assert so["mismatches"] == 0 or why in so["explanation"], str(r)
        return
    ort = run_onnxruntime(path, xs, g, tensor_ids=tids)
    assert ref.tensors[0] and ref.tensors[0].keys() == ort.tensors[0].keys()
    assert len(ref.tensors) == len(ort.tensors)
    for a, b in zip(ref.outputs, ort.outputs, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for s, (a, b) in enumerate(zip(ref.tensors, ort.tensors, strict=True)):
        for tid in a:
            assert np.array_equal(a[tid], b[tid]), f"{name} sample {s}: {g.t(tid).name} differs"


def test_u8s8_probe_runs() -> None:
    """The probe runs onnxruntime once and answers a bool (cached)."""
    ort_saturates_u8s8.cache_clear()
    first = ort_saturates_u8s8()
    assert isinstance(first, bool) and ort_saturates_u8s8() is first
    assert ort_saturates_u8s8.cache_info().hits >= 1


# ---------------------------------------------------------------- single-op models


def _model(nodes: list, inputs: list, outputs: list, inits: list, opset: int = 17) -> bytes:
    g = helper.make_graph(nodes, "m", inputs, outputs, inits)
    ops = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m.SerializeToString()


def _io(name: str, dtype: type, shape: list[int] | None):
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return helper.make_tensor_value_info(name, elem, shape)


def _c(name: str, v: object, dtype: type) -> object:
    return numpy_helper.from_array(np.asarray(v, dtype), name)


def _both(data: bytes, feed: dict[str, np.ndarray]) -> tuple[list, list]:
    return ort_session(data).run(None, feed), NumpySession(data).run(None, feed)


def _same(a: list, b: list) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)


def test_mul_adds_the_zero_point_in_float() -> None:
    """QLinearMul on all 65536 int8 pairs with scales where MLAS's float32 ``+ c_zp`` before
    rounding differs from rounding first (8 pairs)."""
    sc = [F32(0.0141), F32(0.0073), F32(0.0146)]
    inits = [_c("as", sc[0], F32), _c("az", -13, np.int8), _c("bs", sc[1], F32),
             _c("bz", -25, np.int8), _c("cs", sc[2], F32), _c("cz", 49, np.int8)]  # fmt: skip
    node = helper.make_node("QLinearMul", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                            domain=MS)  # fmt: skip
    data = _model([node], [_io("a", np.int8, [65536]), _io("b", np.int8, [65536])],
                  [_io("c", np.int8, None)], inits)  # fmt: skip
    a, b = (x.reshape(-1) for x in all_pairs())
    ort, ref = _both(data, {"a": a, "b": b})
    _same(ort, ref)
    prod = ((a.astype(np.int64) + 13) * (b.astype(np.int64) + 25)).astype(F32)
    rounded_first = np.clip(np.rint(prod * ((sc[0] * sc[1]) / sc[2])) + 49, -128, 127)
    assert np.count_nonzero(rounded_first != ref[0]) == 8  # the case the test is about


@pytest.mark.parametrize("near", ["ceil", "round_prefer_ceil", "floor"])
def test_resize_keeps_axes_of_scale_one(near: str) -> None:
    """onnxruntime maps an axis of scale 1 one to one, even where the coordinate
    transformation would move it (tf_half_pixel_for_nn with ceil)."""
    node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn",
                            nearest_mode=near)  # fmt: skip
    inits = [_c("sz", [1, 2, 3, 7], np.int64)]
    data = _model([node], [_io("x", np.int8, [1, 2, 3, 4])], [_io("y", np.int8, None)], inits)
    x = np.arange(24, dtype=np.int8).reshape(1, 2, 3, 4)
    _same(*_both(data, {"x": x}))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("depth", [1, 2, 3, 5, 7, 13, 100])
def test_softmax(dtype: type, depth: int) -> None:
    """QLinearSoftmax on random rows, ties (two equal maxima) and saturating rows (one dominant
    value: int8 saturates to 127, onnxruntime 1.32), at scales with odd ``floor(1 / y_scale)``
    and ones large enough that ``e * floor(1 / y_scale)`` passes FLT_MAX in float32."""
    rng = np.random.default_rng(depth)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    x = rng.integers(lo, hi + 1, (3000, depth)).astype(dtype)
    x[:1000, 0] = x[:1000].max(axis=1)
    x[:1000, -1] = x[:1000, 0]
    x[1000:1500] = lo
    x[1000:1500, 0] = hi
    for xs, ys, yz in ((0.25, 1 / 256, lo), (0.4539, 0.018726, lo + 109), (0.1, 0.001, lo + 3)):
        inits = [_c("xs", xs, F32), _c("xz", 0, dtype), _c("ys", ys, F32), _c("yz", yz, dtype)]
        node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"],
                                domain=MS, axis=-1, opset=13)  # fmt: skip
        data = _model([node], [_io("x", dtype, list(x.shape))], [_io("y", dtype, None)], inits)
        _same(*_both(data, {"x": x}))


def test_fma32_is_correctly_rounded() -> None:
    """The vectorized float32 fused multiply-add against exact rationals, on random operands
    and on sums built to land exactly halfway between two float32 (the double-rounding case)."""
    rng = np.random.default_rng(0)
    # a * b = +-2^-24 (1 - 2^-36) * 2^e: c plus it lies 2^-60 * 2^e from a float32 midpoint,
    # which the float64 sum rounds onto; c's last bit decides which way ties-to-even goes
    c_tie = (F32(1.0) + F32(2.0**-23) * np.arange(8)).astype(F32)
    c_tie = np.concatenate([c_tie, -c_tie, c_tie * F32(2.0**40), c_tie * F32(2.0**-30)])
    e = np.round(np.log2(np.abs(c_tie))).astype(np.int64)
    sign = np.tile([1.0, -1.0], c_tie.size // 2).astype(F32)
    a = np.concatenate([rng.normal(0, 1, 3000), np.full(c_tie.size, 1 + 2.0**-18)]).astype(F32)
    b_tie = sign * np.ldexp(F32(1.0) - F32(2.0**-18), e - 24).astype(F32)
    b = np.concatenate([rng.normal(0, 1, 3000), b_tie]).astype(F32)
    c = np.concatenate([rng.normal(0, 1, 3000), c_tie]).astype(F32)
    got = K.fma32(a, b, c)
    naive_wrong = 0
    for x, y, z, r in zip(a, b, c, got, strict=True):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        near = [np.nextafter(r, F32(-np.inf)), r, np.nextafter(r, F32(np.inf))]
        errs = [abs(Fraction(float(v)) - exact) for v in near]
        assert errs[1] < min(errs[0], errs[2]), (x, y, z)
        naive_wrong += F32(float(x) * float(y) + float(z)) != r
    assert naive_wrong >= 8  # the double-rounding cases were exercised


def test_unknown_operator_is_named() -> None:
    node = helper.make_node("QLinearWhere", ["x", "s", "z", "s", "z"], ["y"], domain=MS,
                            name="where")  # fmt: skip
    inits = [_c("s", 0.1, F32), _c("z", 0, np.int8)]
    data = _model([node], [_io("x", np.int8, [4])], [_io("y", np.int8, None)], inits)
    with pytest.raises(CompileError, match="node 'where'.*QLinearWhere") as e:
        NumpySession(data).run(None, {"x": np.zeros(4, np.int8)})
    assert e.value.op_kind == "QLinearWhere"


def test_second_opinion_line() -> None:
    so = {"name": "onnxruntime 1.32.0", "mismatches": 3, "output_mismatches": 1,
          "explanation": "why"}  # fmt: skip
    r = CompareReport("m.onnx", 2, 0, 0.0, 0, second_opinion=so)
    assert str(r).splitlines()[-1] == (
        "  second opinion, onnxruntime 1.32.0: differs by 3 bytes (1 in outputs): why"
    )
    r.second_opinion = None
    assert "onnxruntime is not installed" in str(r)
    assert CompareReport("m.tflite", 2, 0, 0.0, 0).second_opinion_line() is None


# ---------------------------------------------------------------- onnx.reference


def _evaluator(data: bytes, feed: dict[str, np.ndarray]) -> tuple[list, list]:
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_from_string(data)
    return ReferenceEvaluator(model).run(None, feed), NumpySession(data).run(None, feed)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_dequantize_match_onnx_reference(dtype: type, per_axis: bool) -> None:
    """QuantizeLinear (float32 division, ties to even: exact half steps at power-of-two scales,
    saturation) and DequantizeLinear of every value, per tensor and per axis 1."""
    rng = np.random.default_rng(1)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    scale = np.array([0.25, 0.0625, 0.0371, 2.0], F32) if per_axis else np.array(0.125, F32)
    zps = [lo + 3, 0 - lo // 2, hi - 7, lo + 128] if per_axis else lo + 100
    zp = np.array(zps, dtype)
    steps = rng.integers(-300, 300, (64, 4)) + 0.5  # exact halves: ties
    s4 = np.broadcast_to(scale, (4,)).astype(F32)
    x = np.concatenate([(steps * s4).astype(F32), rng.normal(0, 20, (64, 4)).astype(F32)])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]  # fmt: skip
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "z")]
    outs = [_io("q", dtype, None), _io("y", F32, None)]
    data = _model(nodes, [_io("x", F32, [128, 4])], outs, inits, opset=19)
    theirs, ours = _evaluator(data, {"x": x})
    _same(theirs, ours)
    every = np.arange(256, dtype=np.uint8).view(dtype).reshape(64, 4)
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)
    data = _model([node], [_io("q", dtype, [64, 4])], [_io("y", F32, None)], inits, opset=19)
    _same(*_evaluator(data, {"q": every}))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_qlinear_matmul_matches_onnx_reference(dtype: type) -> None:
    """Power-of-two scales (many exact halves: ties), accumulators below 2^24."""
    rng = np.random.default_rng(2)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    b = rng.integers(-127, 128, (24, 6)).astype(np.int8)
    inits = [_c("as", 0.5, F32), _c("az", lo + 121, dtype), _c("b", b, np.int8),
             _c("bs", [2.0**-k for k in (3, 4, 5, 6, 7, 8)], F32), _c("bz", 0, np.int8),
             _c("ys", 2.0, F32), _c("yz", lo + 130, dtype)]  # fmt: skip
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"])  # fmt: skip
    data = _model([node], [_io("a", dtype, [200, 24])], [_io("y", dtype, None)], inits)
    a = rng.integers(lo, hi + 1, (200, 24)).astype(dtype)
    _same(*_evaluator(data, {"a": a}))


@pytest.mark.parametrize("group", [1, 2, 6])
def test_qlinear_conv_matches_onnx_reference(group: int) -> None:
    """Grouped / depthwise convolutions with strides, dilations, asymmetric pads, a bias and
    per-channel power-of-two scales (ties), accumulators below 2^24."""
    rng = np.random.default_rng(group)
    w = rng.integers(-127, 128, (6, 6 // group, 3, 3)).astype(np.int8)
    inits = [_c("xs", 0.25, F32), _c("xz", 7, np.int8), _c("w", w, np.int8),
             _c("ws", [2.0**-k for k in range(2, 8)], F32), _c("wz", np.zeros(6), np.int8),
             _c("ys", 1.0, F32), _c("yz", -4, np.int8),
             _c("b", rng.integers(-400, 400, 6), np.int32)]  # fmt: skip
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], group=group, strides=[2, 1], dilations=[1, 2],
                            pads=[1, 2, 0, 1], kernel_shape=[3, 3])  # fmt: skip
    data = _model([node], [_io("x", np.int8, [2, 6, 9, 8])], [_io("y", np.int8, None)], inits)
    x = rng.integers(-128, 128, (2, 6, 9, 8)).astype(np.int8)
    _same(*_evaluator(data, {"x": x}))


def test_add_probe_runs() -> None:
    """The QLinearAdd probe runs onnxruntime and the reference once and answers a bool."""
    ort_add_departs.cache_clear()
    assert isinstance(ort_add_departs(), bool) and ort_add_departs.cache_info().misses == 1
