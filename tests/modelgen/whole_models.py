"""Whole-model test networks (MLPerf Tiny architectures) and the bundled digits example.

Run from the repository root: ``python -m tests.modelgen.whole_models [name ...]``.
Writes ``tests/models/{kws_dscnn,vww_mobilenet,ic_resnet8,ad_autoencoder}.tflite`` and
``examples/digits.tflite`` (+ ``digits_inputs.npy``, ``digits_labels.npy``).

The MLPerf networks are written from the published MLPerf Tiny descriptions. They are trained for
a few steps on synthetic data with structure (class templates plus noise, or a low-rank signal for
the autoencoder) whose samples are close to normal(0, 1): the same range the test harness feeds.
BatchNorm layers use random gamma/beta and a low momentum, so their moving statistics follow the
real activations and folding them gives realistic, non-uniform per-channel scales. The digits CNN is
really trained on scikit-learn's digits dataset. Everything is seeded: reruns give the same files.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .common import save, to_int8_tflite

EXAMPLES_DIR = Path(__file__).resolve().parent.parent.parent / "examples"
SEED = 1234


def _keras():
    """Import TensorFlow/Keras with deterministic settings (lazily: only generation needs it)."""
    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()
    return tf, tf.keras


def _seed(seed: int) -> None:
    _, keras = _keras()
    keras.backend.clear_session()  # layer-name counters restart: same names, same bytes
    keras.utils.set_random_seed(seed)


def _bn(keras):
    """BatchNorm whose statistics follow the data within a few steps, with random affine."""
    return keras.layers.BatchNormalization(
        momentum=0.8,
        gamma_initializer=keras.initializers.RandomUniform(0.6, 1.4),
        beta_initializer=keras.initializers.RandomNormal(0.0, 0.2),
    )


def _bn_relu(keras, x):
    return keras.layers.ReLU()(_bn(keras)(x))


# ---------------------------------------------------------------------------------------------
# Architectures
# ---------------------------------------------------------------------------------------------


def build_kws_dscnn(keras):
    """MLPerf Tiny keyword spotting DS-CNN: 49x10x1 MFCC input, 12 classes."""
    inp = keras.Input((49, 10, 1))
    x = keras.layers.Conv2D(64, (10, 4), strides=(2, 2), padding="same")(inp)
    x = _bn_relu(keras, x)
    for _ in range(4):
        x = keras.layers.DepthwiseConv2D((3, 3), padding="same")(x)
        x = _bn_relu(keras, x)
        x = keras.layers.Conv2D(64, (1, 1), padding="same")(x)
        x = _bn_relu(keras, x)
    x = keras.layers.AveragePooling2D(pool_size=tuple(x.shape[1:3]))(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(12, activation="softmax")(x)
    return keras.Model(inp, out, name="kws_dscnn")


def build_vww_mobilenet(keras, alpha: float = 0.25):
    """MLPerf Tiny visual wake words MobileNetV1 (alpha 0.25) at 96x96x3, 2 classes."""
    f = int(32 * alpha)
    inp = keras.Input((96, 96, 3))
    x = keras.layers.Conv2D(f, 3, strides=2, padding="same", kernel_initializer="he_normal")(inp)
    x = _bn_relu(keras, x)
    # (pointwise filter multiple of 32*alpha, depthwise stride) for the 13 separable blocks
    blocks = [(2, 1), (4, 2), (4, 1), (8, 2), (8, 1), (16, 2)] + [(16, 1)] * 5 + [(32, 2), (32, 1)]
    for mult, stride in blocks:
        x = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same")(x)
        x = _bn_relu(keras, x)
        x = keras.layers.Conv2D(f * mult, 1, padding="same", kernel_initializer="he_normal")(x)
        x = _bn_relu(keras, x)
    x = keras.layers.AveragePooling2D(pool_size=tuple(x.shape[1:3]))(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(2, activation="softmax")(x)
    return keras.Model(inp, out, name="vww_mobilenet")


def build_ic_resnet8(keras):
    """MLPerf Tiny image classification ResNet-8 at 32x32x3, 10 classes."""
    conv = keras.layers.Conv2D
    inp = keras.Input((32, 32, 3))
    x = _bn_relu(keras, conv(16, 3, padding="same", kernel_initializer="he_normal")(inp))
    for filters, stride in [(16, 1), (32, 2), (64, 2)]:
        y = conv(filters, 3, strides=stride, padding="same", kernel_initializer="he_normal")(x)
        y = _bn_relu(keras, y)
        y = conv(filters, 3, padding="same", kernel_initializer="he_normal")(y)
        y = _bn(keras)(y)
        if stride != 1 or x.shape[-1] != filters:
            x = conv(filters, 1, strides=stride, padding="same", kernel_initializer="he_normal")(x)
        x = keras.layers.ReLU()(keras.layers.Add()([x, y]))
    x = keras.layers.AveragePooling2D(pool_size=tuple(x.shape[1:3]))(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(10, activation="softmax")(x)
    return keras.Model(inp, out, name="ic_resnet8")


def build_ad_autoencoder(keras, n_in: int = 640):
    """MLPerf Tiny anomaly detection FC autoencoder: 640 -> 4x128 -> 8 -> 4x128 -> 640."""
    inp = keras.Input((n_in,))
    x = inp
    for units in [128] * 4 + [8] + [128] * 4:
        x = _bn_relu(keras, keras.layers.Dense(units)(x))
    out = keras.layers.Dense(n_in)(x)
    return keras.Model(inp, out, name="ad_autoencoder")


def build_digits(keras):
    """Small CNN for scikit-learn's 8x8 digits."""
    inp = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(10, activation="softmax")(x)
    return keras.Model(inp, out, name="digits")


