"""Hand-made single-op models (onnx.helper) hitting the cases where onnxruntime 1.32's arithmetic
departs from a first reading of its sources (docs/onnx.md, "The arithmetic matched, and how"):

- ``softmax`` / ``softmax_u8``: QLinearSoftmax at depths 1, 2, 3, 7, 100 and 1000, each with
  three output parameter sets: the quantizer's standard 1/256 with the type's lowest zero point
  (an output of 1.0 is 256 steps: int8 saturates it to 127), an odd ``floor(1 / y_scale)``
  (exact halves: ties) and 0.001 (``e * 1000`` overflows float32 at small depths).
- ``mul`` / ``mul_u8``: QLinearMul over all 65536 input pairs, at scales where adding the output
  zero point in float32 before rounding differs from rounding first (and, uint8, from adding the
  zero point minus 128).
- ``resize``: nearest Resize for every coordinate_transformation_mode x nearest_mode, each with
  an axis of scale 1 (given by sizes and by scales) beside one resized up or down.
- ``resize10``: Resize at opset 10 (inputs X, scales; asymmetric coordinates, "simple"
  rounding: truncation up, ceiling down).

Inputs (``softmax_inputs``, ``pair_inputs``) are IR batches for ``api.compare``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"
F32 = np.float32
SOFTMAX_DEPTHS = (1, 2, 3, 7, 100, 1000)
# (x_scale, y_scale, y_zp above the type's lowest value)
SOFTMAX_PARAMS = ((0.25, 1 / 256, 0), (0.4539, 0.018726, 109), (0.1, 0.001, 3))
MODES = ("half_pixel", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn", "align_corners")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _c(name: str, v: object, dtype: type) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(v, dtype), name)


def _io(name: str, dtype: type, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         shape)  # fmt: skip


def _model(name: str, nodes: list, ins: list, outs: list, inits: list,
           opset: int = 17) -> onnx.ModelProto:  # fmt: skip
    g = helper.make_graph(nodes, name, ins, outs, inits)
    ops = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def softmax_rows(depth: int) -> int:
    """Rows of one sample at ``depth``."""
    return max(1, 128 // depth)


def softmax(dtype: type = np.int8) -> onnx.ModelProto:
    """One QLinearSoftmax per depth and parameter set, each reading its own graph input."""
    lo = int(np.iinfo(dtype).min)
    nodes, ins, outs, inits = [], [], [], []
    for depth in SOFTMAX_DEPTHS:
        for k, (xs, ys, yz) in enumerate(SOFTMAX_PARAMS):
            t = f"d{depth}_{k}"
            inits += [_c(f"{t}_xs", xs, F32), _c(f"{t}_xz", lo + 7, dtype), _c(f"{t}_ys", ys, F32),
                      _c(f"{t}_yz", lo + yz, dtype)]  # fmt: skip
            q = [f"x_{t}", f"{t}_xs", f"{t}_xz", f"{t}_ys", f"{t}_yz"]
            nodes.append(helper.make_node("QLinearSoftmax", q, [f"y_{t}"], domain=MS, axis=-1,
                                          opset=13, name=f"softmax_{t}"))  # fmt: skip
            ins.append(_io(f"x_{t}", dtype, [softmax_rows(depth), depth]))
            outs.append(_io(f"y_{t}", dtype, None))
    return _model("softmax", nodes, ins, outs, inits)


def softmax_inputs(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` samples per input of ``softmax`` (IR int8: a uint8 model's values minus 128):
    random rows, rows whose maximum is repeated (ties), rows of one dominant value (outputs of
    1.0) and rows of equal values."""
    rng = np.random.default_rng(seed)
    xs = []
    for depth in SOFTMAX_DEPTHS:
        for _ in SOFTMAX_PARAMS:
            rows = n * softmax_rows(depth)
            x = rng.integers(-128, 128, (rows, depth))
            k = np.arange(rows) % 5
            narrow = rng.integers(90, 128, (rows, depth))  # close values: sums of many terms
            x = np.where((k == 1)[:, None], narrow, x)
            top = x.max(axis=1)
            x[k == 2, -1] = top[k == 2]  # the maximum twice (depth 1: the row itself)
            x[k == 2, depth // 2] = top[k == 2]
            x[k == 3] = -128
            x[k == 3, rng.integers(0, depth)] = 127  # one dominant value: 1.0
            x[k == 4] = rng.integers(-128, 128)  # all equal: 1 / depth each
            xs.append(x.astype(np.int8))
    return xs


# QLinearMul (a_scale, a_zp, b_scale, b_zp, c_scale, c_zp) where the order of ``+ c_zp`` and the
# rounding matters: int8, 8 pairs differ from rounding first (tests/test_onnx_reference.py's
# scales) and 300; uint8, 846 (and 569 from adding the zero point minus 128, then 128 after the
# rounding) and 8
MUL_PARAMS = {
    np.int8: ((0.0141, -13, 0.0073, -25, 0.0146, 49), (0.0165, 31, 0.015, 47, 0.0132, 34)),
    np.uint8: ((0.005, 153, 0.0135, 130, 0.0162, 121), (0.0141, 115, 0.0073, 103, 0.0146, 177)),
}


def mul(dtype: type = np.int8) -> onnx.ModelProto:
    """Two QLinearMul of graph inputs [1, 64, 64] (16 samples feed every pair)."""
    nodes, ins, outs, inits = [], [], [], []
    for k, (sa, za, sb, zb, sc, zc) in enumerate(MUL_PARAMS[dtype]):
        for name, v, t in (("as", sa, F32), ("az", za, dtype), ("bs", sb, F32),
                           ("bz", zb, dtype), ("cs", sc, F32), ("cz", zc, dtype)):  # fmt: skip
            inits.append(_c(f"{name}{k}", v, t))
        q = [f"a{k}", f"as{k}", f"az{k}", f"b{k}", f"bs{k}", f"bz{k}", f"cs{k}", f"cz{k}"]
        nodes.append(helper.make_node("QLinearMul", q, [f"c{k}"], domain=MS, name=f"mul{k}"))
        ins += [_io(f"a{k}", dtype, [1, 64, 64]), _io(f"b{k}", dtype, [1, 64, 64])]
        outs.append(_io(f"c{k}", dtype, None))
    return _model("mul", nodes, ins, outs, inits)


def pair_inputs() -> list[np.ndarray]:
    """Every (a, b) pair of IR int8 values, for both of ``mul``'s nodes."""
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(16, 64, 64)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(16, 64, 64)
    return [a, b, a, b]


def resize() -> onnx.ModelProto:
    """QuantizeLinear, then for every coordinate transformation and nearest mode two nearest
    Resizes of the [1, 2, 5, 6] input: sizes [1, 2, 5, 9] (height of scale 1, width up by 3/2)
    and scales [1, 1, 0.6, 1] (height down to 3, width of scale 1)."""
    inits = [_c("xs", 0.05, F32), _c("xz", 3, np.int8), _c("sz", [1, 2, 5, 9], np.int64),
             _c("sc", [1, 1, 0.6, 1], F32)]  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])]
    outs = []
    for mode in MODES:
        for near in NEAREST:
            for k, ins in enumerate((["xq", "", "", "sz"], ["xq", "", "sc"])):
                y = f"{mode}_{near}_{k}"
                nodes.append(helper.make_node("Resize", ins, [y], mode="nearest", name=y,
                                              coordinate_transformation_mode=mode,
                                              nearest_mode=near))  # fmt: skip
                outs.append(_io(y, np.int8, None))
    return _model("resize", nodes, [_io("x", F32, [1, 2, 5, 6])], outs, inits)


