"""Operators: one unit per operator, in its own module, discovered (not listed).

See ``base`` for the contract (``attrs`` -> ``prepare`` -> ``lower``) and ``lowering`` for the
driver the planner calls. Shared pieces: ``common`` (options, quantization checks, clamps),
``conv_common`` (window geometry, weights, requantization), ``broadcast`` (binary elementwise
loops), ``tables`` (activation lookup tables). Adding an operator: docs/adding_an_op.md.
"""

from .base import (
    DEFAULT_CHOICE,
    OPS,
    Choice,
    LowerCtx,
    Operator,
    Prepared,
    decode,
    fail,
    load_all,
    own_types,
    register,
    unit_of,
)
from .lowering import (
    ConstArray,
    LoweredOp,
    Lowering,
    ParamStruct,
    PreparedOp,
    check_graph,
    fold_constants,
    lower,
    prepare_graph,
)

__all__ = [
    "DEFAULT_CHOICE",
    "OPS",
    "Choice",
    "ConstArray",
    "LowerCtx",
    "LoweredOp",
    "Lowering",
    "Operator",
    "ParamStruct",
    "Prepared",
    "PreparedOp",
    "check_graph",
    "decode",
    "fail",
    "fold_constants",
    "load_all",
    "lower",
    "own_types",
    "prepare_graph",
    "register",
    "unit_of",
]
