"""Generate the comparison, logical, select and reduce test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_compare`` (TensorFlow needed).
Comparisons (EQUAL ... GREATER_EQUAL) come from ``tf.math``'s with full-int8 quantization: two
inputs of different scales (TFLM rescales both), broadcasting against a row, a column and a
scalar constant, bool results as graph outputs or feeding SELECT_V2 / CAST. EQUAL is made to hold
often by comparing ``x`` with ``maximum(x, y)`` (same quantization) and with bool and int32
(ARG_MAX) inputs. LOGICAL_AND / OR / NOT combine comparisons; SELECT_V2 comes from ``tf.where``
with broadcasting (the converter writes SELECT, which TFLM lacks, for equal shapes). Reduce:
``tf.reduce_max`` / ``reduce_min`` / ``reduce_sum`` over several axes, with and without
keepdims; ``tf.reduce_all`` of a comparison (bool output).
"""

from __future__ import annotations

import numpy as np

from .common import save, to_int8_tflite
from .ops_elementwise import OUT, _fn, rep
from .tflite_writer import Node, T, write


def compare_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    two = [((4, 5), 0.0, 1.0), ((4, 5), 0.3, 2.0)]  # different scales and zero points
    for name, fn in [
        ("less", tf.math.less),
        ("less_equal", tf.math.less_equal),
        ("greater", tf.math.greater),
        ("greater_equal", tf.math.greater_equal),
    ]:
        m[f"cmp_{name}"] = to_int8_tflite(_fn([(1, 4, 5), (1, 4, 5)], fn), rep(two, seed=200))
    # EQUAL holds where x >= y: x against maximum(x, y), which keeps x's quantization
    m["cmp_equal_max"] = to_int8_tflite(
        _fn([(1, 4, 5), (1, 4, 5)], lambda x, y: tf.math.equal(x, tf.maximum(x, y))),
        rep([((4, 5), 0.0, 1.0), ((4, 5), 0.0, 1.0)], seed=201),
    )
    # broadcasting: a row, a column, a scalar constant; the result selects between values
    m["cmp_bcast_row_select"] = to_int8_tflite(
        _fn([(1, 3, 4, 6), (1, 1, 1, 6)], lambda x, y: tf.where(x > y, x, y)),
        rep([((3, 4, 6), 0.0, 1.0), ((1, 1, 6), 0.2, 0.5)], seed=202),
    )
    m["cmp_bcast_col_le"] = to_int8_tflite(
        _fn([(1, 5, 1), (1, 5, 7)], tf.math.less_equal),
        rep([((5, 1), 0.0, 1.0), ((5, 7), 0.0, 1.5)], seed=203),
    )
    m["cmp_scalar_ge"] = to_int8_tflite(
        _fn([(1, 6, 6, 3)], lambda x: tf.math.greater_equal(x, 0.25)),
        rep([((6, 6, 3), 0.0, 1.0)], seed=204),
    )
    m["cmp_rank5_lt"] = to_int8_tflite(  # both inputs broadcast, rank 5
        _fn([(1, 2, 3, 1, 4), (1, 1, 3, 5, 1)], tf.math.less),
        rep([((2, 3, 1, 4), 0.0, 1.0), ((1, 3, 5, 1), 0.0, 1.0)], seed=207),
    )
    # bool inputs: EQUAL / NOT_EQUAL of two comparisons
    m["cmp_bool_eq"] = to_int8_tflite(
        _fn([(1, 4, 6), (1, 4, 6)], lambda x, y: tf.math.equal(x > 0.0, y > 0.0)),
        rep([((4, 6), 0.0, 1.0), ((4, 6), 0.1, 1.0)], seed=205),
    )
    # int32 inputs: do two argmaxes agree
    m["cmp_int32_argmax"] = to_int8_tflite(
        _fn(
            [(1, 6, 4), (1, 6, 4)],
            lambda x, y: tf.math.equal(
                tf.math.argmax(x, -1, output_type=tf.int32),
                tf.math.argmax(y, -1, output_type=tf.int32),
            ),
        ),
        rep([((6, 4), 0.0, 1.0), ((6, 4), 0.0, 1.0)], seed=206),
    )
    return m


