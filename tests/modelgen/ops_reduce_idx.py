"""Generate the ARG_MAX, ARG_MIN and LOG_SOFTMAX test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_reduce_idx`` (TensorFlow needed).
ARG_MAX/ARG_MIN come from ``tf.math.argmax``/``argmin`` with ``output_type=tf.int32`` (TFLM runs
int32 outputs only; ``argmax_i64`` keeps TensorFlow's int64 default and exists to be refused),
over several axes, negative ones included, and as the usual classifier tail (FULLY_CONNECTED
-> ARG_MAX, the index being the model's output). LOG_SOFTMAX comes from ``tf.nn.log_softmax``.
"""

from __future__ import annotations

import numpy as np

from .common import save, to_int8_tflite
from .ops_elementwise import OUT, _fn, rep


def argminmax_models() -> dict[str, bytes]:
    import tensorflow as tf

    def arg(fn, axis: int, out=tf.int32):
        return lambda x: fn(x, axis=axis, output_type=out)

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
    m["argmax_i64"] = to_int8_tflite(
        _fn([(1, 8)], arg(tf.math.argmax, -1, tf.int64)), rep([((8,), 0.0, 1.0)], seed=98)
    )
    return m


def build() -> dict[str, bytes]:
    models: dict[str, bytes] = {}
    models.update(argminmax_models())
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
