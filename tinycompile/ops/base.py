"""The operator contract, the registry and the lowering context.

An operator is one unit (TFLM's ``conv.h`` / ``conv_common.cc`` / ``conv.cc`` split in spirit):
a subclass of ``Operator`` in its own module under ``tinycompile/ops/``, registered with
``@register``, that

- ``attrs``: turns the model file's raw options into typed attributes (option parsing lives
  with the operator; the frontend knows no operator);
- ``prepare``: checks the op and computes everything computable once (geometry, multipliers,
  scratch sizes, whether it may run in place) into a small frozen dataclass deriving from
  ``Prepared``; it raises ``fail(op, reason)`` for what it does not support;
- ``lower``: turns the prepared op into one C statement calling its kernel in ``firmware/``,
  registering const data (weights, biases, multipliers, tables) through ``LowerCtx``, and
  following the planner's ``Choice`` for the op (in place or not, optional scratch or not).

Memory decisions are the planner's: an operator only says what it *could* do (``Prepared``'s
``scratch``, ``in_place_scratch``, the ``alias`` and ``elementwise`` flags); the planner decides
and hands its ``Choice`` to the lowering.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op
from .rows import Reach

Bands = tuple[tuple[int, int], ...]  # per activation input: (rows, padding rows above)


class LowerCtx(Protocol):
    """What a lowering may ask of the code generator."""

    def ptr(self, tid: int, *, const: bool = True) -> str:
        """C expression of a typed pointer to tensor ``tid`` (arena slot or const array)."""
        ...

    def array(self, base: str, ctype: str, values: np.ndarray) -> str:
        """Register an aligned const array in flash; returns its C symbol."""
        ...

    def params(self, ctype: str, fields: dict[str, object]) -> str:
        """Register a ``static const`` struct; returns ``&symbol``.

        Field values: int, float, or str (a C expression, e.g. a symbol from ``array``).
        """
        ...

    def scratch(self, nbytes: int) -> str:
        """A scratch buffer of ``nbytes`` in the arena, live only during this op."""
        ...

    def refuses(self, reason: str) -> None:
        """This op may refuse its input at run time (as TFLM's Invoke fails), for ``reason``:
        the lowering then returns a C expression, nonzero when the layer refused, not a
        statement; ``tc_invoke`` stops there and returns 1 + the layer."""
        ...


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """What every prepared op tells the planner. Operators derive their own frozen dataclass
    from it, adding what their lowering needs."""

    macs: int = 0  # multiply-accumulates (or the op's elementary steps) per inference
    scratch: int = 0  # optional arena scratch that speeds the op up (e.g. im2col); may be refused
    scratch_stand_in: bool = False  # out of place, the op is about as fast without ``scratch``
    # (a convolution's unwritten output tail stands in for it): not worth buying memory for
    in_place_scratch: int | None = None  # None: cannot write its output over input 0; else the
    # bytes of temporary its in-place variant needs (the optional ``scratch`` may come on top,
    # at ``Choice.scratch_offset``: an op that cannot use both leaves ``scratch`` 0)
    in_place_shifts: bool = False  # its in-place kernel also runs with output and input ending
    # together (a buffer grown downwards), so it may expand or share a grown buffer
    in_place_shrinks: bool = False  # its output, narrower than input 0, may start where input 0
    # starts whenever input 0 dies here (float -> int8 QUANTIZE: a forward walk that reads each
    # element before it writes a narrower one); the planner always takes it (no choice)
    in_place_grows: bool = False  # its output, wider than input 0, may start where input 0
    # starts whenever input 0 dies here (int8 -> float DEQUANTIZE: a backward walk that reads
    # each element before its wider result covers it); the planner always takes it (no choice)
    workspace: int = 0  # arena the op always needs beside its tensors (a streamed segment's
    # row windows), at the start of its scratch region; never in place


@dataclass(frozen=True)
class Choice:
    """The planner's decision for one op, followed by its lowering."""

    in_place: bool = False  # run the in-place variant (output over input 0's buffer)
    use_scratch: bool = True  # take the optional scratch (``Prepared.scratch``)

    def scratch_bytes(self, d: Prepared) -> int:
        """Arena scratch the op claims under this choice: in place, the in-place temporary
        first, then (8-byte aligned) the optional scratch when taken."""
        if self.in_place:
            if d.in_place_scratch is None:
                raise ValueError("in-place choice for an op that cannot run in place")
            if self.use_scratch and d.scratch:
                return self.scratch_offset(d) + d.scratch
            return d.in_place_scratch
        if self.use_scratch and d.scratch:
            return self.scratch_offset(d) + d.scratch
        return d.workspace

    def scratch_offset(self, d: Prepared) -> int:
        """Where the optional scratch starts in the op's scratch region (after the in-place
        temporary or the workspace, 8-byte aligned)."""
        if self.in_place and d.in_place_scratch is not None:
            return (d.in_place_scratch + 7) // 8 * 8
        return (d.workspace + 7) // 8 * 8


DEFAULT_CHOICE = Choice()


class Operator:
    """One operator unit; see the module docstring. Subclasses set ``kinds`` and override
    ``prepare`` and ``lower`` (and ``attrs`` when the op has options)."""

    kinds: ClassVar[tuple[str, ...]] = ()
    alias: ClassVar[bool] = False  # output is input 0's bytes reinterpreted (reshape, squeeze)
    elementwise: ClassVar[bool] = False  # may overwrite input 0 element by element (same size)
    checks_types: ClassVar[bool] = False  # refuses float/int16 activations itself, with a reason
    int16: ClassVar[bool] = False  # handles int16 activations (16x8); else refused before prepare
    internal: ClassVar[bool] = False  # made by the planner, never read from a model file

    def attrs(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """Typed attributes from the file's raw options (TFLite builtin options fields)."""
        return {}

    def prepare(self, op: Op, g: Graph) -> Prepared:
        raise NotImplementedError

    def lower(self, op: Op, g: Graph, d: Any, ctx: LowerCtx, choice: Choice) -> str:
        raise NotImplementedError

    def fold(self, op: Op, g: Graph) -> list[np.ndarray] | None:
        """The op's outputs when they are known at compile time (SHAPE, a FILL of a constant):
        ``passes.fold`` makes them constants and nothing runs on the device. None: computed at
        run time (the default). Refusals are ``prepare``'s: return None for what is wrong."""
        return None

    def row_reach(self, op: Op, g: Graph, d: Any) -> tuple[Reach, ...] | None:
        """How an output row reads each activation input's rows, when the op can run one
        output row at a time in a streamed segment (``ops.rows``); None: it cannot."""
        return None

    def lower_row(
        self, op: Op, g: Graph, d: Any, ctx: LowerCtx, choice: Choice, bands: Bands
    ) -> str:
        """The call computing one output row from bands of its inputs' rows (``bands``: per
        activation input, its rows and the padding rows above them, as ``Reach.band`` gives);
        the pointers ``ctx.ptr`` gives are the bands' first rows and the output row."""
        raise NotImplementedError


OPS: dict[str, Operator] = {}


def register(cls: type[Operator]) -> type[Operator]:
    """Class decorator: register one instance of the unit for each of its kinds."""
    unit = cls()
    for k in cls.kinds:
        if k in OPS:
            raise RuntimeError(f"op {k} registered twice")
        OPS[k] = unit
    return cls


def fail(op: Op, reason: str) -> CompileError:
    """Build the error for an op the compiler cannot handle."""
    return CompileError(reason, op_index=op.index, op_kind=op.kind)


def check_int16(op: Op, g: Graph, unit: Operator) -> None:
    """Refuse int16 activations (16x8 quantization) for a unit that does not handle them.
    Constants and variable tensors (state) are the unit's own business, and so is every
    activation type of a unit that ``checks_types`` (it refuses with its own reason)."""
    if unit.int16 or unit.checks_types:
        return
    for tid in [*op.inputs, *op.outputs]:
        t = g.t(tid) if tid >= 0 else None
        if t is not None and t.dtype == "int16" and not t.is_const and not t.variable:
            raise fail(op, f"int16 activations are not supported for {op.kind} (16x8)")


def load_all() -> dict[str, Operator]:
    """Import every module of this package (discovery, not a list) so registrations run."""
    from .. import ops

    for m in pkgutil.iter_modules(ops.__path__):
        importlib.import_module(f"{ops.__name__}.{m.name}")
    return OPS


# Operators TFLM cannot run at all: no reference to be bit-exact with, so refused with the reason.
NOT_IN_TFLM = {
    "TILE": "TFLM has no TILE kernel (its interpreter cannot load the model), so there is no "
    "reference to be bit-exact with",
    "SELECT": "TFLM has no SELECT kernel (only SELECT_V2, which the converter writes when the "
    "shapes broadcast)",
}


# Operators TFLM runs on float32 only (the kernel that shows it): no int8 reference either.
FLOAT_ONLY_IN_TFLM = {
    "NEG": "neg.cc",
    "EXP": "exp.cc",
    "LOG": "elementwise.cc",
    "SQRT": "elementwise.cc",
    "SQUARE": "elementwise.cc",
    "SIN": "elementwise.cc",
    "COS": "elementwise.cc",
    "FLOOR": "floor.cc",
    "CEIL": "ceil.cc",
    "ROUND": "round.cc",
    "FLOOR_DIV": "floor_div.cc",
    "FLOOR_MOD": "floor_mod.cc",
    "L2_POOL_2D": "l2_pool_2d.cc",
}
NOT_IN_TFLM |= {
    k: f"TFLM runs {k} on float32 only ({f}), so there is no int8 reference to be bit-exact with"
    for k, f in FLOAT_ONLY_IN_TFLM.items()
}


def unsupported(op: Op) -> CompileError:
    """The refusal of an operator kind without a unit (and why, when TFLM cannot run it)."""
    why = NOT_IN_TFLM.get(op.kind)
    return fail(op, f"operator {op.kind} is not supported" + (f": {why}" if why else ""))


def own_types(g: Graph) -> set[int]:
    """Indices of the ops whose units check their activation types themselves (``ir.problems``
    leaves those to them)."""
    units = load_all()
    return {op.index for op in g.ops if op.kind in units and units[op.kind].checks_types}


def unit_of(op: Op) -> Operator:
    """The registered unit of ``op``'s kind, or a CompileError naming the unsupported kind."""
    unit = load_all().get(op.kind)
    if unit is None:
        raise unsupported(op)
    return unit


def decode(g: Graph) -> None:
    """Give every op its typed attributes: each unit parses its own raw options. Attributes
    already set win (tests and other frontends may set them directly). Idempotent."""
    for op in g.ops:
        decode_op(op)


def decode_op(op: Op) -> None:
    """``decode`` for one op (a CompileError naming the op when its options are refused)."""
    if op.options is None:
        return
    unit = load_all().get(op.kind)
    if unit is not None:
        try:
            parsed = unit.attrs(op.kind, op.options)
        except (ValueError, TypeError, KeyError) as e:
            raise fail(op, str(e)) from None
        op.attrs = {**parsed, **op.attrs}
    op.options = None
