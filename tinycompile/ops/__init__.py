"""Operator definitions: per-op validation, cost and lowering to a C kernel call.

Each operator family lives in its own module and registers its kinds with ``@register``.
A lowering turns one IR op into one C statement calling a kernel from ``firmware/``; everything
the kernel needs besides activation pointers (weights, biases, requantization multipliers and
shifts, lookup tables) is computed here at compile time and handed to the codegen through
``LowerCtx`` as const arrays and const parameter structs, which end up in flash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import CompileError
from ..ir import Graph, Op


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


@dataclass(frozen=True)
class OpDef:
    kind: str
    check: Callable[[Op, Graph], None]
    lower: Callable[[Op, Graph, LowerCtx], str]
    macs: Callable[[Op, Graph], int]
    scratch: Callable[[Op, Graph], int]
    alias: bool = False  # output is the input's bytes reinterpreted (reshape, squeeze)
    inplace: bool = False  # output may overwrite input 0 element by element


OPS: dict[str, OpDef] = {}


def _zero(op: Op, g: Graph) -> int:
    return 0


def _nocheck(op: Op, g: Graph) -> None:
    return None


def register(
    *kinds: str,
    check: Callable[[Op, Graph], None] = _nocheck,
    macs: Callable[[Op, Graph], int] = _zero,
    scratch: Callable[[Op, Graph], int] = _zero,
    alias: bool = False,
    inplace: bool = False,
) -> Callable[[Callable[[Op, Graph, LowerCtx], str]], Callable[[Op, Graph, LowerCtx], str]]:
    """Decorator registering a lowering function for one or more op kinds."""

    def deco(fn: Callable[[Op, Graph, LowerCtx], str]) -> Callable[[Op, Graph, LowerCtx], str]:
        for k in kinds:
            if k in OPS:
                raise RuntimeError(f"op {k} registered twice")
            OPS[k] = OpDef(k, check, fn, macs, scratch, alias, inplace)
        return fn

    return deco


def fail(op: Op, reason: str) -> CompileError:
    """Build the error for an op the compiler cannot handle."""
    return CompileError(reason, op_index=op.index, op_kind=op.kind)


def load_all() -> dict[str, OpDef]:
    """Import every op module so their registrations run."""
    import importlib

    for name in FAMILIES:
        importlib.import_module(f"{__name__}.{name}")
    return OPS


FAMILIES = ("activations", "conv", "elementwise", "pool", "reduce", "shape")
