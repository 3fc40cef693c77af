"""Models the compiler must refuse cleanly: float, int16 activations, an unsupported operator.

Run as ``python -m tests.modelgen.bad_models``; writes tests/models/bad/*.tflite.
"""

from __future__ import annotations

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_int8_tflite

OUT = MODELS_DIR / "bad"


def main() -> None:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(1)
    inp = tf.keras.Input((8, 8, 2), batch_size=1)
    x = tf.keras.layers.Conv2D(3, 3, padding="same", activation="relu")(inp)
    x = tf.keras.layers.Flatten()(x)
    x = tf.keras.layers.Dense(4)(x)
    model = tf.keras.Model(inp, x)

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    save("float_model", conv.convert(), OUT)

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([s[0]] for s in random_rep([(8, 8, 2)])())
    conv.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
    ]
    conv.inference_input_type = tf.int16
    conv.inference_output_type = tf.int16
    save("int16_model", conv.convert(), OUT)

    # an operator tinycompile does not implement (EXP), quantized to int8
    inp = tf.keras.Input((16,), batch_size=1)
    y = tf.keras.layers.Dense(16)(inp)
    y = tf.keras.layers.Lambda(lambda t: tf.math.exp(t * 0.1))(y)
    y = tf.keras.layers.Dense(4)(y)
    save("unsupported_op", to_int8_tflite(tf.keras.Model(inp, y), random_rep([(16,)])), OUT)
    print("wrote", sorted(p.name for p in OUT.glob("*.tflite")), np.__version__)


if __name__ == "__main__":
    main()