def resize10() -> onnx.ModelProto:
    """Opset 10: QuantizeLinear, then nearest Resize (X, scales) by [1, 1, 0.6, 1.7] (down and
    up by fractions), [1, 1, 1, 0.5] (a scale-1 axis, one halved) and [1, 1, 2.5, 1.3]."""
    scales = ([1, 1, 0.6, 1.7], [1, 1, 1, 0.5], [1, 1, 2.5, 1.3])
    inits = [_c("xs", 0.05, F32), _c("xz", -3, np.int8)]
    inits += [_c(f"s{k}", s, F32) for k, s in enumerate(scales)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])]
    nodes += [helper.make_node("Resize", ["xq", f"s{k}"], [f"y{k}"], mode="nearest")
              for k in range(len(scales))]  # fmt: skip
    outs = [_io(f"y{k}", np.int8, None) for k in range(len(scales))]
    return _model("resize10", nodes, [_io("x", F32, [1, 2, 5, 7])], outs, inits, opset=10)


def conv_pads() -> onnx.ModelProto:
    """QuantizeLinear, then QLinearConvs whose padding reaches past their windows: a 1x1 with
    pads 1 (a border of bias-only outputs), a chain continuing with a 3x3 with pads
    (top 3, left 1, bottom 0, right 2): its top output row's window lies wholly in padding."""
    rng = np.random.default_rng(5)
    inits = [_c("xs", 0.05, F32), _c("xz", -3, np.int8), _c("ys", 0.07, F32),
             _c("yz", 4, np.int8), _c("zs", 0.09, F32), _c("zz", -6, np.int8),
             _c("w1", rng.integers(-100, 100, (6, 4, 1, 1)), np.int8),
             _c("w3", rng.integers(-100, 100, (5, 6, 3, 3)), np.int8),
             _c("ws1", rng.uniform(0.005, 0.02, 6), F32),
             _c("ws3", rng.uniform(0.005, 0.02, 5), F32),
             _c("wz1", np.zeros(6), np.int8), _c("wz3", np.zeros(5), np.int8),
             _c("b1", rng.integers(-300, 300, 6), np.int32),
             _c("b3", rng.integers(-300, 300, 5), np.int32)]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w1", "ws1", "wz1", "ys", "yz", "b1"],
                         ["y"], pads=[1, 1, 1, 1]),
        helper.make_node("QLinearConv", ["y", "ys", "yz", "w3", "ws3", "wz3", "zs", "zz", "b3"],
                         ["z"], pads=[3, 1, 0, 2]),
    ]  # fmt: skip
    outs = [_io("y", np.int8, None), _io("z", np.int8, None)]
    return _model("conv_pads", nodes, [_io("x", F32, [1, 4, 5, 6])], outs, inits)


def build_edges(out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, m in (("softmax", softmax()), ("softmax_u8", softmax(np.uint8)), ("mul", mul()),
                    ("mul_u8", mul(np.uint8)), ("resize", resize()),
                    ("resize10", resize10()), ("conv_pads", conv_pads())):  # fmt: skip
        p = out / f"{name}.onnx"
        onnx.save(m, p)
        made[name] = p
    return made
