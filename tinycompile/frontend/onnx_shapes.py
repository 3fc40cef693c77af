"""The output shape of ONNX's reshape-like operators (Reshape, Flatten, Squeeze, Unsqueeze):
ops that keep every element in its row-major place. The reader uses it for those ops on
quantized tensors and for a float graph input reshaped before its QuantizeLinear (what
``quant_pre_process`` writes in front of a Gemm)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .onnx_core import attr_of

RESHAPES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


def reshaped(
    n: Any, shape: tuple[int, ...], const: Callable[[str, str], np.ndarray]
) -> tuple[int, ...]:
    """The shape ``n`` (one of ``RESHAPES``) gives a tensor of ``shape``; ``const(name, what)``
    reads a constant input. Raises ValueError with the reason where the node's description
    does not fit the input."""
    rank = len(shape)
    if n.op_type == "Flatten":
        axis = int(attr_of(n, "axis", 1))
        if not -rank <= axis <= rank:
            raise ValueError(f"axis {axis} is out of range for rank {rank}")
        axis += rank if axis < 0 else 0
        lead = math.prod(shape[:axis])
        return (lead, math.prod(shape) // lead if lead else 0)
    if n.op_type == "Reshape":
        want = [int(v) for v in const(n.input[1], "shape").reshape(-1)]
        if want.count(-1) > 1 or any(v < -1 or (v == 0 and i >= rank) for i, v in enumerate(want)):
            raise ValueError(f"shape {want[:8]} is not a valid Reshape target")
        want = [shape[i] if v == 0 else v for i, v in enumerate(want)]
        if -1 in want:
            known = math.prod(v for v in want if v != -1)
            if not 0 < known <= math.prod(shape) or math.prod(shape) % known:
                raise ValueError(f"cannot reshape {list(shape)} into {want[:8]}")
            want[want.index(-1)] = math.prod(shape) // known
        if math.prod(want) != math.prod(shape):
            raise ValueError(f"cannot reshape {list(shape)} into {want[:8]}")
        return tuple(want)
    if len(n.input) > 1 and n.input[1]:
        axes = [int(v) for v in const(n.input[1], "axes").reshape(-1)]
    else:
        axes = [int(v) for v in attr_of(n, "axes", [])]
    if n.op_type == "Squeeze":
        if not axes:
            return tuple(d for d in shape if d != 1)
        axes = sorted({a % rank if -rank <= a < rank else -1 for a in axes})
        if -1 in axes or any(shape[a] != 1 for a in axes):
            raise ValueError(f"cannot squeeze axes {axes} of {list(shape)}")
        return tuple(d for i, d in enumerate(shape) if i not in axes)
    out_rank = rank + len(axes)
    norm = sorted({a % out_rank if -out_rank <= a < out_rank else -1 for a in axes})
    if -1 in norm or len(norm) != len(axes):
        raise ValueError(f"cannot unsqueeze {list(shape)} at axes {axes}")
    rest = iter(shape)
    return tuple(1 if i in norm else next(rest) for i in range(out_rank))
