"""Structure-aware mutation of a TFLite model: one to three ``s_*`` mutators, drawn by weight,
applied to a copy of the unpacked model, which is then packed again."""

from __future__ import annotations

import copy
import random
import struct
from collections.abc import Callable
from typing import Any

from .graph_mutators import (
    s_cycle,
    s_double_write,
    s_io,
    s_op_io,
    s_opkind,
    s_options,
    s_reorder,
    s_structure,
    s_wrong_options,
)
from .tensor_mutators import s_buffer, s_names, s_quant, s_shape, s_types
from .tflite_objects import pack

STRUCT_MUTATORS: list[tuple[Callable[[Any, random.Random], str], float]] = [
    (s_cycle, 1.0),
    (s_reorder, 0.7),
    (s_double_write, 0.5),
    (s_shape, 2.0),
    (s_quant, 1.5),
    (s_buffer, 1.0),
    (s_types, 0.7),
    (s_io, 0.7),
    (s_op_io, 1.0),
    (s_opkind, 1.5),
    (s_options, 2.0),
    (s_wrong_options, 0.5),
    (s_names, 0.5),
    (s_structure, 0.5),
]


def mutate_model(model: Any, rng: random.Random) -> tuple[bytes, str]:
    """Apply one to three structural mutations to a copy of ``model``; returns packed bytes."""
    fns, weights = zip(*STRUCT_MUTATORS, strict=True)
    for _attempt in range(8):
        m = copy.deepcopy(model)
        descs = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            try:
                descs.append(rng.choices(fns, weights)[0](m, rng))
            except (IndexError, ValueError, TypeError, AttributeError, OverflowError):
                descs.append("(skipped)")  # the previous mutation removed what this one needs
        try:
            return pack(m), "; ".join(descs)
        except (TypeError, ValueError, OverflowError, struct.error):
            continue  # a value out of its field's range: draw again
    return pack(copy.deepcopy(model)), "unmodified (no packable mutant)"
