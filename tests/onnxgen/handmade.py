"""QOperator models written by hand with onnx.helper: scales chosen so that requantization
lands exactly on halves (round-half-to-even ties) and saturates, which calibrated models rarely
do. Deterministic (fixed seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def _model(name: str, nodes: list, inits: list, inputs: dict[str, list[int]],
           outputs: list[str], *, ms: bool = False) -> onnx.ModelProto:  # fmt: skip
    """A model of ``nodes`` with float inputs (name -> shape) and outputs, at opset 17 (and
    ``com.microsoft`` 1 with ``ms``), IR version 8."""
    ins = [
        helper.make_tensor_value_info(x, TensorProto.FLOAT, shape) for x, shape in inputs.items()
    ]
    outs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, None) for y in outputs]
    g = helper.make_graph(nodes, name, ins, outs, inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(MS, 1)] if ms else [])
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    return m


def _c(name: str, arr: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(arr, name)


def ties(dtype: type = np.int8) -> onnx.ModelProto:
    """Q -> QLinearConv (per channel, power-of-two scales) -> Flatten -> QLinearMatMul
    (scale 2^-5) -> QLinearAdd (ratios 1/2 and 3/2) -> DQ. ``dtype``: activation type."""
    rng = np.random.default_rng(11)

    def zp(v: int) -> np.ndarray:
        return np.array(v, dtype)

    off = 128 if dtype == np.uint8 else 0
    inits = [
        _c("xs", np.array(0.25, np.float32)), _c("xz", zp(3 + off)),
        _c("w", rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8)),
        _c("ws", np.array([0.5, 0.25, 0.125, 1.0], np.float32)), _c("wz", np.zeros(4, np.int8)),
        _c("cs", np.array(4.0, np.float32)), _c("cz", zp(-5 + off)),
        _c("cb", rng.integers(-300, 300, 4).astype(np.int32)),
        _c("m", rng.integers(-127, 128, (12, 10)).astype(np.int8)),
        _c("ms", np.array(0.5, np.float32)), _c("mz", np.array(0, np.int8)),
        _c("ys", np.array(16.0, np.float32)), _c("yz", zp(1 + off)),
        _c("bq", rng.integers(-100, 100, 10).astype(dtype if off else np.int8)),
        _c("bs", np.array(48.0, np.float32)), _c("bz", zp(2 + off)),
        _c("os", np.array(32.0, np.float32)), _c("oz", zp(-1 + off)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "cs", "cz", "cb"],
                         ["c"], kernel_shape=[3, 3], pads=[1, 0, 1, 0], strides=[2, 2]),
        helper.make_node("Flatten", ["c"], ["f"], axis=1),
        helper.make_node("QLinearMatMul", ["f", "cs", "cz", "m", "ms", "mz", "ys", "yz"], ["mm"]),
        helper.make_node("QLinearAdd", ["mm", "ys", "yz", "bq", "bs", "bz", "os", "oz"],
                         ["a"], domain=MS),
        helper.make_node("DequantizeLinear", ["a", "os", "oz"], ["y"]),
    ]  # fmt: skip
    return _model("ties", nodes, inits, {"x": [1, 2, 5, 3]}, ["y"], ms=True)


def binary(dtype: type = np.int8) -> onnx.ModelProto:
    """QLinearAdd and QLinearMul of two graph inputs of 4096 values (16 samples feed every
    pair), and QLinearAdd of a one-value constant (onnxruntime's scalar-B path). The Add's
    scales make 117 of the pairs depend on MLAS's fused multiply-adds (an unfused float formula
    differs there)."""
    off = 128 if dtype == np.uint8 else 0

    def zp(v: int) -> np.ndarray:
        return np.array(v + off, dtype)

    def sc(v: float) -> np.ndarray:
        return np.array(v, np.float32)

    inits = [
        _c("as", sc(0.0144)), _c("az", zp(11)), _c("bs", sc(0.0209)), _c("bz", zp(-5)),
        _c("cs", sc(0.0094)), _c("cz", zp(-4)), _c("ms", sc(0.113)), _c("mz", zp(-20)),
        _c("k", zp(77)), _c("ks", sc(0.0093)), _c("kz", zp(-1)), _c("ss", sc(0.0219)),
        _c("sz", zp(6)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x1", "as", "az"], ["a"]),
        helper.make_node("QuantizeLinear", ["x2", "bs", "bz"], ["b"]),
        helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"],
                         domain=MS),
        helper.make_node("QLinearMul", ["a", "as", "az", "b", "bs", "bz", "ms", "mz"], ["m"],
                         domain=MS),
        helper.make_node("QLinearAdd", ["a", "as", "az", "k", "ks", "kz", "ss", "sz"], ["s"],
                         domain=MS),
        helper.make_node("DequantizeLinear", ["c", "cs", "cz"], ["yc"]),
        helper.make_node("DequantizeLinear", ["m", "ms", "mz"], ["ym"]),
        helper.make_node("DequantizeLinear", ["s", "ss", "sz"], ["ys"]),
    ]  # fmt: skip
    shape = [1, 64, 64]
    return _model("binary", nodes, inits, {"x1": shape, "x2": shape}, ["yc", "ym", "ys"], ms=True)


def wide() -> onnx.ModelProto:
    """QLinearMatMul over 2048 values whose accumulators pass 2^24 (so ``float(acc)`` rounds),
    with power-of-two scales (ties) and an odd one."""
    rng = np.random.default_rng(12)
    b = rng.integers(100, 128, (2048, 8)) * np.array([1, -1, 1, -1, 1, -1, 1, -1])
    inits = [
        _c("xs", np.array(0.5, np.float32)), _c("xz", np.array(-20, np.int8)),
        _c("b", b.astype(np.int8)),
        _c("bs", np.array([2.0**-16, 2.0**-17, 2.0**-15, 0.3e-5, 2.0**-16, 2.0**-14, 1e-5,
                           2.0**-16], np.float32)),
        _c("bz", np.zeros(8, np.int8)),
        _c("ys", np.array(2.0, np.float32)), _c("yz", np.array(-3, np.int8)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    return _model("wide", nodes, inits, {"x": [1, 2048]}, ["y"])


def wzp(dtype: type = np.int8) -> onnx.ModelProto:
    """Weights with a nonzero zero point (the real weight is ``w - zero_point``), which the
    frontend cannot fold into int8 values: QLinearConv (3x3, 2 -> 6 channels, per-channel
    scales) and QLinearMatMul, with uint8 weights of zero point 255 and uint8 activations
    (``dtype`` np.uint8), or int8 weights of zero point -13 and int8 activations."""
    rng = np.random.default_rng(14)
    u8 = dtype == np.uint8
    off, wz = (128, 255) if u8 else (0, -13)
    w = rng.integers(0, 256, (6, 2, 3, 3)) if u8 else rng.integers(-128, 128, (6, 2, 3, 3))
    b = rng.integers(0, 256, (72, 5)) if u8 else rng.integers(-128, 128, (72, 5))
    if u8:  # odd units: large values only (w - 255 then fits int8: folded), even ones: any
        w[1::2], b[:, 1::2] = 255 - (255 - w[1::2]) // 3, 255 - (255 - b[:, 1::2]) // 2

    inits = [
        _c("xs", np.array(0.05, np.float32)), _c("xz", np.array(7 + off, dtype)),
        _c("w", w.astype(dtype)), _c("ws", np.array([0.004, 0.003, 0.005, 0.002, 0.0041, 0.0035],
                                                     np.float32)),
        _c("wz", np.full(6, wz, dtype)), _c("cb", rng.integers(-2000, 2000, 6).astype(np.int32)),
        _c("cs", np.array(0.09 if u8 else 0.06, np.float32)), _c("cz", np.array(-9 + off, dtype)),
        _c("b", b.astype(dtype)), _c("bs", np.array(0.003, np.float32)),
        _c("bz", np.array(wz, dtype)),
        _c("ys", np.array(0.5 if u8 else 0.25, np.float32)), _c("yz", np.array(4 + off, dtype)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "cs", "cz", "cb"],
                         ["c"], kernel_shape=[3, 3], pads=[1, 1, 0, 0]),
        helper.make_node("Flatten", ["c"], ["f"], axis=1),
        helper.make_node("QLinearMatMul", ["f", "cs", "cz", "b", "bs", "bz", "ys", "yz"], ["mm"]),
        helper.make_node("DequantizeLinear", ["mm", "ys", "yz"], ["y"]),
    ]  # fmt: skip
    return _model("wzp", nodes, inits, {"x": [1, 2, 4, 5]}, ["y"])


def sweep() -> onnx.ModelProto:
    """The ONNX requantization over many scales in one layer: a QLinearMatMul of 16 rows of 48
    values by 64 units whose scales (x_scale * b_scale[u] / y_scale) take every float32 exponent
    the kernels' integer form accepts (2^-17 .. 2^6), power-of-two ones (exact halves) and odd
    mantissas, each unit's weights scaled so that its outputs stay in int8's range; then a
    per-tensor QLinearMatMul with a power-of-two scale. Runs on FULLY_CONNECTED's kernels."""
    rng = np.random.default_rng(15)
    e = np.repeat(np.arange(-17, 7), 2)
    e = np.concatenate([e, rng.integers(-17, 7, 64 - e.size)])
    mant = np.where(np.arange(64) % 3 == 0, 1.0, rng.uniform(1.0, 2.0, 64))
    s = (mant * 2.0**e).astype(np.float32)  # the product scale wanted per unit
    bs = (s * np.float32(2.0) / np.float32(0.25)).astype(np.float32)  # ys = 2, xs = 0.25
    # |acc| of a unit ~ 48 * 40 * |w| / 2: keep |acc * s| around 100 where int8 weights allow
    mag = np.clip(np.rint(100.0 / (s.astype(np.float64) * 48 * 20)), 1, 127).astype(np.int64)
    b = (rng.uniform(-1, 1, (48, 64)) * mag).round().astype(np.int8)
    b2 = rng.integers(-127, 128, (64, 10)).astype(np.int8)
    inits = [
        _c("xs", np.array(0.25, np.float32)), _c("xz", np.array(-6, np.int8)),
        _c("b", b), _c("bs", bs), _c("bz", np.zeros(64, np.int8)),
        _c("ys", np.array(2.0, np.float32)), _c("yz", np.array(5, np.int8)),
        _c("b2", b2), _c("b2s", np.array(2.0**-9, np.float32)), _c("b2z", np.array(0, np.int8)),
        _c("zs", np.array(0.5, np.float32)), _c("zz", np.array(-3, np.int8)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["h"]),
        helper.make_node("QLinearMatMul", ["h", "ys", "yz", "b2", "b2s", "b2z", "zs", "zz"],
                         ["z"]),
        helper.make_node("DequantizeLinear", ["z", "zs", "zz"], ["y"]),
    ]  # fmt: skip
    return _model("sweep", nodes, inits, {"x": [16, 48]}, ["y"])


