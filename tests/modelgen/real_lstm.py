"""An LSTM sequence classifier, the kind users bring for accelerometer or audio-feature frames:
tests/models/real/lstm_classifier.tflite.

Run from the repository root: ``python -m tests.modelgen.real_lstm`` (needs TensorFlow; also
``python -m tests.modelgen.real_models lstm_classifier``, and ``make models``).

int8 sequence [1, 16 steps, 8 features] -> UNIDIRECTIONAL_SEQUENCE_LSTM (24 units; the last
step, a STRIDED_SLICE) -> FULLY_CONNECTED (5 classes) -> SOFTMAX.

A Keras 3 ``LSTM`` + ``Dense`` model is trained a few epochs on synthetic motion-like sequences
(``sample_data``); its weights then go into the converter-fused form of ``ops_lstm`` (a
``tf.function`` tagged ``api_implements="lstm_..."``, converted through the saved-model path),
since Keras 3's own LSTM lowers to a WHILE loop the converter does not fuse. Seeded: reruns give
the same weights (the fused function's tag is a fresh uuid, which does not reach the file).

Trained, the cell state reaches about 9.5 on these sequences, so the converter gives it the scale
2^-11 (2^-12 holds +-8). The hidden and cell states are variable tensors: like TFLM, the
compiled model carries them from one sequence to the next unless ``tc_reset_state()`` is called.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import save, to_int8_tflite
from .ops_lstm import fused_lstm
from .real_models import OUT
from .whole_models import _keras, _seed

NAME = "lstm_classifier"
STEPS, N_IN, UNITS, N_CLASSES = 16, 8, 24, 5
SEED = 2468
N_TRAIN = 768


def _sequences(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` motion-like sequences [n, 16, 8] and their labels: per class a frequency and, per
    feature, an amplitude and a phase; every sample starts at a random phase (so the class is in
    the dynamics, not in the value at a fixed step), plus noise; about normal(0, 1)."""
    rng = np.random.default_rng(SEED)  # the class patterns: the same for every ``seed``
    freq = rng.uniform(0.5, 3.0, N_CLASSES)  # cycles per 16 steps
    amp = rng.uniform(0.4, 1.6, (N_CLASSES, N_IN))
    phase = rng.uniform(0, 2 * np.pi, (N_CLASSES, N_IN))
    offset = rng.normal(0, 0.3, (N_CLASSES, N_IN))
    rng = np.random.default_rng(seed)
    y = rng.integers(0, N_CLASSES, n)
    start = rng.uniform(0, 2 * np.pi, n)
    t = np.arange(STEPS)
    arg = 2 * np.pi * freq[y, None] * t / STEPS + start[:, None]  # [n, steps]
    x = amp[y, None] * np.sin(arg[..., None] + phase[y, None]) + offset[y, None]
    x += 1.0 * rng.normal(0, 1, x.shape)
    return x.astype(np.float32), y.astype(np.int64)


def sample_data(n: int) -> np.ndarray:
    """``n`` held-out float sequences [n, 16, 8] like the training data (no TensorFlow needed)."""
    return _sequences(n, SEED + 1)[0]


def train() -> tuple[list[np.ndarray], np.ndarray]:
    """Trains the float Keras model; returns its weights (LSTM kernel [8, 96], recurrent kernel
    [24, 96], bias [96] in gate order i, f, c, o; dense kernel [24, 5], bias [5]) and the
    training inputs."""
    _seed(SEED)
    _, keras = _keras()
    inp = keras.Input((STEPS, N_IN))
    h = keras.layers.LSTM(UNITS)(inp)
    out = keras.layers.Dense(N_CLASSES, activation="softmax")(h)
    model = keras.Model(inp, out, name=NAME)
    x, y = _sequences(N_TRAIN, SEED)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    hist = model.fit(x, y, batch_size=32, epochs=3, shuffle=True, verbose=0)
    xv, yv = _sequences(256, SEED + 1)
    acc = float((model.predict(xv, verbose=0).argmax(1) == yv).mean())
    print(f"{NAME}: train acc {hist.history['accuracy'][-1]:.2f}, held-out acc {acc:.2f}")
    return [np.asarray(w) for w in model.get_weights()], x


def convert(weights: list[np.ndarray], x: np.ndarray) -> bytes:
    """The trained weights in the fused-LSTM form, converted to int8 (calibrated on training
    sequences)."""
    import tensorflow as tf

    kernel, recurrent, bias, dense_w, dense_b = (tf.constant(w) for w in weights)
    standard_lstm = fused_lstm(STEPS)

    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec((1, STEPS, N_IN), tf.float32)])
        def __call__(self, x):
            z = tf.zeros((1, UNITS))
            last, _, _, _, _ = standard_lstm(x, z, z, kernel, recurrent, bias)
            return tf.nn.softmax(tf.matmul(last, dense_w) + dense_b)

    m = Model()

    def rep():
        for i in range(100):
            yield [x[i][None]]

    return to_int8_tflite(m.__call__.get_concrete_function(), rep, trackable=m)


def gen_lstm_classifier() -> Path:
    return save(NAME, convert(*train()), OUT)


if __name__ == "__main__":
    from .real_models import main

    main([NAME])
