"""Test models for activations, softmax and quantize/dequantize.

Run from the repository root: ``python -m tests.modelgen.ops_activations``. Writes
``tests/models/ops/{act,softmax,quant}_*.tflite``. Each model is one op (or a short chain) on a
small tensor; representative ranges vary so that scales and zero points differ between variants.
Two variants need a converted model edited afterwards (TensorFlow's flatbuffer object API): a
SOFTMAX with beta != 1 and an int8 -> int8 QUANTIZE (requantization).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from .common import MODELS_DIR, save, to_int8_tflite

OUT = MODELS_DIR / "ops"
UNARY_SHAPE = (8, 8, 4)  # 256 elements: one sample can hold every int8 value


def uniform_rep(shape: tuple[int, ...], lo: float, hi: float, n: int = 64, seed: int = 0):
    """Representative data spanning [lo, hi] (sets the calibrated range, hence scale and zp)."""

    def gen():
        rng = np.random.default_rng(seed)
        for i in range(n):
            x = rng.uniform(lo, hi, size=(1, *shape)).astype(np.float32)
            if i == 0:  # make sure both ends are seen
                x.flat[0], x.flat[1] = lo, hi
            yield [x]

    return gen


def convert(
    fn: Callable, shape: tuple[int, ...], lo: float, hi: float, *, float_io: bool = False
) -> bytes:
    import tensorflow as tf

    f = tf.function(fn, input_signature=[tf.TensorSpec((1, *shape), tf.float32)])
    return to_int8_tflite(f.get_concrete_function(), uniform_rep(shape, lo, hi), float_io=float_io)


def _edit(data: bytes, edit: Callable) -> bytes:
    from tensorflow.lite.tools import flatbuffer_utils as fbu

    model = fbu.read_model_from_bytearray(bytearray(data))
    edit(model)
    return bytes(fbu.convert_object_to_bytearray(model))


def set_softmax_beta(data: bytes, beta: float) -> bytes:
    from tensorflow.lite.python import schema_py_generated as s

    def edit(model) -> None:
        codes = model.operatorCodes
        for op in model.subgraphs[0].operators:
            code = max(
                codes[op.opcodeIndex].builtinCode, codes[op.opcodeIndex].deprecatedBuiltinCode
            )
            if code == s.BuiltinOperator.SOFTMAX:
                opts = s.SoftmaxOptionsT()
                opts.beta = beta
                op.builtinOptionsType = s.BuiltinOptions.SoftmaxOptions
                op.builtinOptions = opts

    return _edit(data, edit)


def relabel_as_quantize(data: bytes) -> bytes:
    """Turn a one-op int8 -> int8 model (here TANH) into a requantizing QUANTIZE."""
    from tensorflow.lite.python import schema_py_generated as s

    def edit(model) -> None:
        (code,) = model.operatorCodes
        code.builtinCode = s.BuiltinOperator.QUANTIZE
        code.deprecatedBuiltinCode = s.BuiltinOperator.QUANTIZE
        code.version = 2
        for op in model.subgraphs[0].operators:
            op.builtinOptionsType = s.BuiltinOptions.NONE
            op.builtinOptions = None

    return _edit(data, edit)


def hard_swish(x):
    import tensorflow as tf

    return x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0)


def chain(x):
    """TANH -> HARD_SWISH -> LOGISTIC -> SOFTMAX: in-place candidates back to back."""
    import tensorflow as tf

    return tf.nn.softmax(tf.sigmoid(hard_swish(tf.tanh(x))))


def build() -> list[Path]:
    import tensorflow as tf

    def leaky(alpha: float) -> Callable:
        def f(x):
            return tf.nn.leaky_relu(x, alpha=alpha)

        return f

    unary = {
        "act_logistic_a": (tf.sigmoid, -3.0, 5.0),
        "act_logistic_b": (tf.sigmoid, -20.0, 2.0),
        "act_tanh_a": (tf.tanh, -2.0, 2.0),
        "act_tanh_b": (tf.tanh, -0.3, 0.8),
        "act_hardswish_a": (hard_swish, -4.0, 6.0),
        "act_hardswish_b": (hard_swish, -0.5, 0.4),
        "act_hardswish_c": (hard_swish, -40.0, 60.0),
        "act_relu_a": (tf.nn.relu, -3.0, 5.0),
        "act_relu_b": (tf.nn.relu, -1.0, 12.0),
        "act_relu6_a": (tf.nn.relu6, -3.0, 8.0),
        "act_relu6_b": (tf.nn.relu6, -1.0, 4.0),
        "act_leakyrelu_a": (leaky(0.2), -3.0, 5.0),
        "act_leakyrelu_b": (leaky(0.01), -10.0, 2.0),
    }
    paths = []
    for name, (fn, lo, hi) in unary.items():
        paths.append(save(name, convert(fn, UNARY_SHAPE, lo, hi), OUT))

    paths.append(save("act_chain", convert(chain, UNARY_SHAPE, -2.0, 3.0), OUT))

    paths.append(save("softmax_a", convert(tf.nn.softmax, (10,), -3.0, 5.0), OUT))
    paths.append(save("softmax_b", convert(tf.nn.softmax, (2, 4, 16), -8.0, 8.0), OUT))
    paths.append(save("softmax_c", convert(tf.nn.softmax, (100,), -1.0, 1.0), OUT))
    paths.append(
        save("softmax_beta", set_softmax_beta(convert(tf.nn.softmax, (12,), -6.0, 4.0), 0.37), OUT)
    )

    paths.append(save("quant_f32_relu", convert(tf.nn.relu, (64,), -2.0, 7.0, float_io=True), OUT))
    paths.append(
        save("quant_f32_softmax", convert(tf.nn.softmax, (3, 10), -5.0, 5.0, float_io=True), OUT)
    )
    paths.append(
        save("quant_requant", relabel_as_quantize(convert(tf.tanh, UNARY_SHAPE, -1.5, 0.6)), OUT)
    )
    return paths


if __name__ == "__main__":
    for p in build():
        print(f"{p} ({p.stat().st_size} bytes)")
