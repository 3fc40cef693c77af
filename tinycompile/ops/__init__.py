"""Operators: one unit per operator, in its own module, discovered (not listed).

See ``base`` for the contract (``attrs`` -> ``prepare`` -> ``lower``), ``prepare`` and
``lowering`` for the drivers the pipeline calls (``tinycompile.pipeline``: each op prepared once
before planning, lowered once after). Shared pieces: ``common`` (options, quantization checks,
clamps), ``conv_common`` (window geometry, weights, requantization), ``broadcast`` (binary
elementwise loops), ``tables`` (activation lookup tables). Adding an operator:
docs/adding_an_op.md.
"""

from .base import (
    DEFAULT_CHOICE,
    OPS,
    Choice,
    LowerCtx,
    Operator,
    Prepared,
    decode,
    decode_op,
    fail,
    load_all,
    own_types,
    register,
    unit_of,
)
from .lowering import ConstArray, LoweredOp, Lowering, ParamStruct, lower
from .prepare import PreparedOp, Problems, prepare_ops, problems

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
    "decode",
    "decode_op",
    "fail",
    "load_all",
    "lower",
    "own_types",
    "prepare_ops",
    "problems",
    "Problems",
    "register",
    "unit_of",
]