# ---------------------------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------------------------


def class_data(
    shape: tuple[int, ...], n_classes: int, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Samples ``0.7 * template[label] + 0.7 * noise``: roughly normal(0, 1), learnable labels."""
    rng = np.random.default_rng(seed)
    templates = rng.normal(0, 1, size=(n_classes, *shape))
    y = rng.integers(0, n_classes, size=n)
    x = 0.7 * templates[y] + 0.7 * rng.normal(0, 1, size=(n, *shape))
    return x.astype(np.float32), y.astype(np.int64)


def lowrank_data(n_in: int, rank: int, n: int, seed: int) -> np.ndarray:
    """Samples on a noisy ``rank``-dimensional subspace, standardised to about normal(0, 1)."""
    rng = np.random.default_rng(seed)
    basis = rng.normal(0, 1, size=(rank, n_in)) / np.sqrt(rank)
    x = rng.normal(0, 1, size=(n, rank)) @ basis + 0.3 * rng.normal(0, 1, size=(n, n_in))
    return (x / x.std()).astype(np.float32)


def mixed_rep(x_train: np.ndarray, n: int, seed: int) -> Callable:
    """Representative data: half training samples, half normal(0, 1) noise (what tests feed)."""

    def gen():
        rng = np.random.default_rng(seed)
        for i in range(n):
            if i % 2 == 0:
                yield [x_train[rng.integers(len(x_train))][None]]
            else:
                yield [rng.normal(0, 1, size=(1, *x_train.shape[1:])).astype(np.float32)]

    return gen


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


def _convert(model, rep: Callable) -> bytes:
    """Convert with a fixed batch of 1: Flatten becomes a static RESHAPE (no SHAPE/PACK ops),
    or disappears when FULLY_CONNECTED can take the pooled 1x1xC tensor directly."""
    tf, _ = _keras()
    spec = tf.TensorSpec((1, *model.input_shape[1:]), tf.float32)
    fn = tf.function(lambda x: model(x, training=False), input_signature=[spec])
    return to_int8_tflite(fn.get_concrete_function(), rep)


def _train_classifier(
    model, shape: tuple[int, ...], n_classes: int, n: int, epochs: int, seed: int, lr: float = 2e-3
) -> tuple[np.ndarray, float]:
    """Fit a few epochs on template data; returns the training samples and last accuracy."""
    _, keras = _keras()
    x, y = class_data(shape, n_classes, n, seed)
    model.compile(
        optimizer=keras.optimizers.Adam(lr),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    hist = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=True, verbose=0)
    return x, float(hist.history["accuracy"][-1])


def gen_kws() -> Path:
    """kws_dscnn.tflite: 12 template classes of 49x10x1 "MFCC" noise, 3 epochs."""
    _seed(SEED)
    _, keras = _keras()
    model = build_kws_dscnn(keras)
    x, acc = _train_classifier(model, (49, 10, 1), 12, 384, 3, SEED)
    print(f"kws_dscnn: train acc {acc:.2f}")
    return save("kws_dscnn", _convert(model, mixed_rep(x, 100, SEED)))


def gen_vww() -> Path:
    """vww_mobilenet.tflite: 2 template classes of 96x96x3 images, 3 epochs."""
    _seed(SEED + 1)
    _, keras = _keras()
    model = build_vww_mobilenet(keras)
    x, acc = _train_classifier(model, (96, 96, 3), 2, 256, 3, SEED + 1)
    print(f"vww_mobilenet: train acc {acc:.2f}")
    return save("vww_mobilenet", _convert(model, mixed_rep(x, 64, SEED + 1)))


def gen_resnet8() -> Path:
    """ic_resnet8.tflite: 10 template classes of 32x32x3 images, 3 epochs."""
    _seed(SEED + 2)
    _, keras = _keras()
    model = build_ic_resnet8(keras)
    x, acc = _train_classifier(model, (32, 32, 3), 10, 384, 3, SEED + 2)
    print(f"ic_resnet8: train acc {acc:.2f}")
    return save("ic_resnet8", _convert(model, mixed_rep(x, 100, SEED + 2)))


def gen_autoencoder() -> Path:
    """ad_autoencoder.tflite: reconstructs a noisy rank-8 signal in 640 dims, 4 epochs."""
    _seed(SEED + 3)
    _, keras = _keras()
    model = build_ad_autoencoder(keras)
    x = lowrank_data(640, 8, 512, SEED + 3)
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss="mse")
    hist = model.fit(x, x, batch_size=32, epochs=4, shuffle=True, verbose=0)
    print(f"ad_autoencoder: train mse {hist.history['loss'][-1]:.3f}")
    return save("ad_autoencoder", _convert(model, mixed_rep(x, 100, SEED + 3)))


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn digits scaled to [0, 1], NHWC, split 75/25 with a fixed seed."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[..., None]
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)


def quantize_input(x: np.ndarray, model_path: Path) -> np.ndarray:
    """Quantize float samples with the model's int8 input scale and zero point."""
    from tinycompile.frontend import load_model

    g = load_model(model_path)
    q = g.t(g.inputs[0]).quant
    assert q is not None
    return np.clip(np.round(x / q.s) + q.zp, -128, 127).astype(np.int8)


def gen_digits(n_saved: int = 20) -> Path:
    """examples/digits.tflite trained 30 epochs on the digits, plus the saved test samples."""
    from tinycompile.run.reference import run_tflm

    _seed(SEED + 4)
    _, keras = _keras()
    x_tr, x_te, y_tr, y_te = digits_split()
    model = build_digits(keras)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x_tr, y_tr, batch_size=32, epochs=30, shuffle=True, verbose=0)
    float_acc = float(np.mean(np.argmax(model.predict(x_te, verbose=0), axis=1) == y_te))

    def rep():
        for i in range(0, len(x_tr), 4):
            yield [x_tr[i : i + 1]]

    path = save("digits", _convert(model, rep), EXAMPLES_DIR)
    q = quantize_input(x_te, path)
    pred = np.argmax(run_tflm(path, [q]).outputs[0], axis=1)
    int8_acc = float(np.mean(pred == y_te))
    np.save(EXAMPLES_DIR / "digits_inputs.npy", q[:n_saved])
    np.save(EXAMPLES_DIR / "digits_labels.npy", y_te[:n_saved].astype(np.int64))
    print(
        f"digits: {len(y_te)} test images, float acc {float_acc:.4f}, int8 acc {int8_acc:.4f}, "
        f"first {n_saved}: int8 {np.mean(pred[:n_saved] == y_te[:n_saved]):.2f}"
    )
    return path


