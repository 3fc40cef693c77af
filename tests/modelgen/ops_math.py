"""Generate the SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU, RSQRT, LOG_SOFTMAX,
L2_NORMALIZATION, ARG_MAX and ARG_MIN test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_math`` (TensorFlow needed).
Representative data differs per input (offsets and spreads) so that scales and zero points
differ between operands.
"""

from __future__ import annotations

import numpy as np

from .common import save, to_int8_tflite
from .ops_elementwise import OUT, _binary, _fn, rep


def sub_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    m["sub_same"] = to_int8_tflite(
        _binary((1, 5, 7, 3), (1, 5, 7, 3), lambda x, y: x - y),
        rep([((5, 7, 3), 0.0, 1.0), ((5, 7, 3), 0.7, 3.0)], seed=30),
    )
    m["sub_bcast_c"] = to_int8_tflite(
        _binary((1, 5, 5, 7), (1, 1, 1, 7), lambda x, y: x - y),
        rep([((5, 5, 7), -0.3, 2.0), ((1, 1, 7), 1.0, 0.4)], seed=31),
    )
    m["sub_first_bcast"] = to_int8_tflite(
        _binary((1, 1, 1, 5), (1, 3, 3, 5), lambda x, y: x - y),
        rep([((1, 1, 5), 0.0, 4.0), ((3, 3, 5), 0.5, 0.3)], seed=32),
    )
    m["sub_bcast_both_relu6"] = to_int8_tflite(
        _binary((1, 4, 1, 6), (1, 1, 5, 6), lambda x, y: tf.nn.relu6(x - y)),
        rep([((4, 1, 6), 2.0, 2.0), ((1, 5, 6), -1.0, 1.5)], seed=33),
    )
    cvec = np.linspace(-1.5, 2.0, 9).astype(np.float32)
    m["sub_const_relu"] = to_int8_tflite(
        _fn([(1, 3, 9)], lambda x: tf.nn.relu(x - tf.constant(cvec))),
        rep([((3, 9), 0.0, 1.0)], seed=34),
    )
    m["sub_rank5"] = to_int8_tflite(
        _binary((1, 2, 3, 4, 5), (1, 2, 1, 4, 1), lambda x, y: x - y),
        rep([((2, 3, 4, 5), 0.0, 1.0), ((2, 1, 4, 1), 0.0, 6.0)], seed=35),
    )
    return m


def minmax_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    m["maximum_same"] = to_int8_tflite(
        _binary((1, 4, 5, 3), (1, 4, 5, 3), tf.maximum),
        rep([((4, 5, 3), 0.0, 1.0), ((4, 5, 3), 0.3, 1.2)], seed=40),
    )
    m["maximum_bcast_both"] = to_int8_tflite(
        _binary((1, 3, 1, 7), (1, 1, 4, 7), tf.maximum),
        rep([((3, 1, 7), 0.0, 1.0), ((1, 4, 7), -0.2, 0.8)], seed=41),
    )
    m["maximum_const"] = to_int8_tflite(  # a constant operand (ReLU-like floor)
        _fn([(1, 2, 11)], lambda x: tf.maximum(x, tf.constant(-0.25))),
        rep([((2, 11), 0.0, 1.0)], seed=42),
    )
    m["minimum_same"] = to_int8_tflite(
        _binary((1, 5, 3), (1, 5, 3), tf.minimum),
        rep([((5, 3), 0.2, 1.0), ((5, 3), -0.1, 1.3)], seed=43),
    )
    m["minimum_first_bcast"] = to_int8_tflite(
        _binary((1, 1, 1, 6), (1, 3, 2, 6), tf.minimum),
        rep([((1, 1, 6), 0.0, 1.5), ((3, 2, 6), 0.0, 1.0)], seed=44),
    )
    m["minimum_rank5"] = to_int8_tflite(
        _binary((1, 2, 3, 1, 5), (1, 2, 1, 4, 1), tf.minimum),
        rep([((2, 3, 1, 5), 0.0, 1.0), ((2, 1, 4, 1), 0.0, 1.0)], seed=45),
    )
    return m


