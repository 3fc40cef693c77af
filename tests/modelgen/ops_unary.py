"""Generate the elementwise unary and arithmetic test models (ABS, ELU, DIV, ADD_N, CUMSUM) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_unary`` (needs TensorFlow for the
converted ones). The converter makes int8 ABS and DIV; it leaves ELU, ADD_N and CUMSUM in float
(DEQUANTIZE / op / QUANTIZE), so their int8 models, which TFLM runs, are written directly
(``tflite_writer``). Scales and zero points differ between input and output so that every
rescaling path runs.
"""

from __future__ import annotations

import numpy as np
import tflite

from .common import MODELS_DIR, save
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
SHAPE = (1, 8, 8, 4)  # 256 elements


def _unary(kind: str, q_in, q_out, shape=SHAPE, dtype: str = "int8") -> bytes:
    ts = [T("x", shape, dtype, quant=q_in), T("y", shape, dtype, quant=q_out)]
    return write(ts, [Node(kind, [0], [1])], [0], [1])


def _converted() -> dict[str, bytes]:
    import tensorflow as tf

    from .ops_activations import convert

    return {
        "unary_abs": convert(tf.abs, SHAPE[1:], -3.0, 2.0),
        "div_int8": convert(lambda x: x / (tf.abs(x) + 0.75), SHAPE[1:], -2.0, 3.0),
    }


def _div_options(act: int):
    def w(b) -> int:
        tflite.DivOptionsStart(b)
        tflite.DivOptionsAddFusedActivationFunction(b, act)
        return tflite.DivOptionsEnd(b)

    return w


def _div(a_shape, b_shape, qa, qb, qo, act: int = 0) -> bytes:
    o_shape = tuple(np.broadcast_shapes(a_shape, b_shape))
    ts = [T("a", a_shape, quant=qa), T("b", b_shape, quant=qb), T("y", o_shape, quant=qo)]
    return write(ts, [Node("DIV", [0, 1], [2], "DivOptions", _div_options(act))], [0, 1], [2])


def _add_n(n: int, shape, q_in, q_out) -> bytes:
    ts = [T(f"x{i}", shape, quant=q_in) for i in range(n)] + [T("y", shape, quant=q_out)]
    return write(ts, [Node("ADD_N", list(range(n)), [n])], list(range(n)), [n])


def _cumsum(shape, axis: int, q_in, q_out, exclusive: bool = False, reverse: bool = False):
    def w(b) -> int:
        tflite.CumsumOptionsStart(b)
        tflite.CumsumOptionsAddExclusive(b, exclusive)
        tflite.CumsumOptionsAddReverse(b, reverse)
        return tflite.CumsumOptionsEnd(b)

    ts = [T("x", shape, quant=q_in), T("axis", (), "int32", data=np.array(axis, np.int32)),
          T("y", shape, quant=q_out)]  # fmt: skip
    return write(ts, [Node("CUMSUM", [0, 1], [2], "CumsumOptions", w)], [0], [2])


def written() -> dict[str, bytes]:
    """The models made without the converter."""
    return {
        "add_n_3": _add_n(3, (1, 4, 5, 3), (0.05, 7), (0.1, -10)),
        "add_n_2": _add_n(2, (1, 37), (0.02, -128), (0.04, -128)),
        "add_n_6": _add_n(6, (2, 3, 7), (0.03, 20), (0.12, 0)),
        "cumsum_axis1": _cumsum((1, 6, 5, 3), 1, (0.05, 3), (0.2, -5)),
        "cumsum_excl_rev": _cumsum((1, 4, 9), -1, (0.04, -30), (0.15, -60), True, True),
        "cumsum_rev": _cumsum((2, 5, 3), 0, (0.03, 10), (0.05, 0), reverse=True),
        "cumsum_excl": _cumsum((1, 3, 4, 6), 3, (0.02, -128), (0.08, -128), exclusive=True),
        # broadcast divisor per channel; random divisors hit the zero point too
        "div_bcast": _div((1, 4, 5, 6), (1, 1, 1, 6), (0.05, 3), (0.03, -100), (0.02, 5)),
        # small output multiplier: the final rounding shift exceeds 31 (TFLM's x86 behaviour)
        "div_small_mult": _div((1, 6, 7, 3), (1, 6, 7, 3), (0.01, 0), (0.1, -128), (0.5, 0)),
        "div_relu": _div((1, 5, 8), (1, 8), (0.04, -20), (0.02, 60), (0.03, -128), act=1),
        "unary_abs_rescale": _unary("ABS", (0.05, 10), (0.03, -128)),
        "unary_abs_same_scale": _unary("ABS", (0.04, -5), (0.04, -128), (1, 5, 7, 3)),
        "unary_abs16": _unary("ABS", (0.001, 0), (0.0008, 0), (1, 6, 11), "int16"),
        "unary_abs16_same": _unary("ABS", (0.0005, 0), (0.0005, 0), (1, 50), "int16"),
        "unary_elu": _unary("ELU", (0.03, 20), (0.025, -60)),
        "unary_elu_wide": _unary("ELU", (0.1, -10), (0.058, -111), (1, 3, 33)),
    }


def main() -> None:
    models = written()
    models.update(_converted())
    for name, data in models.items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
