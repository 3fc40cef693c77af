"""Generate the second set of data-movement test models (REVERSE_V2, MIRROR_PAD,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, GATHER_ND, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_move2`` (needs TensorFlow). Models
go through the converter with full-integer quantization where it emits the int8 op; the others
are written directly (``tflite_writer``).
"""

from __future__ import annotations

import numpy as np
import tflite

from .common import MODELS_DIR, save
from .ops_layout import _flat, _model, _r
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"


def reverses() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        "reverse_h": _model([(1, 5, 7, 3)], lambda x: tf.reverse(x, [1]), 80),
        "reverse_hw": _model([(1, 4, 6, 5)], lambda x: tf.reverse(x, [1, 2]), 81, 0.5),
        "reverse_c": _model([(1, 3, 4, 9)], lambda x: tf.reverse(x, [-1]), 82, -0.3, 2.0),
        "reverse_rank2": _model([(1, 35)], lambda x: _flat(tf.reverse(_r(x, (5, 7)), [0])), 83),
    }


def mirror_pads() -> dict[str, bytes]:
    import tensorflow as tf

    def mp(pads, mode):
        return lambda x: tf.pad(x, pads, mode)

    return {
        "mirror_pad_reflect": _model(
            [(1, 6, 5, 3)], mp([[0, 0], [1, 2], [2, 1], [0, 0]], "REFLECT"), 84
        ),
        "mirror_pad_symmetric": _model(
            [(1, 5, 4, 3)], mp([[0, 0], [2, 3], [1, 4], [0, 0]], "SYMMETRIC"), 85, 0.5
        ),
        "mirror_pad_channels": _model(
            [(1, 4, 4, 6)], mp([[0, 0], [0, 0], [3, 3], [2, 5]], "REFLECT"), 86, -0.2, 1.5
        ),
    }


def batch_spaces() -> dict[str, bytes]:
    import tensorflow as tf

    stb, bts = tf.space_to_batch_nd, tf.batch_to_space
    w = np.random.default_rng(87).normal(0, 0.4, (3, 3, 4, 6)).astype(np.float32)

    def dilated(x):
        """What older converters emit for a dilation-2 VALID convolution: SPACE_TO_BATCH_ND,
        CONV_2D, BATCH_TO_SPACE_ND (the crops trim what the blocks add)."""
        y = tf.nn.conv2d(stb(x, [2, 2], [[0, 0], [0, 0]]), w, 1, "VALID")
        return bts(tf.nn.relu(y), [2, 2], [[0, 1], [1, 0]])

    return {
        "space_to_batch": _model([(1, 6, 8, 3)], lambda x: stb(x, [2, 2], [[0, 0], [0, 0]]), 88),
        "space_to_batch_rank3": _model([(1, 9, 5)], lambda x: stb(x, [3], [[0, 0]]), 89, 0.5),
        "batch_to_space_crop": _model(
            [(4, 3, 5, 2)], lambda x: bts(x, [2, 2], [[1, 0], [0, 2]]), 90, -0.4, 1.5
        ),
        "batch_to_space_dilated_conv": _model([(1, 12, 14, 4)], dilated, 91),
    }


def gather_nds() -> dict[str, bytes]:
    import tensorflow as tf

    def gnd(idx):
        return lambda x: tf.gather_nd(x, tf.constant(idx, tf.int32))

    return {
        # (1, H, W, C) params: pick pixels (b, h, w) -> rows of C bytes
        "gather_nd_pixels": _model(
            [(1, 5, 6, 4)],
            gnd([[[0, 4, 1], [0, 0, 5], [0, 2, 2]], [[0, 1, 0], [0, 3, 3], [0, 4, 5]]]),
            92,
        ),
        # depth 2 on rank 4: whole rows
        "gather_nd_rows": _model([(1, 4, 5, 3)], gnd([[0, 3], [0, 0], [0, 3], [0, 1]]), 93, 0.4),
        # full depth: single elements
        "gather_nd_elems": _model(
            [(1, 3, 4, 2)],
            gnd([[0, 2, 3, 1], [0, 0, 0, 0], [0, 1, 2, 1], [0, 2, 0, 0], [0, 0, 3, 1]]),
            94,
        ),
    }


def _argmax(b) -> int:
    tflite.ArgMaxOptionsStart(b)
    tflite.ArgMaxOptionsAddOutputType(b, tflite.TensorType.INT32)
    return tflite.ArgMaxOptionsEnd(b)


