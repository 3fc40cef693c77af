"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: bit-exact against TFLM through the whole
pipeline (generated C built for the host, every layer compared), plus IR-level checks of what
the lowering accepts and rejects.

Models come from ``python -m tests.modelgen.ops_conv``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tinycompile import api
from tinycompile.errors import CompileError
from tinycompile.frontend.tflite import read_tflite
from tinycompile.ir import Graph
from tinycompile.ops import decode
from tinycompile.pipeline import lower_graph as lower
from tinycompile.run.reference import run_tflm

ROOT = Path(__file__).resolve().parent.parent
OPS_DIR = ROOT / "tests" / "models" / "ops"
ALL = sorted(p for fam in ("conv", "dwconv", "fc") for p in OPS_DIR.glob(f"{fam}_*.tflite"))


def _graph(name: str) -> Graph:
    p = OPS_DIR / f"{name}.tflite"
    g = read_tflite(p.read_bytes(), source=str(p))
    decode(g)  # typed attrs, as every stage after the frontend sees them
    return g


def test_models_present() -> None:
    names = {p.stem for p in ALL}
    want = {
        "conv_same_relu", "conv_valid_s2", "conv_dil2_n1to1", "conv_grouped", "conv_nobias",
        "conv_biasq3", "conv_pertensor", "dwconv_valid_s2_dm2", "dwconv_dil2_dm3",
        "dwconv_nobias", "dwconv_nobias_ref", "dwconv_pertensor", "fc_perchannel_relu",
        "fc_pertensor_relu6", "fc_nobias", "fc_keepdims", "fc_rows", "fc_rank4_input",
        "fc_pertensor_rule",
    }  # fmt: skip
    missing = want - names
    assert not missing, f"run python -m tests.modelgen.ops_conv ({sorted(missing)} missing)"


def test_dwconv_without_bias(tmp_path: Path) -> None:
    """A depthwise conv whose bias input is -1 computes what the same op with a zero bias does."""
    path, twin = OPS_DIR / "dwconv_nobias.tflite", OPS_DIR / "dwconv_nobias_ref.tflite"
    g = _graph("dwconv_nobias")
    assert [op.inputs[2] for op in g.ops if op.kind == "DEPTHWISE_CONV_2D"] == [-1]
    p = api.plan(path)
    xs = api.make_inputs(p.graph, 20, seed=3)
    res = api.run_host(p, api.generate(p, tmp_path / "proj"), xs)
    ref = run_tflm(twin, xs, n_outputs=1)
    np.testing.assert_array_equal(res.outputs[0], ref.outputs[0].reshape(res.outputs[0].shape))


def _fc_outputs(g: Graph, op, xs: np.ndarray, mult: int, shift: int) -> np.ndarray:
    """Requantized FC outputs (before zero point and clamp) of rows xs for one multiplier."""
    from tinycompile.quant.qmath import multiply_by_quantized_multiplier_np

    x, w = g.t(op.inputs[0]), g.t(op.inputs[1])
    acc = (xs.reshape(len(xs), -1).astype(np.int64) - x.quant.zp) @ w.data.astype(np.int64).T
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        acc = acc + g.t(op.inputs[2]).data.astype(np.int64)
    return multiply_by_quantized_multiplier_np(acc, mult, shift)


def test_fc_multiplier_rule() -> None:
    """Per-tensor FC: a float or a double input*filter scale product gives multipliers that
    differ in their last bits; on inputs where that changes outputs, we must agree with TFLM.
    (The inputs are found with a numpy model of the op; the verdict is TFLM's.)"""
    from tinycompile.ops.common import activation_range
    from tinycompile.quant.qmath import quantize_multiplier

    g = _graph("fc_pertensor_rule")
    op = _op(g, "FULLY_CONNECTED")
    x, w, o = g.t(op.inputs[0]), g.t(op.inputs[1]), g.t(op.outputs[0])
    assert g.inputs == [op.inputs[0]] and not w.quant.per_channel
    fprod = float(np.float32(x.quant.scale[0]) * np.float32(w.quant.scale[0]))
    dprod = float(x.quant.scale[0]) * float(w.quant.scale[0])
    mf = quantize_multiplier(fprod / float(o.quant.scale[0]))
    md = quantize_multiplier(dprod / float(o.quant.scale[0]))
    assert mf != md
    lo, hi = activation_range(op, o)
    rng = np.random.default_rng(7)
    found: list[np.ndarray] = []
    for _ in range(150):
        xs = rng.integers(-128, 128, size=(4096, *x.shape[1:]), dtype=np.int8)
        of = np.clip(_fc_outputs(g, op, xs, *mf) + o.quant.zp, lo, hi)
        od = np.clip(_fc_outputs(g, op, xs, *md) + o.quant.zp, lo, hi)
        found.extend(xs[(of != od).any(axis=1)])
        if len(found) >= 6:
            break
    assert len(found) >= 6, "no input separates the two rules"
    r = api.compare(OPS_DIR / "fc_pertensor_rule.tflite", inputs=[np.stack(found[:6])])
    assert r.ok, str(r)


