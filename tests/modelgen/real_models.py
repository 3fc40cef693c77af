"""Models of the kinds users bring, made here: tests/models/real/*.tflite.

Run from the repository root: ``python -m tests.modelgen.real_models [name ...]`` (TensorFlow is
needed for all but ``kws_svdf``, which ``tests.modelgen.real_kws`` writes directly).

- ``nchw_cnn``: a PyTorch export's shape, a 1x3x32x32 NCHW input TRANSPOSEd to NHWC, then
  convolutions, depthwise convolutions, pooling, a dense layer and softmax;
- ``mcunet_se``: an MCUNet-like inverted-residual net with squeeze-and-excitation (MEAN, 1x1
  convolutions, HARD_SWISH, LOGISTIC, MUL broadcasting), residual ADDs and a float32 interface
  (QUANTIZE in, DEQUANTIZE out), 100+ operators;
- ``tiny_det``: a detector with two heads at two scales (LOGISTIC outputs), the finer one fed by
  RESIZE_NEAREST_NEIGHBOR upsampling and CONCATENATION;
- ``kws_svdf``: a streaming keyword model (two SVDF layers with int16 state, FULLY_CONNECTED,
  SOFTMAX), one feature frame per inference;
- ``lstm_classifier``: a sequence classifier (16 steps x 8 features -> UNIDIRECTIONAL_SEQUENCE_LSTM
  -> FULLY_CONNECTED -> SOFTMAX), which ``tests.modelgen.real_lstm`` makes.

The classifiers are trained a few epochs on synthetic class data (``sample_data``): the tests
feed the same kind of data, so the int8 activations stay alive (random int8 codes saturate them).
Everything is seeded: reruns give the same files.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .common import MODELS_DIR, save, to_int8_tflite
from .whole_models import _bn, _keras, _seed, class_data

OUT = MODELS_DIR / "real"
SEED = 4321
SHAPES = {
    "nchw_cnn": (3, 32, 32),
    "mcunet_se": (32, 32, 3),
    "tiny_det": (48, 48, 3),
}
CLASSES = {"nchw_cnn": 10, "mcunet_se": 8, "tiny_det": 4}


N_TRAIN = 512


def sample_data(name: str, n: int) -> np.ndarray:
    """``n`` held-out float samples like model ``name``'s training data (the same class
    templates, other noise; no TensorFlow needed)."""
    return class_data(SHAPES[name], CLASSES[name], N_TRAIN + n, SEED)[0][N_TRAIN:]


# ---------------------------------------------------------------------------------------------
# Architectures
# ---------------------------------------------------------------------------------------------


def build_nchw_cnn(keras, tf):
    """NCHW input, transposed to NHWC as PyTorch exports convert, then a small CNN."""
    inp = keras.Input(SHAPES["nchw_cnn"])
    x = keras.layers.Lambda(lambda t: tf.transpose(t, [0, 2, 3, 1]))(inp)
    x = keras.layers.ReLU()(_bn(keras)(keras.layers.Conv2D(16, 3, padding="same")(x)))
    x = keras.layers.MaxPooling2D(2)(x)
    for filters, stride in [(24, 1), (32, 2), (48, 2)]:
        x = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same")(x)
        x = keras.layers.ReLU(6.0)(_bn(keras)(x))
        x = keras.layers.ReLU(6.0)(_bn(keras)(keras.layers.Conv2D(filters, 1)(x)))
    x = keras.layers.AveragePooling2D(2)(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(CLASSES["nchw_cnn"], activation="softmax")(x)
    return keras.Model(inp, out, name="nchw_cnn")


def _hswish(keras, x):
    return keras.layers.Activation("hard_swish")(x)


def _se(keras, x, reduced: int):
    """Squeeze-and-excitation: MEAN, 1x1 conv + ReLU, 1x1 conv + sigmoid, MUL broadcasting."""
    s = keras.layers.GlobalAveragePooling2D(keepdims=True)(x)
    s = keras.layers.Conv2D(reduced, 1, activation="relu")(s)
    s = keras.layers.Conv2D(x.shape[-1], 1, activation="sigmoid")(s)
    return keras.layers.Multiply()([x, s])


def _inverted_residual(keras, x, expand: int, out_ch: int, stride: int):
    c = x.shape[-1]
    y = _hswish(keras, _bn(keras)(keras.layers.Conv2D(c * expand, 1)(x)))
    y = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same")(y)
    y = _hswish(keras, _bn(keras)(y))
    y = _se(keras, y, max(4, c * expand // 4))
    y = _bn(keras)(keras.layers.Conv2D(out_ch, 1)(y))
    if stride == 1 and c == out_ch:
        y = keras.layers.Add()([x, y])
    return y


def build_mcunet_se(keras, tf):
    """Inverted-residual blocks with squeeze-and-excitation and hard-swish (MCUNet/MobileNetV3)."""
    inp = keras.Input(SHAPES["mcunet_se"])
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same")(inp)
    x = _hswish(keras, _bn(keras)(x))
    blocks = [(2, 8, 1), (3, 12, 2), (3, 12, 1), (3, 16, 2), (3, 16, 1), (3, 16, 1)]
    blocks += [(3, 24, 1), (3, 24, 1), (3, 32, 2), (3, 32, 1)]
    for expand, out_ch, stride in blocks:
        x = _inverted_residual(keras, x, expand, out_ch, stride)
    x = _hswish(keras, _bn(keras)(keras.layers.Conv2D(48, 1)(x)))
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(CLASSES["mcunet_se"], activation="softmax")(x)
    return keras.Model(inp, out, name="mcunet_se")


def build_tiny_det(keras, tf):
    """A backbone and two detection heads (3 anchors x (4 box + 1 object + 1 class) = 18
    channels, LOGISTIC) at 6x6 and, upsampled and concatenated with earlier features, 12x12."""
    inp = keras.Input(SHAPES["tiny_det"])

    def sep(x, filters: int, stride: int):
        x = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same")(x)
        x = keras.layers.ReLU(6.0)(_bn(keras)(x))
        return keras.layers.ReLU(6.0)(_bn(keras)(keras.layers.Conv2D(filters, 1)(x)))

    x = keras.layers.Conv2D(8, 3, strides=2, padding="same")(inp)
    x = keras.layers.ReLU(6.0)(_bn(keras)(x))  # 24x24
    c12 = sep(x, 16, 2)  # 12x12
    c6 = sep(sep(c12, 32, 2), 32, 1)  # 6x6
    head6 = keras.layers.Conv2D(18, 1, activation="sigmoid", name="head6")(c6)
    u = keras.layers.ReLU(6.0)(_bn(keras)(keras.layers.Conv2D(16, 1)(c6)))
    u = keras.layers.Lambda(lambda t: tf.image.resize(t, (12, 12), method="nearest"))(u)
    y = keras.layers.Concatenate()([u, c12])
    y = sep(y, 24, 1)
    head12 = keras.layers.Conv2D(18, 1, activation="sigmoid", name="head12")(y)
    return keras.Model(inp, [head6, head12], name="tiny_det")


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


def _rep(x: np.ndarray, n: int) -> Callable:
    def gen():
        for i in range(n):
            yield [x[i % len(x)][None]]

    return gen


def _convert(model, x: np.ndarray, *, float_io: bool = False) -> bytes:
    tf, _ = _keras()
    spec = tf.TensorSpec((1, *model.input_shape[1:]), tf.float32)
    fn = tf.function(lambda t: model(t, training=False), input_signature=[spec])
    return to_int8_tflite(fn.get_concrete_function(), _rep(x, 100), float_io=float_io)


def _classifier(name: str, build: Callable, *, epochs: int, float_io: bool = False) -> Path:
    _seed(SEED)
    tf, keras = _keras()
    model = build(keras, tf)
    x, y = class_data(SHAPES[name], CLASSES[name], N_TRAIN, SEED)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    hist = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=True, verbose=0)
    print(f"{name}: train acc {hist.history['accuracy'][-1]:.2f}")
    return save(name, _convert(model, x, float_io=float_io), OUT)


def gen_nchw_cnn() -> Path:
    return _classifier("nchw_cnn", build_nchw_cnn, epochs=3)


def gen_mcunet_se() -> Path:
    return _classifier("mcunet_se", build_mcunet_se, epochs=4, float_io=True)


def gen_tiny_det() -> Path:
    """Trained a few epochs to find where each class's template is strong (a target map per
    cell), so the heads' logistic outputs spread over (0, 1)."""
    _seed(SEED)
    tf, keras = _keras()
    model = build_tiny_det(keras, tf)
    x, y = class_data(SHAPES["tiny_det"], CLASSES["tiny_det"], N_TRAIN, SEED)
    rng = np.random.default_rng(SEED)
    maps = rng.uniform(0, 1, size=(CLASSES["tiny_det"], 12, 12, 18)).astype(np.float32)
    t12 = maps[y]
    t6 = t12.reshape(-1, 6, 2, 6, 2, 18).mean(axis=(2, 4))
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="binary_crossentropy")
    hist = model.fit(x, [t6, t12], batch_size=32, epochs=4, shuffle=True, verbose=0)
    print(f"tiny_det: train loss {hist.history['loss'][-1]:.3f}")
    return save("tiny_det", _convert(model, x), OUT)


def gen_kws_svdf() -> Path:
    from .real_kws import kws_svdf

    OUT.mkdir(parents=True, exist_ok=True)
    p = OUT / "kws_svdf.tflite"
    p.write_bytes(kws_svdf())
    return p


def gen_lstm_classifier() -> Path:
    from .real_lstm import gen_lstm_classifier

    return gen_lstm_classifier()


GENERATORS: dict[str, Callable[[], Path]] = {
    "nchw_cnn": gen_nchw_cnn,
    "mcunet_se": gen_mcunet_se,
    "tiny_det": gen_tiny_det,
    "kws_svdf": gen_kws_svdf,
    "lstm_classifier": gen_lstm_classifier,
}


def main(argv: list[str]) -> None:
    from tinycompile.frontend import load_model

    for name in argv or list(GENERATORS):
        path = GENERATORS[name]()
        kinds: dict[str, int] = {}
        for op in load_model(path).ops:
            kinds[op.kind] = kinds.get(op.kind, 0) + 1
        n_ops = sum(kinds.values())
        print(f"wrote {path} ({path.stat().st_size} bytes, {n_ops} ops: {kinds})")


if __name__ == "__main__":
    main(sys.argv[1:])