def _div_relu6(b) -> int:
    tflite.DivOptionsStart(b)
    tflite.DivOptionsAddFusedActivationFunction(b, tflite.ActivationFunctionType.RELU6)
    return tflite.DivOptionsEnd(b)


def _i32(name: str, values) -> T:
    a = np.asarray(values, np.int32)
    return T(name, a.shape, "int32", data=a)


def written() -> dict[str, bytes]:
    """EMBEDDING_LOOKUP and DYNAMIC_UPDATE_SLICE, which the converter does not emit in int8:
    constant indices, and indices computed at run time by an ARG_MAX (int32 graph inputs are
    not supported yet)."""
    rng = np.random.default_rng(95)
    table = rng.integers(-128, 128, (10, 8)).astype(np.int8)
    q = (0.05, 3)
    return {
        "embedding_lookup_const": write(
            [T("table", (7, 12), quant=q), _i32("ids", [3, 0, 6, 6, 2]),
             T("y", (5, 12), quant=q)],
            [Node("EMBEDDING_LOOKUP", [1, 0], [2])], [0], [2],
        ),
        "embedding_lookup_argmax": write(
            [T("x", (6, 10), quant=q), _i32("axis", [1]), T("ids", (6,), "int32"),
             T("table", (10, 8), quant=(0.02, -7), data=table), T("y", (6, 8), quant=(0.02, -7))],
            [Node("ARG_MAX", [0, 1], [2], "ArgMaxOptions", _argmax),
             Node("EMBEDDING_LOOKUP", [2, 3], [4])], [0], [4],
        ),
        "reverse16": write(
            [T("x", (1, 4, 6, 3), "int16", quant=(0.001, 0)), _i32("axis", [1, 2]),
             T("y", (1, 4, 6, 3), "int16", quant=(0.001, 0))],
            [Node("REVERSE_V2", [0, 1], [2])], [0], [2],
        ),
        "dus16": write(
            [T("x", (1, 5, 6, 2), "int16", quant=(0.001, 0)),
             T("u", (1, 3, 2, 2), "int16", quant=(0.001, 0)),
             _i32("start", [0, 1, 3, 0]), T("y", (1, 5, 6, 2), "int16", quant=(0.001, 0))],
            [Node("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3])], [0, 1], [3],
        ),
        # unquantized int32 DIV (TFLM's EvalDiv<int32_t>) of ARG_MAX indices by constants
        "div_int32": write(
            [T("x", (4, 10), quant=q), _i32("axis", [1]), T("ids", (4,), "int32"),
             _i32("d", [-3, 2, 5, -1]), T("y", (4,), "int32")],
            [Node("ARG_MAX", [0, 1], [2], "ArgMaxOptions", _argmax),
             Node("DIV", [2, 3], [4])], [0], [4],
        ),
        "div_int32_bcast_relu6": write(
            [T("x", (6, 9), quant=q), _i32("axis", [1]), T("ids", (6,), "int32"),
             _i32("d", [2]), T("y", (6,), "int32")],
            [Node("ARG_MAX", [0, 1], [2], "ArgMaxOptions", _argmax),
             Node("DIV", [2, 3], [4], "DivOptions", _div_relu6)], [0], [4],
        ),
        "dus_const": write(
            [T("x", (1, 6, 7, 3), quant=q), T("u", (1, 2, 3, 3), quant=q),
             _i32("start", [0, 3, 5, 0]), T("y", (1, 6, 7, 3), quant=q)],
            [Node("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3])], [0, 1], [3],
        ),
        "dus_const_i64": write(
            [T("x", (1, 5, 9), quant=q), T("u", (1, 5, 4), quant=q),
             T("start", (3,), "int64", data=np.array([0, -2, 3], np.int64)),
             T("y", (1, 5, 9), quant=q)],
            [Node("DYNAMIC_UPDATE_SLICE", [0, 1, 2], [3])], [0, 1], [3],
        ),
        "dus_runtime_start": write(
            [T("x", (2, 6, 5, 4), quant=q), T("u", (1, 3, 2, 4), quant=q),
             T("s", (4, 6), quant=q), _i32("axis", [1]), T("start", (4,), "int32"),
             T("y", (2, 6, 5, 4), quant=q)],
            [Node("ARG_MAX", [2, 3], [4], "ArgMaxOptions", _argmax),
             Node("DYNAMIC_UPDATE_SLICE", [0, 1, 4], [5])], [0, 1, 2], [5],
        ),
    }  # fmt: skip


def main() -> None:
    models = {**reverses(), **mirror_pads(), **batch_spaces(), **gather_nds(), **written()}
    for name, data in models.items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