def test_kernel_paths_exercised() -> None:
    """CONV_2D without groups asks for a column buffer (arena scratch: int8 im2col of k x k
    windows on the host, the int16 column GEMM of every window on Cortex-M4/M7) up to
    IM2COL_MAX_BYTES; grouped and large windows take the direct loops: the committed models
    cover each."""
    want = {
        "conv_same_relu": True,
        "conv_dil2_n1to1": True,
        "conv_pointwise": True,
        "conv_1x1_s2": True,
        "conv_grouped": False,
        "conv_wide_direct": False,
    }
    for name, im2col in want.items():
        low = lower(_graph(name))
        assert [lo.scratch_bytes > 0 for lo in low.ops] == [im2col], name


def test_options_exercised() -> None:
    """The models really carry the options they are named after."""
    seen: set[tuple] = set()
    for p in ALL:
        g = _graph(p.stem)
        for op in g.ops:
            a = op.attrs
            seen.add((op.kind, "act", a.get("activation")))
            seen.add((op.kind, "pad", a.get("padding")))
            if a.get("stride", (1, 1)) != (1, 1):
                seen.add((op.kind, "stride"))
            if a.get("dilation", (1, 1)) != (1, 1):
                seen.add((op.kind, "dilation"))
            if a.get("depth_multiplier", 1) > 1:
                seen.add((op.kind, "dm"))
            if a.get("keep_num_dims"):
                seen.add((op.kind, "keep"))
            w = g.t(op.inputs[1])
            seen.add((op.kind, "per_channel", w.quant.per_channel))
            if len(op.inputs) > 2 and op.inputs[2] < 0:
                seen.add((op.kind, "nobias"))
            if op.kind == "FULLY_CONNECTED" and len(g.t(op.inputs[0]).shape) > 2:
                seen.add((op.kind, "rank>2"))
    for kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        for act in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"):
            assert (kind, "act", act) in seen, (kind, act)
        for what in ("stride", "dilation", "nobias", ("pad", "SAME"), ("pad", "VALID")):
            key = (kind, *what) if isinstance(what, tuple) else (kind, what)
            assert key in seen, key
        assert (kind, "per_channel", True) in seen and (kind, "per_channel", False) in seen
    assert ("DEPTHWISE_CONV_2D", "dm") in seen
    for key in ("keep", "nobias", "rank>2", ("per_channel", True), ("per_channel", False)):
        full = ("FULLY_CONNECTED", *key) if isinstance(key, tuple) else ("FULLY_CONNECTED", key)
        assert full in seen, full
    for act in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"):
        assert ("FULLY_CONNECTED", "act", act) in seen, act


def test_macs() -> None:
    """MAC counts from the shapes, computed independently of the lowering."""
    cases = {
        "conv_same_relu": 9 * 9 * 8 * (3 * 3 * 3),
        "conv_grouped": 8 * 8 * 9 * (3 * 3 * 2),
        "conv_valid_s2": 5 * 4 * 6 * (3 * 3 * 4),
        "dwconv_valid_s2_dm2": 4 * 5 * 8 * (3 * 3),
        "fc_perchannel_relu": 11 * 33,
        "fc_rows": 4 * 10 * 8,
    }
    for name, want in cases.items():
        low = lower(_graph(name))
        assert [lo.macs for lo in low.ops] == [want], name


# ------------------------------------------------------------------- rejections (IR level)


def _reject(name: str, mutate: Callable[[Graph], None], match: str) -> None:
    g = copy.deepcopy(_graph(name))
    mutate(g)
    with pytest.raises(CompileError, match=match):
        lower(g)


def _op(g: Graph, kind: str):
    return next(op for op in g.ops if op.kind == kind)


def test_rejects_int16_activations() -> None:
    def m(g: Graph) -> None:
        g.t(_op(g, "CONV_2D").inputs[0]).dtype = "int16"

    _reject("conv_same_relu", m, "int16")