def written_models() -> dict[str, bytes]:
    """What the converter does not write: int8 NOT_EQUAL (it keeps it in float) and
    LOGICAL_NOT (it folds it into the comparison), both with bool graph outputs; SELECT_V2 of
    int16 values (a 16x8 converter run makes the comparison int16, which TFLM lacks)."""
    q = (0.05, -3)
    m: dict[str, bytes] = {}
    # x != maximum(x, y) holds exactly where x < y; z (another scale) broadcast along rows
    m["cmp_not_equal_w"] = write(
        [
            T("x", (1, 4, 6), quant=q),
            T("y", (1, 4, 6), quant=q),
            T("m", (1, 4, 6), quant=q),
            T("ne", (1, 4, 6), "bool"),
            T("not", (1, 4, 6), "bool"),
            T("z", (1, 1, 6), quant=(0.1, 7)),
            T("nez", (1, 4, 6), "bool"),
        ],
        [
            Node("MAXIMUM", [0, 1], [2]),
            Node("NOT_EQUAL", [0, 2], [3]),
            Node("LOGICAL_NOT", [3], [4]),
            Node("NOT_EQUAL", [0, 5], [6]),
        ],
        [0, 1, 5],
        [3, 4, 6],
    )
    # int16 values (16x8 quantization, zero point 0) chosen by an int8 comparison's bools
    m["select16_w"] = write(
        [
            T("a", (1, 1, 6), quant=q),
            T("b", (1, 1, 6), quant=(0.08, 4)),
            T("c", (1, 1, 6), "bool"),
            T("x", (1, 4, 6), "int16", quant=(0.001, 0)),
            T("y", (1, 4, 6), "int16", quant=(0.001, 0)),
            T("o", (1, 4, 6), "int16", quant=(0.001, 0)),
        ],
        [Node("GREATER", [0, 1], [2]), Node("SELECT_V2", [2, 3, 4], [5])],
        [0, 1, 3, 4],
        [5],
    )
    return m


def logic_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    two = [((4, 6), 0.0, 1.0), ((4, 6), 0.0, 1.0)]
    m["logic_and"] = to_int8_tflite(
        _fn([(1, 4, 6), (1, 4, 6)], lambda x, y: tf.logical_and(x > 0.0, y < 0.3)),
        rep(two, seed=210),
    )
    m["logic_or_bcast"] = to_int8_tflite(
        _fn([(1, 4, 6), (1, 1, 6)], lambda x, y: tf.logical_or(x > 0.5, y < 0.0)),
        rep([((4, 6), 0.0, 1.0), ((1, 6), 0.0, 1.0)], seed=211),
    )
    # a mask of two conditions choosing between two values, broadcast against a row
    m["select_mask"] = to_int8_tflite(
        _fn(
            [(1, 5, 6), (1, 1, 6)],
            lambda x, y: tf.where(tf.logical_and(x > -0.5, x < 0.5), x, y),
        ),
        rep([((5, 6), 0.0, 1.0), ((1, 6), 0.0, 1.0)], seed=213),
    )
    m["select_rank5"] = to_int8_tflite(  # condition, x and y broadcast at rank 5 (TFLM's limit)
        _fn(
            [(1, 2, 1, 3, 4), (1, 1, 5, 1, 4)],
            lambda x, y: tf.where(x > 0.0, tf.broadcast_to(x, [1, 2, 5, 3, 4]), y),
        ),
        rep([((2, 1, 3, 4), 0.0, 1.0), ((1, 5, 1, 4), 0.0, 1.0)], seed=215),
    )
    m["select_cond_bcast"] = to_int8_tflite(  # the condition is the broadcast one
        _fn([(1, 1, 6), (1, 4, 6)], lambda c, x: tf.where(c > 0.0, x, 0.5 * x)),
        rep([((1, 6), 0.0, 1.0), ((4, 6), 0.0, 1.0)], seed=214),
    )
    return m