def sqdiff_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    m["sqdiff_same"] = to_int8_tflite(
        _binary((1, 4, 5, 3), (1, 4, 5, 3), tf.math.squared_difference),
        rep([((4, 5, 3), 0.0, 1.0), ((4, 5, 3), 0.5, 0.7)], seed=50),
    )
    m["sqdiff_bcast_c"] = to_int8_tflite(
        _binary((1, 3, 3, 7), (1, 1, 1, 7), tf.math.squared_difference),
        rep([((3, 3, 7), 0.0, 2.0), ((1, 1, 7), 0.4, 0.5)], seed=51),
    )
    m["sqdiff_first_bcast"] = to_int8_tflite(
        _binary((1, 1, 5), (1, 3, 5), tf.math.squared_difference),
        rep([((1, 5), 0.0, 0.3), ((3, 5), 0.0, 1.0)], seed=52),
    )
    return m


def _prelu(shape: tuple[int, ...], shared_axes, seed: int, lo: float, hi: float):
    import tensorflow as tf

    inp = tf.keras.Input(shape, batch_size=1)
    layer = tf.keras.layers.PReLU(shared_axes=shared_axes)
    model = tf.keras.Model(inp, layer(inp))
    alpha = layer.get_weights()[0]
    rng = np.random.default_rng(seed)
    layer.set_weights([rng.uniform(lo, hi, alpha.shape).astype(np.float32)])
    return model


def prelu_models() -> dict[str, bytes]:
    m: dict[str, bytes] = {}
    m["prelu_channel"] = to_int8_tflite(  # alpha (1, 1, C), broadcast over H, W
        _prelu((5, 4, 7), [1, 2], 60, 0.05, 0.6), rep([((5, 4, 7), 0.0, 1.0)], seed=60)
    )
    m["prelu_full"] = to_int8_tflite(  # alpha of the input's shape, some negative slopes
        _prelu((3, 5, 4), None, 61, -0.5, 1.5), rep([((3, 5, 4), -0.2, 1.0)], seed=61)
    )
    m["prelu_rank2"] = to_int8_tflite(
        _prelu((9,), None, 62, 0.1, 2.5), rep([((9,), 0.0, 2.0)], seed=62)
    )
    return m


def rsqrt_models() -> dict[str, bytes]:
    import tensorflow as tf

    def pos(shape, lo, hi, seed):  # strictly positive data
        def gen():
            rng = np.random.default_rng(seed)
            for _ in range(48):
                yield [rng.uniform(lo, hi, (1, *shape)).astype(np.float32)]

        return gen

    m: dict[str, bytes] = {}
    m["rsqrt_a"] = to_int8_tflite(_fn([(1, 4, 9)], tf.math.rsqrt), pos((4, 9), 0.05, 4.0, 70))
    m["rsqrt_b"] = to_int8_tflite(_fn([(1, 23)], tf.math.rsqrt), pos((23,), 0.5, 60.0, 71))
    return m


def l2norm_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    m["l2norm_c"] = to_int8_tflite(
        _fn([(1, 3, 4, 13)], lambda x: tf.math.l2_normalize(x, axis=-1)),
        rep([((3, 4, 13), 0.3, 1.0)], seed=80),
    )
    m["l2norm_rank2"] = to_int8_tflite(
        _fn([(1, 40)], lambda x: tf.math.l2_normalize(x, axis=-1)),
        rep([((40,), -0.5, 3.0)], seed=81),
    )
    m["l2norm_short"] = to_int8_tflite(  # few elements per row: big values, small sums
        _fn([(1, 6, 3)], lambda x: tf.math.l2_normalize(x, axis=-1)),
        rep([((6, 3), 0.0, 0.2)], seed=82),
    )
    return m


def build() -> dict[str, bytes]:
    models: dict[str, bytes] = {}
    models.update(sub_models())
    models.update(minmax_models())
    models.update(sqdiff_models())
    models.update(prelu_models())
    models.update(rsqrt_models())
    models.update(l2norm_models())
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