GENERATORS: dict[str, Callable[[], Path]] = {
    "kws_dscnn": gen_kws,
    "vww_mobilenet": gen_vww,
    "ic_resnet8": gen_resnet8,
    "ad_autoencoder": gen_autoencoder,
    "digits": gen_digits,
}


# ---------------------------------------------------------------------------------------------
# Diagnostics: are the int8 activations alive on the inputs the tests feed?
# ---------------------------------------------------------------------------------------------


def diagnose(path: Path, n: int = 20, seed: int = 0) -> None:
    """Print op list, size, and per-op saturation on normal(0, 1) quantized inputs (TFLM)."""
    from tinycompile.frontend import load_model
    from tinycompile.run.reference import run_tflm

    g = load_model(path)
    params = sum(t.size for t in g.tensors if t.is_const)
    kinds: dict[str, int] = {}
    for op in g.ops:
        kinds[op.kind] = kinds.get(op.kind, 0) + 1
    print(f"{path.name}: {path.stat().st_size} bytes, {params} const elements, ops {kinds}")
    t_in = g.t(g.inputs[0])
    q = t_in.quant
    assert q is not None
    rng = np.random.default_rng(seed)
    xf = rng.normal(0, 1, size=(n, *t_in.shape[1:]))
    xq = np.clip(np.round(xf / q.s) + q.zp, -128, 127).astype(np.int8)
    xr = rng.integers(-128, 128, size=(n, *t_in.shape[1:]), dtype=np.int8)
    ids = [tid for op in g.ops for tid in op.outputs]
    for label, x in (("normal", xq), ("uniform-int8", xr)):
        res = run_tflm(path, [x], tensor_ids=ids)
        out = res.outputs[0]
        print(
            f"  [{label}] output distinct values {len(np.unique(out))}, distinct argmax "
            f"{len(np.unique(np.argmax(out.reshape(n, -1), axis=1)))}"
        )
        for op in g.ops:
            tid = op.outputs[0]
            v = np.stack([s[tid] for s in res.tensors])
            lo, hi = float(np.mean(v == -128)), float(np.mean(v == 127))
            print(
                f"    {op.index:3d} {op.kind:20s} {str(v.shape[1:]):18s} distinct "
                f"{len(np.unique(v)):3d} at -128 {lo:.2f} at 127 {hi:.2f}"
            )


def main(argv: list[str]) -> None:
    names = [a for a in argv if not a.startswith("-")] or list(GENERATORS)
    for name in names:
        path = GENERATORS[name]()
        if "--diagnose" in argv:
            diagnose(path)
        else:
            print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv[1:])