def reduce_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    r4 = [((4, 5, 3), 0.0, 1.0)]
    m["reduce_max_hw"] = to_int8_tflite(
        _fn([(1, 4, 5, 3)], lambda x: tf.reduce_max(x, axis=[1, 2])), rep(r4, seed=220)
    )
    m["reduce_max_last_keep"] = to_int8_tflite(
        _fn([(1, 4, 5, 3)], lambda x: tf.reduce_max(x, axis=-1, keepdims=True)),
        rep(r4, seed=221),
    )
    m["reduce_min_axis1"] = to_int8_tflite(
        _fn([(1, 4, 5, 3)], lambda x: tf.reduce_min(x, axis=1)), rep(r4, seed=222)
    )
    m["reduce_min_13"] = to_int8_tflite(
        _fn([(1, 4, 5, 3)], lambda x: tf.reduce_min(x, axis=[1, 3], keepdims=True)),
        rep(r4, seed=223),
    )
    m["sum_axis1"] = to_int8_tflite(
        _fn([(1, 4, 5, 3)], lambda x: tf.reduce_sum(x, axis=1)), rep(r4, seed=224)
    )
    m["sum_hw_keep"] = to_int8_tflite(
        _fn([(1, 6, 6, 4)], lambda x: tf.reduce_sum(x, axis=[1, 2], keepdims=True)),
        rep([((6, 6, 4), 0.2, 0.5)], seed=225),
    )
    m["sum_last"] = to_int8_tflite(
        _fn([(1, 7, 9)], lambda x: tf.reduce_sum(x, axis=-1)), rep([((7, 9), 0.0, 1.0)], seed=226)
    )
    m["reduce_all_rows"] = to_int8_tflite(
        _fn([(1, 4, 3)], lambda x: tf.reduce_all(x > -1.0, axis=-1)),
        rep([((4, 3), 0.0, 1.0)], seed=227),
    )
    return m


def _reducer(b) -> int:
    import tflite

    tflite.ReducerOptionsStart(b)
    tflite.ReducerOptionsAddKeepDims(b, False)
    return tflite.ReducerOptionsEnd(b)


def _shape_opts(b) -> int:
    import tflite

    tflite.ShapeOptionsStart(b)
    tflite.ShapeOptionsAddOutType(b, tflite.TensorType.INT32)
    return tflite.ShapeOptionsEnd(b)


