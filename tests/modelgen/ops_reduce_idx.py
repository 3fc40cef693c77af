"""Generate the ARG_MAX, ARG_MIN and LOG_SOFTMAX test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_reduce_idx`` (TensorFlow needed).
ARG_MAX/ARG_MIN come from ``tf.math.argmax``/``argmin`` with ``output_type=tf.int32`` (TFLM runs
int32 outputs only; the int64 default is refused, tested at IR level), over several axes,
negative ones included, and as the usual classifier tail (FULLY_CONNECTED -> ARG_MAX, the index
being the model's output). LOG_SOFTMAX comes from ``tf.nn.log_softmax``: moderate and wide input
ranges (differences beyond diff_min), several rows, a deep row, a classifier tail.
"""

from __future__ import annotations

import numpy as np

from .common import save, to_int8_tflite
from .ops_elementwise import OUT, _fn, rep


def argminmax_models() -> dict[str, bytes]:
    import tensorflow as tf

    def arg(fn, axis: int):
        return lambda x: fn(x, axis=axis, output_type=tf.int32)

    m: dict[str, bytes] = {}
    m["argmax_last"] = to_int8_tflite(
        _fn([(1, 10)], arg(tf.math.argmax, -1)), rep([((10,), 0.0, 1.0)], seed=90)
    )
    m["argmax_axis1_rank4"] = to_int8_tflite(
        _fn([(1, 5, 4, 3)], arg(tf.math.argmax, 1)), rep([((5, 4, 3), 0.0, 1.0)], seed=91)
    )
    m["argmax_axis2_neg"] = to_int8_tflite(
        _fn([(1, 3, 6, 4)], arg(tf.math.argmax, -2)), rep([((3, 6, 4), 0.5, 2.0)], seed=92)
    )
    m["argmax_axis0"] = to_int8_tflite(  # over the batch axis of a batch-3 input
        _fn([(3, 7)], arg(tf.math.argmax, 0)), rep([((3, 7), 0.0, 1.0)], seed=93, batch=False)
    )
    m["argmin_last"] = to_int8_tflite(
        _fn([(1, 4, 9)], arg(tf.math.argmin, -1)), rep([((4, 9), 0.0, 1.0)], seed=94)
    )
    m["argmin_axis1_rank3"] = to_int8_tflite(
        _fn([(1, 6, 5)], arg(tf.math.argmin, 1)), rep([((6, 5), -1.0, 3.0)], seed=95)
    )
    # the classifier tail: logits of a small dense layer, the class index is the output
    clf = tf.keras.Sequential(
        [
            tf.keras.Input((16,), batch_size=1),
            tf.keras.layers.Dense(12, activation="relu"),
            tf.keras.layers.Dense(10),
            tf.keras.layers.Lambda(lambda x: tf.math.argmax(x, axis=-1, output_type=tf.int32)),
        ]
    )
    clf.build()
    rng = np.random.default_rng(96)
    for w in clf.weights:
        w.assign(rng.normal(0, 0.5, size=w.shape).astype(np.float32))
    m["argmax_classifier"] = to_int8_tflite(clf, rep([((16,), 0.0, 1.0)], seed=97))
    return m


def log_softmax_models() -> dict[str, bytes]:
    import tensorflow as tf

    m: dict[str, bytes] = {}
    m["log_softmax_vec"] = to_int8_tflite(
        _fn([(1, 10)], tf.nn.log_softmax), rep([((10,), 0.0, 2.0)], seed=100)
    )
    m["log_softmax_rows"] = to_int8_tflite(  # 5 x 4 rows of 7
        _fn([(1, 5, 4, 7)], tf.nn.log_softmax), rep([((5, 4, 7), 0.5, 1.0)], seed=101)
    )
    # a wide input range: differences fall below diff_min and outputs reach -128
    m["log_softmax_wide"] = to_int8_tflite(
        _fn([(1, 3, 16)], tf.nn.log_softmax), rep([((3, 16), 0.0, 12.0)], seed=102)
    )
    m["log_softmax_deep"] = to_int8_tflite(  # 300 classes: larger sums
        _fn([(1, 300)], tf.nn.log_softmax), rep([((300,), 0.0, 0.5)], seed=103)
    )
    clf = tf.keras.Sequential(
        [
            tf.keras.Input((16,), batch_size=1),
            tf.keras.layers.Dense(10),
            tf.keras.layers.Lambda(tf.nn.log_softmax),
        ]
    )
    clf.build()
    rng = np.random.default_rng(104)
    for w in clf.weights:
        w.assign(rng.normal(0, 0.7, size=w.shape).astype(np.float32))
    m["log_softmax_classifier"] = to_int8_tflite(clf, rep([((16,), 0.0, 1.0)], seed=105))
    return m


def build() -> dict[str, bytes]:
    models: dict[str, bytes] = {}
    models.update(argminmax_models())
    models.update(log_softmax_models())
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