def pads() -> onnx.ModelProto:
    """Pads beyond the window and asymmetric ones on the TFLite kernels: a QLinearConv 3x3 with
    pads (top, left, bottom, right) = (2, 3, 2, 1) (border outputs whose window holds no input
    tap but one or two columns), then a depthwise one with (3, 2, 0, 2) and strides (1, 2)."""
    rng = np.random.default_rng(16)
    inits = [
        _c("xs", np.array(0.05, np.float32)), _c("xz", np.array(3, np.int8)),
        _c("w", rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)),
        _c("ws", np.full(8, 0.01, np.float32)), _c("wz", np.zeros(8, np.int8)),
        _c("ys", np.array(0.3, np.float32)), _c("yz", np.array(-5, np.int8)),
        _c("b", rng.integers(-500, 500, 8).astype(np.int32)),
        _c("d", rng.integers(-127, 128, (8, 1, 3, 3)).astype(np.int8)),
        _c("ds", np.full(8, 0.02, np.float32)), _c("dz", np.zeros(8, np.int8)),
        _c("zs", np.array(0.2, np.float32)), _c("zz", np.array(2, np.int8)),
        _c("db", rng.integers(-500, 500, 8).astype(np.int32)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                         ["c"], kernel_shape=[3, 3], pads=[2, 3, 2, 1]),
        helper.make_node("QLinearConv", ["c", "ys", "yz", "d", "ds", "dz", "zs", "zz", "db"],
                         ["e"], kernel_shape=[3, 3], pads=[3, 2, 0, 2], strides=[1, 2], group=8),
        helper.make_node("DequantizeLinear", ["e", "zs", "zz"], ["y"]),
    ]  # fmt: skip
    return _model("pads", nodes, inits, {"x": [1, 4, 6, 7]}, ["y"])