def fill_models() -> dict[str, bytes]:
    """FILL, ZEROS_LIKE, SHAPE, BROADCAST_ARGS (the converter folds them all: written here),
    folded where a later op reads them and run where they are graph outputs; BROADCAST_TO and
    CAST from the converter."""
    import tensorflow as tf

    q = (0.05, -3)
    i32 = np.int32
    m: dict[str, bytes] = {}
    m["fill_const_folded"] = write(  # max(x, fill(value)) with the FILL folded
        [
            T("x", (1, 4, 6), quant=q),
            T("dims", (3,), "int32", data=np.array([1, 4, 6], i32)),
            T("v", (), quant=q, data=np.array(12, np.int8)),
            T("f", (1, 4, 6), quant=q),
            T("y", (1, 4, 6), quant=q),
        ],
        [Node("FILL", [1, 2], [3]), Node("MAXIMUM", [0, 3], [4])],
        [0],
        [4],
    )
    m["fill_activation"] = write(  # the value is the input's maximum: FILL runs
        [
            T("x", (1, 4, 6), quant=q),
            T("axes", (3,), "int32", data=np.array([0, 1, 2], i32)),
            T("mx", (), quant=q),
            T("dims", (2,), "int32", data=np.array([3, 5], i32)),
            T("f", (3, 5), quant=q),
        ],
        [
            Node("REDUCE_MAX", [0, 1], [2], "ReducerOptions", _reducer),
            Node("FILL", [3, 2], [4]),
        ],
        [0],
        [4],
    )
    m["zeros_like"] = write(  # folded (into MAXIMUM) and run (a graph output)
        [
            T("x", (1, 4, 6), quant=q),
            T("z", (1, 4, 6), quant=q),
            T("y", (1, 4, 6), quant=q),
            T("z2", (1, 4, 6), quant=q),
        ],
        [
            Node("ZEROS_LIKE", [0], [1]),
            Node("MAXIMUM", [0, 1], [2]),
            Node("ZEROS_LIKE", [2], [3]),
        ],
        [0],
        [2, 3],
    )
    m["shape_bcast_args"] = write(  # int32 graph outputs of constant values
        [
            T("x", (1, 4, 6), quant=q),
            T("y", (5, 1, 1), quant=q),
            T("sx", (3,), "int32"),
            T("sy", (3,), "int32"),
            T("b", (3,), "int32"),
        ],
        [
            Node("SHAPE", [0], [2], "ShapeOptions", _shape_opts),
            Node("SHAPE", [1], [3], "ShapeOptions", _shape_opts),
            Node("BROADCAST_ARGS", [2, 3], [4]),
        ],
        [0, 1],
        [2, 4],
    )
    m["broadcast_to_bool"] = write(  # a bool row broadcast over rows
        [
            T("x", (1, 1, 6), quant=q),
            T("y", (1, 1, 6), quant=(0.08, 4)),
            T("c", (1, 1, 6), "bool"),
            T("shape", (3,), "int32", data=np.array([1, 4, 6], i32)),
            T("o", (1, 4, 6), "bool"),
        ],
        [Node("GREATER", [0, 1], [2]), Node("BROADCAST_TO", [2, 3], [4])],
        [0, 1],
        [4],
    )
    m["cast_widen_w"] = write(  # int8 -> int16 -> int32 and bool -> int8, graph outputs
        [
            T("x", (1, 4, 6), quant=q),
            T("y", (1, 4, 6), quant=(0.08, 4)),
            T("w16", (1, 4, 6), "int16"),
            T("w32", (1, 4, 6), "int32"),
            T("c", (1, 4, 6), "bool"),
            T("c8", (1, 4, 6), quant=(1.0, 0)),
        ],
        [
            Node("CAST", [0], [2]),
            Node("CAST", [2], [3]),
            Node("GREATER", [0, 1], [4]),
            Node("CAST", [4], [5]),
        ],
        [0, 1],
        [2, 3, 5],
    )
    m["broadcast_to_rows"] = to_int8_tflite(
        _fn([(1, 1, 5)], lambda x: tf.broadcast_to(x, [1, 4, 5])),
        rep([((1, 5), 0.0, 1.0)], seed=230),
    )
    m["broadcast_to_rank4"] = to_int8_tflite(
        _fn([(1, 3, 1, 4)], lambda x: tf.broadcast_to(x, [2, 3, 5, 4])),
        rep([((3, 1, 4), 0.0, 1.0)], seed=231),
    )
    # CAST: bool -> float32 (a mask), int32 -> float32 (an index), float32 -> int32 -> float32
    m["cast_mask"] = to_int8_tflite(
        _fn([(1, 4, 5), (1, 4, 5)], lambda x, y: tf.cast(x > y, tf.float32) * x),
        rep([((4, 5), 0.0, 1.0), ((4, 5), 0.0, 1.0)], seed=232),
    )
    m["cast_index"] = to_int8_tflite(
        _fn(
            [(1, 6, 7)], lambda x: tf.cast(tf.math.argmax(x, -1, output_type=tf.int32), tf.float32)
        ),
        rep([((6, 7), 0.0, 1.0)], seed=233),
    )
    m["cast_trunc"] = to_int8_tflite(
        _fn([(1, 4, 5)], lambda x: tf.cast(tf.cast(x * 10.0, tf.int32), tf.float32)),
        rep([((4, 5), 0.0, 1.0)], seed=234),
    )
    return m


def build() -> dict[str, bytes]:
    models: dict[str, bytes] = {}
    models.update(compare_models())
    models.update(written_models())
    models.update(logic_models())
    models.update(reduce_models())
    models.update(fill_models())
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
