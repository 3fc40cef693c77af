"""Shared helpers for the test-model generators (TensorFlow is needed only here).

Models are converted with full-integer post-training quantization: int8 weights (per channel for
convolutions unless asked otherwise), int8 activations, int32 biases, int8 input and output.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


def to_int8_tflite(
    model,
    rep_data: Callable[[], Iterable[list[np.ndarray]]],
    *,
    per_channel: bool = True,
    float_io: bool = False,
    trackable=None,
) -> bytes:
    """Convert a Keras model (or a tf.function's concrete function) to an int8 TFLite model.

    ``trackable`` (the tf.Module owning a concrete function) selects the saved-model conversion
    path, which keeps annotated functions (an LSTM's ``api_implements``) for the converter to
    fuse instead of inlining them."""
    import tensorflow as tf

    if hasattr(model, "get_concrete_function") or isinstance(
        model, tf.types.experimental.ConcreteFunction
    ):
        cf = model if not hasattr(model, "get_concrete_function") else model.get_concrete_function()
        conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], trackable)
    else:
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: (
        [np.asarray(x, np.float32) for x in s] for s in rep_data()
    )
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if not float_io:
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    if not per_channel:
        conv._experimental_disable_per_channel = True
    return conv.convert()


def to_16x8_tflite(
    fn, rep_data: Callable[[], Iterable[list[np.ndarray]]], *, float_io: bool = False
) -> bytes:
    """Convert a tf.function to a 16x8 TFLite model (TFLite's
    EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8): int16 activations (zero
    point 0), int8 weights, int64 biases; int16 input and output unless ``float_io``."""
    import tensorflow as tf

    cf = fn.get_concrete_function() if hasattr(fn, "get_concrete_function") else fn
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf], fn)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: (
        [np.asarray(x, np.float32) for x in s] for s in rep_data()
    )
    conv.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
    ]
    if not float_io:
        conv.inference_input_type = tf.int16
        conv.inference_output_type = tf.int16
    return conv.convert()


def random_rep(shapes: list[tuple[int, ...]], n: int = 32, seed: int = 0, scale: float = 1.0):
    """A representative dataset of normal noise, one batch-1 sample per step."""

    def gen():
        rng = np.random.default_rng(seed)
        for _ in range(n):
            yield [rng.normal(0, scale, size=(1, *s)).astype(np.float32) for s in shapes]

    return gen


def save(name: str, data: bytes, folder: Path = MODELS_DIR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / f"{name}.tflite"
    p.write_bytes(data)
    return p
