"""Graph passes: rewrites between validation and preparing the ops, each a function from a
graph to a new graph (the given graph is never modified; unchanged tensors and ops are shared).

``PASSES`` runs in order (``run_passes``):

- ``decode_options`` (``decode``): each op's raw file options become its unit's typed
  attributes;
- ``transposes_to_reshapes`` (``transpose_alias``): a TRANSPOSE moving only axes of size 1
  becomes a RESHAPE (no copy, no arena);
- ``fold_constants`` (``fold``): alias ops (reshape, squeeze) of constants become constants;
- ``fold_pads`` (``pad_fold``): a zero-point PAD in front of a convolution becomes its padding;
- ``dw_one_channel_to_conv`` (``dw_one_channel``): a DEPTHWISE_CONV_2D over one input channel
  becomes the CONV_2D it is (out_c = depth multiplier filters of depth 1);
- ``add_signal_state`` (``signal_state``): TFLM's spectral subtraction (signal library) gets
  its noise estimate as a variable tensor (state kept across inferences).

One pass runs only when asked: ``int8_io`` (``--int8-io``, ``api.plan(int8_io=True)``) drops a
float interface's QUANTIZE / DEQUANTIZE (and an input TRANSPOSE after the QUANTIZE), the graph's
inputs and outputs becoming the quantized tensors; their ports keep the file's view.

A pass that changes what the planner sees (folding a PAD into the convolution after it, an input
TRANSPOSE, ...) is one more module here and one more entry in ``PASSES``, with its own tests on
made-up graphs (tests/test_passes.py). Memory choices are not passes: the planner makes them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Graph
from .decode import decode_options
from .dw_one_channel import dw_one_channel_to_conv
from .fold import fold_constants
from .pad_fold import fold_pads
from .signal_state import add_signal_state
from .transpose_alias import transposes_to_reshapes

Pass = Callable[[Graph], Graph]
PASSES: tuple[Pass, ...] = (
    decode_options,
    transposes_to_reshapes,
    fold_constants,
    fold_pads,
    dw_one_channel_to_conv,
    add_signal_state,
)


def run_passes(g: Graph, passes: tuple[Pass, ...] = PASSES) -> Graph:
    """``g`` after every pass, in order."""
    for p in passes:
        g = p(g)
    return g


__all__ = [
    "PASSES",
    "Pass",
    "add_signal_state",
    "decode_options",
    "dw_one_channel_to_conv",
    "fold_constants",
    "fold_pads",
    "run_passes",
    "transposes_to_reshapes",
]