def test_rejects_uint8_weights() -> None:
    def m(g: Graph) -> None:
        w = g.t(_op(g, "CONV_2D").inputs[1])
        w.dtype = "uint8"
        w.data = w.data.astype(np.uint8)

    _reject("conv_same_relu", m, "uint8")


def test_rejects_hybrid_float_activations() -> None:
    def m(g: Graph) -> None:
        op = _op(g, "FULLY_CONNECTED")
        g.t(op.inputs[0]).dtype = "float32"

    _reject("fc_perchannel_relu", m, "float32")


def test_rejects_weights_format() -> None:
    def m(g: Graph) -> None:
        _op(g, "FULLY_CONNECTED").attrs["weights_format"] = 1

    _reject("fc_perchannel_relu", m, "weights format")


def test_rejects_nonzero_weight_zero_point() -> None:
    def m(g: Graph) -> None:
        w = g.t(_op(g, "DEPTHWISE_CONV_2D").inputs[1])
        w.quant.zero_point = np.full_like(w.quant.zero_point, 3)

    _reject("dwconv_same_relu6", m, "zero point")


def test_rejects_runtime_weights() -> None:
    def m(g: Graph) -> None:
        g.t(_op(g, "FULLY_CONNECTED").inputs[1]).data = None

    _reject("fc_nobias", m, "constant")


def test_rejects_int64_bias() -> None:
    def m(g: Graph) -> None:
        b = g.t(_op(g, "CONV_2D").inputs[2])
        b.dtype = "int64"
        b.data = b.data.astype(np.int64)

    _reject("conv_same_relu", m, "int64 bias")


def test_rejects_depth_multiplier_mismatch() -> None:
    def m(g: Graph) -> None:
        _op(g, "DEPTHWISE_CONV_2D").attrs["depth_multiplier"] = 3

    _reject("dwconv_valid_s2_dm2", m, "depth multiplier")


def test_rejects_unsupported_activation() -> None:
    def m(g: Graph) -> None:
        _op(g, "CONV_2D").attrs["activation"] = "TANH"

    _reject("conv_same_relu", m, "TANH")


def test_rejects_wrong_output_shape() -> None:
    def m(g: Graph) -> None:
        _op(g, "CONV_2D").attrs["padding"] = "VALID"  # output stays the SAME-padded size

    _reject("conv_same_relu", m, "output shape")


# ------------------------------------------------------------ Cortex-M builds under QEMU

QEMU_CASES = [
    ("qemu-m4", m)
    for m in (
        "conv_same_relu",
        "conv_wide_direct",
        "conv_grouped",
        "dwconv_same_relu6",
        "dwconv_dil2_dm3",
        "dwconv_5x5_s2_relu",
        "fc_rows",
        "fc_stack",
    )
] + [
    ("samd21", m)
    # conv_grouped: the one kind tc_conv_s8_m0 leaves to tc_conv2d.c's direct loops on ARMv6-M
    for m in ("conv_same_relu", "conv_wide_direct", "conv_grouped", "dwconv_same_relu6", "fc_rows")
]


@pytest.mark.qemu
@pytest.mark.parametrize("board,name", QEMU_CASES, ids=lambda v: v)
def test_matches_tflm_on_cortex_m(board: str, name: str, tmp_path: Path) -> None:
    """The Cortex-M4 build uses the SXTB16/SMLAD fast paths and the Cortex-M0+ build the
    ARMv6-M loops, neither of which the host build compiles: run both in QEMU, every layer."""
    from tinycompile.build import build_firmware
    from tinycompile.run.emulator import run_emulator

    path = OPS_DIR / f"{name}.tflite"
    p = api.plan(path)
    g = p.graph
    xs = api.make_inputs(g, 4, seed=1)
    steps = [p.lowering.ops[i].op for i in p.order]
    project = api.generate(p, tmp_path / "project")
    fw = build_firmware(project, board, variant="emulator", debug_layers=True, profile=False)
    wd = tmp_path / "run"
    wd.mkdir()
    (wd / "tc_in.bin").write_bytes(api.pack_inputs(g, xs))
    res = run_emulator(fw, wd, timeout_s=120)
    ours = api.unpack_outputs(p, res.output, 4, debug_layers=True, profile=False)
    ref = run_tflm(path, xs, tensor_ids=[op.outputs[0] for op in steps], n_outputs=1)
    for k, op in enumerate(steps):
        want = np.stack([s[op.outputs[0]].reshape(-1) for s in ref.tensors])
        np.testing.assert_array_equal(ours.layers[k].reshape(want.shape), want, f"layer {k}")
    np.testing.assert_array_equal(ours.outputs[0], ref.outputs[0].reshape(ours.outputs[0].shape))
