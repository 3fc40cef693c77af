"""Generate the speech classifier of the audio pipeline: tests/models/signal/speech_int8.tflite.

Run from the repository root: ``python -m tests.modelgen.signal_speech`` (needs TensorFlow,
tflite_micro, scipy and the ``espeak-ng`` program; run signal_models.py first). TFLM's
micro_speech shapes: 49x40 int8 features in (one row per 30 ms frame every 20 ms), 4 scores
out (silence, unknown, yes, no). Layers: RESHAPE, DEPTHWISE_CONV_2D (10x8, stride 2, 8
filters, ReLU), CONV_2D (3x3, stride 2, 8 filters, ReLU), FULLY_CONNECTED, SOFTMAX; full int8
quantization (tests/modelgen/common.py) calibrated on real features.

Trained briefly on clips made here: "yes" and "no" and ten other words ("unknown") spoken by
espeak-ng in 8 voices at 3 speeds and 3 pitches, at random offsets in one second with some
noise, and quiet noise ("silence"); the test voice (en-us, speed 150, pitch 50: espeak_*.wav)
is left out. Features are those of tests/models/ops/signal_frontend.tflite run by TFLM's
interpreter, 49 frames per clip from a fresh state, scaled to int8 by TFLM's micro_speech
formula; the float input is (int8 + 128) * 26 / 255, so the int8 input's scale is 26/255 and
its zero point -128, as TFLM's micro_speech model's.
"""

from __future__ import annotations

import numpy as np

from .common import MODELS_DIR, to_int8_tflite
from .signal_audio import RATE, place, speak

OUT = MODELS_DIR / "signal" / "speech_int8.tflite"
FRONTEND = MODELS_DIR / "ops" / "signal_frontend.tflite"
LABELS = ("silence", "unknown", "yes", "no")
OTHER = ("go", "stop", "up", "down", "left", "right", "on", "off", "seven", "wow")
VOICES = ("en-us", "en", "en-gb-scotland", "en-029", "en-us+f3", "en+m3", "en-gb-x-rp", "en+f2")
SPEEDS, PITCHES = (120, 150, 180), (35, 50, 65)
HELD_OUT = ("en-us", 150, 50)
STEP = 26.0 / 255


def features(clips: list[np.ndarray]) -> np.ndarray:
    """TFLM's interpreter on the front end: (clips, 1960) int8 features."""
    from tflite_micro.python.tflite_micro import runtime

    interp = runtime.Interpreter.from_file(str(FRONTEND))
    out = []
    for audio in clips:
        rows = []
        for k in range(49):
            interp.set_input(audio[k * 320 : k * 320 + 480].reshape(1, 480), 0)
            interp.invoke()
            rows.append(np.array(interp.get_output(0)).reshape(40))
        interp.reset()
        v = (np.stack(rows).astype(np.int32) * 256 + 333) // 666 - 128
        out.append(np.clip(v, -128, 127).astype(np.int8).reshape(1960))
    return np.stack(out)


def dataset(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clips: list[np.ndarray] = []
    labels: list[int] = []

    def add(x: np.ndarray, label: int) -> None:
        for _ in range(2):
            off = int(rng.integers(0, max(RATE - x.size, 1)))
            a = place(x, off, peak=float(rng.uniform(0.3, 0.9))).astype(np.float64)
            a += rng.standard_normal(RATE) * rng.uniform(0, 300)
            clips.append(np.clip(np.round(a), -32768, 32767).astype(np.int16))
            labels.append(label)

    for voice in VOICES:
        for speed in SPEEDS:
            for pitch in PITCHES:
                if (voice, speed, pitch) == HELD_OUT:
                    continue
                add(speak("yes", voice, speed, pitch), 2)
                add(speak("no", voice, speed, pitch), 3)
                add(speak(str(rng.choice(OTHER)), voice, speed, pitch), 1)
    for _ in range(len(clips) // 3):
        a = rng.standard_normal(RATE) * rng.uniform(0, 400)
        clips.append(np.clip(np.round(a), -32768, 32767).astype(np.int16))
        labels.append(0)
    return features(clips), np.array(labels)


def build() -> bytes:
    import tensorflow as tf

    x, y = dataset()
    xf = (x.astype(np.float32) + 128) * STEP
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((1960,), batch_size=1),
            tf.keras.layers.Reshape((49, 40, 1)),
            tf.keras.layers.DepthwiseConv2D(
                (10, 8), strides=2, depth_multiplier=8, padding="same", activation="relu"
            ),
            tf.keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu"),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(4),
            tf.keras.layers.Softmax(),
        ]
    )
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(xf, y, epochs=40, batch_size=32, shuffle=True, verbose=0)
    print("train accuracy", model.evaluate(xf, y, verbose=0)[1])
    ends = np.stack([np.zeros(1960, np.float32), np.full(1960, 255 * STEP, np.float32)])
    rep = np.concatenate([ends, xf[:: max(len(xf) // 64, 1)]])
    return to_int8_tflite(model, lambda: ([r[None]] for r in rep))


def main() -> None:
    OUT.write_bytes(build())
    print("wrote", OUT)


if __name__ == "__main__":
    main()
