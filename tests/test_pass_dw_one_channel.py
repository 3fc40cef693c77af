"""The one-channel depthwise pass (passes/dw_one_channel.py) on made-up graphs: a
DEPTHWISE_CONV_2D over one input channel becomes a CONV_2D with the depth multiplier's filters
of depth 1 (weights transposed, per-channel axis 3 -> 0, bias and attributes kept); any other
depthwise layer stays; the graph handed in is unchanged. Bit-exactness against TFLM, which runs
the original depthwise layer: tests/test_kernels_fast_few.py."""

from __future__ import annotations

import numpy as np
import pytest

from tinycompile.ir import Graph, Op, Quant, Tensor
from tinycompile.passes import PASSES, dw_one_channel_to_conv, fold_pads, run_passes
from tinycompile.pipeline import check_graph

ATTRS = {
    "padding": "SAME",
    "stride": (2, 2),
    "dilation": (1, 1),
    "activation": "RELU",
    "depth_multiplier": 4,
}


def _q(n: int = 1, axis: int = 0) -> Quant:
    return Quant(np.linspace(0.01, 0.02, n).astype(np.float32), np.zeros(n, np.int64), axis)


def _graph(in_c: int = 1, dm: int = 4, per_channel: bool = True, dtype: str = "int8") -> Graph:
    oc = in_c * dm
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (1, 3, 5, oc)).astype(np.int8)
    ts = [
        Tensor(0, "x", (1, 9, 11, in_c), dtype, _q()),
        Tensor(1, "w", (1, 3, 5, oc), "int8", _q(oc, 3) if per_channel else _q(), w),
        Tensor(2, "b", (oc,), "int32", None, np.arange(oc, dtype=np.int32)),
        Tensor(3, "y", (1, 5, 6, oc), dtype, _q()),
    ]
    attrs = dict(ATTRS, depth_multiplier=dm)
    return Graph("g", ts, [Op(0, "DEPTHWISE_CONV_2D", [0, 1, 2], [3], attrs)], [0], [3])


@pytest.mark.parametrize("per_channel", [True, False])
@pytest.mark.parametrize("dm", [1, 4, 8])
def test_one_channel_depthwise_becomes_a_conv(dm: int, per_channel: bool) -> None:
    g = _graph(1, dm, per_channel)
    out = dw_one_channel_to_conv(g)
    op = out.ops[0]
    assert (op.kind, op.index, op.outputs) == ("CONV_2D", 0, [3])
    assert op.inputs[0] == 0 and op.inputs[2] == 2 and op.inputs[1] == len(g.tensors)
    assert "depth_multiplier" not in op.attrs
    assert {k: v for k, v in ATTRS.items() if k != "depth_multiplier"}.items() <= op.attrs.items()
    w, w0 = out.t(op.inputs[1]), g.t(1)
    assert w.shape == (dm, 3, 5, 1) and w.dtype == "int8"
    for m in range(dm):  # filter m is the depthwise layer's channel m
        assert np.array_equal(w.data[m, :, :, 0], w0.data[0, :, :, m])
    assert np.array_equal(w.quant.scale, w0.quant.scale)
    assert w.quant.axis == 0
    assert not check_graph(out)  # the CONV_2D unit prepares it
    # the given graph is unchanged
    assert g.ops[0].kind == "DEPTHWISE_CONV_2D" and g.ops[0].attrs["depth_multiplier"] == dm
    assert len(g.tensors) == 4 and g.t(1).shape == (1, 3, 5, dm) and g.t(1).quant.axis in (0, 3)


@pytest.mark.parametrize(
    "g",
    [
        _graph(in_c=2, dm=4),  # two channels: a real depthwise layer
        _graph(in_c=3, dm=1),
        _graph(dtype="int16"),  # 16x8 keeps its kernel
    ],
    ids=["in_c2", "in_c3", "int16"],
)
def test_other_depthwise_layers_stay(g: Graph) -> None:
    out = dw_one_channel_to_conv(g)
    assert out.ops[0] is g.ops[0] and len(out.tensors) == len(g.tensors)


def test_inconsistent_layers_stay_for_the_unit_to_refuse() -> None:
    g = _graph()
    g.ops[0].attrs["depth_multiplier"] = 3  # 4 weights channels: the depthwise unit refuses
    assert dw_one_channel_to_conv(g).ops[0].kind == "DEPTHWISE_CONV_2D"
    g = _graph()
    g.ops[0] = Op(0, "DEPTHWISE_CONV_2D", [0, 1, 2], [3], options={"padding": 0})  # undecoded
    assert dw_one_channel_to_conv(g).ops[0] is g.ops[0]
    g = _graph()
    g.tensors[1] = Tensor(1, "w", (1, 3, 5, 4), "int8", _q(4, 3))  # not a constant
    assert dw_one_channel_to_conv(g).ops[0].kind == "DEPTHWISE_CONV_2D"


def test_registered_after_fold_pads_and_run() -> None:
    assert PASSES.index(dw_one_channel_to_conv) == PASSES.index(fold_pads) + 1
    out = run_passes(_graph())
    assert out.ops[0].kind == "CONV_2D"