def qdq_act() -> onnx.ModelProto:
    """QDQ chains the quantizer leaves when it cannot fold an activation: DQ -> Relu -> Q (the
    output zero point above the minimum, so the Relu matters), DQ -> Clip -> Q, and a bare
    DQ -> Q changing the parameters."""

    def f32(v: float) -> np.ndarray:
        return np.array(v, np.float32)

    def i8(v: int) -> np.ndarray:
        return np.array(v, np.int8)

    inits = [
        _c("s0", f32(0.05)), _c("z0", i8(3)), _c("s1", f32(0.03)), _c("z1", i8(-100)),
        _c("lo", f32(-0.5)), _c("hi", f32(0.7)), _c("s2", f32(0.004)), _c("z2", i8(-10)),
        _c("s3", f32(0.0061)), _c("z3", i8(5)),
    ]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q0"]),
        helper.make_node("DequantizeLinear", ["q0", "s0", "z0"], ["d0"]),
        helper.make_node("Relu", ["d0"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s1", "z1"], ["q1"]),
        helper.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]),
        helper.make_node("Clip", ["d1", "lo", "hi"], ["c"]),
        helper.make_node("QuantizeLinear", ["c", "s2", "z2"], ["q2"]),
        helper.make_node("DequantizeLinear", ["q2", "s2", "z2"], ["d2"]),
        helper.make_node("QuantizeLinear", ["d2", "s3", "z3"], ["q3"]),
        helper.make_node("DequantizeLinear", ["q3", "s3", "z3"], ["y"]),
    ]
    return _model("qdq_act", nodes, inits, {"x": [1, 64]}, ["y"])


def build_handmade(out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, m in (
        ("ties", ties()),
        ("ties_u8", ties(np.uint8)),
        ("qdq_act", qdq_act()),
        ("wide", wide()),
        ("binary", binary()),
        ("binary_u8", binary(np.uint8)),
        ("wzp", wzp()),
        ("wzp_u8", wzp(np.uint8)),
        ("sweep", sweep()),
        ("pads", pads()),
    ):
        p = out / f"{name}.onnx"
        onnx.save(m, p)
        made[name] = p
    return made
