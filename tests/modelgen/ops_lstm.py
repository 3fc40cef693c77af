"""Generate the UNIDIRECTIONAL_SEQUENCE_LSTM test models into tests/models/ops/.

Run from the repository root: ``/work/tfenv/bin/python -m tests.modelgen.ops_lstm``.

Keras 3's ``LSTM`` lowers to a WHILE loop that the TFLite converter does not fuse (and whose
calibration fails). The converter fuses a function carrying the attributes Keras 2's LSTM gave its
``standard_lstm`` (``api_implements = "lstm_<id>"``, ``time_major``, ``go_backwards``; arguments
input, initial h, initial c, kernel [in, 4u], recurrent kernel [u, 4u], bias [4u], gates in the
order i, f, c, o; five results) into one UNIDIRECTIONAL_SEQUENCE_LSTM, exactly what the converter
emits for ``tf.keras.layers.LSTM(units)`` under Keras 2: int8 input/output, per-tensor int8
weights, int32 biases, an int8 hidden state and an int16 cell state (scale 2^-15) as variable
tensors, cell_clip 10, TANH. ``return_sequences=False`` adds a STRIDED_SLICE of the last step.
The function body (an unrolled float LSTM) is what the float graph computes during calibration.
"""

from __future__ import annotations

import uuid

import numpy as np

from .common import MODELS_DIR, save, to_int8_tflite

OUT = MODELS_DIR / "ops"


def fused_lstm(steps: int, time_major: bool = False):
    """The Keras-2-style ``standard_lstm`` tf.function over ``steps`` steps that the converter
    fuses into one UNIDIRECTIONAL_SEQUENCE_LSTM (see the module doc); a fresh id per call.
    ``time_major``: the input is [steps, batch, n_in] (and so is the sequence output)."""
    import tensorflow as tf

    attrs = {
        "api_implements": f"lstm_{uuid.uuid4()}",
        "time_major": time_major,
        "go_backwards": False,
    }
    axis = 0 if time_major else 1

    @tf.function(experimental_attributes=attrs, autograph=False)
    def standard_lstm(x, init_h, init_c, k, rk, b):
        h, c, outs = init_h, init_c, []
        for t in range(steps):
            z = tf.matmul(x[t] if time_major else x[:, t], k) + tf.matmul(h, rk) + b
            i, f, g, o = tf.split(z, 4, axis=1)
            c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h = tf.sigmoid(o) * tf.tanh(c)
            outs.append(h)
        return h, tf.stack(outs, axis=axis), h, c, tf.constant(0.0)

    return standard_lstm


def lstm_model(
    *,
    steps: int,
    n_in: int,
    units: int,
    return_sequences: bool,
    seed: int = 0,
    batch: int = 1,
    time_major: bool = False,
) -> bytes:
    """A ``[batch, steps, n_in]`` int8 sequence (``[steps, batch, n_in]`` when ``time_major``)
    through one Keras-style LSTM layer; a fixed batch, as a concrete input signature gives."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    kernel = tf.constant(rng.normal(0, 0.6, (n_in, 4 * units)).astype(np.float32))
    recurrent = tf.constant(rng.normal(0, 0.5, (units, 4 * units)).astype(np.float32))
    bias = rng.normal(0, 0.2, (4 * units,)).astype(np.float32)
    bias[units : 2 * units] += 1.0  # Keras' unit forget bias
    bias_t = tf.constant(bias)
    standard_lstm = fused_lstm(steps, time_major)
    shape = (steps, batch, n_in) if time_major else (batch, steps, n_in)

    class Model(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32)])
        def __call__(self, x):
            z = tf.zeros((batch, units))
            last, seq, _, _, _ = standard_lstm(x, z, z, kernel, recurrent, bias_t)
            return seq if return_sequences else last

    m = Model()

    def rep():
        r = np.random.default_rng(seed + 1)
        for _ in range(48):
            yield [r.normal(0, 1.0, size=shape).astype(np.float32)]

    return to_int8_tflite(m.__call__.get_concrete_function(), rep, trackable=m)


def build() -> dict[str, bytes]:
    return {
        "lstm_seq": lstm_model(steps=6, n_in=5, units=8, return_sequences=True),
        "lstm_last": lstm_model(steps=5, n_in=3, units=12, return_sequences=False, seed=1),
        "lstm_seq_wide": lstm_model(steps=3, n_in=20, units=16, return_sequences=True, seed=2),
        # a fixed batch of 2 (a concrete input signature), and a time-major sequence
        "lstm_batch2": lstm_model(steps=4, n_in=5, units=8, return_sequences=True, seed=3, batch=2),
        "lstm_time_major": lstm_model(
            steps=5, n_in=4, units=6, return_sequences=True, seed=4, batch=3, time_major=True
        ),
    }


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"wrote {p} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
