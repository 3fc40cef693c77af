"""Generate the PAD, PADV2, CONCATENATION and RESHAPE test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_shape``. The converter turns
tf.squeeze / tf.expand_dims into RESHAPE, so SQUEEZE and EXPAND_DIMS are covered by IR-level
tests only. It also forces one quantization on all concatenation inputs; ``concat_qdiff`` patches
the flatbuffer to give the inputs other scales and zero points, a model TFLM refuses (a negative
test: the compiler must refuse it too).
"""

from __future__ import annotations

import numpy as np

from .common import MODELS_DIR, save, to_int8_tflite
from .ops_elementwise import _fn, op_tensors, patch_quant, rep

OUT = MODELS_DIR / "ops"


def build() -> dict[str, bytes]:
    import tensorflow as tf

    models: dict[str, bytes] = {}

    # ---------------------------------------------------------------- PAD / PADV2
    zp2d = tf.keras.Sequential(
        [
            tf.keras.Input((5, 5, 4), batch_size=1),
            tf.keras.layers.ZeroPadding2D(((1, 2), (2, 1))),
        ]
    )
    models["pad_zero2d"] = to_int8_tflite(zp2d, rep([((5, 5, 4), 0.8, 1.0)], seed=30))
    models["pad_v2"] = to_int8_tflite(
        _fn(
            [(1, 4, 4, 3)],
            lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 1]], constant_values=0.7),
        ),
        rep([((4, 4, 3), -0.2, 1.0)], seed=31),
    )
    models["pad_rank3"] = to_int8_tflite(
        _fn([(1, 7, 5)], lambda x: tf.pad(x, [[0, 0], [2, 0], [1, 3]])),
        rep([((7, 5), -1.0, 0.5)], seed=32),
    )
    models["pad_channels"] = to_int8_tflite(
        _fn([(1, 3, 3, 5)], lambda x: tf.pad(x, [[0, 0], [0, 0], [0, 0], [2, 3]])),
        rep([((3, 3, 5), 0.5, 2.0)], seed=33),
    )
    # Output quantization differs from the input's: TFLM copies bytes and pads with the
    # output zero point.
    base = to_int8_tflite(
        _fn([(1, 4, 3, 2)], lambda x: tf.pad(x, [[0, 0], [1, 1], [0, 2], [0, 0]])),
        rep([((4, 3, 2), 0.0, 1.0)], seed=34),
    )
    _, outs = op_tensors(base)
    models["pad_qdiff"] = patch_quant(base, outs[0], 0.05, -37)

    # ---------------------------------------------------------------- CONCATENATION
    models["concat_c3"] = to_int8_tflite(
        _fn(
            [(1, 4, 4, 3), (1, 4, 4, 5), (1, 4, 4, 2)],
            lambda a, b, c: tf.concat([a, b, c], -1),
        ),
        rep([((4, 4, 3), 0.0, 1.0), ((4, 4, 5), 1.0, 3.0), ((4, 4, 2), -2.0, 0.3)], seed=40),
    )
    const = (np.arange(24, dtype=np.float32).reshape(1, 2, 4, 3) / 12.0) - 1.0
    models["concat_const_axis1"] = to_int8_tflite(
        _fn([(1, 4, 4, 3)], lambda a: tf.concat([a, tf.constant(const)], 1)),
        rep([((4, 4, 3), 0.0, 1.0)], seed=41),
    )
    models["concat_axis_neg2"] = to_int8_tflite(
        _fn([(1, 3, 2, 4), (1, 3, 5, 4)], lambda a, b: tf.concat([a, b], -2)),
        rep([((3, 2, 4), 0.5, 1.0), ((3, 5, 4), -0.5, 2.0)], seed=42),
    )
    models["concat_rank2"] = to_int8_tflite(
        _fn([(1, 5), (1, 7)], lambda a, b: tf.concat([a, b], 1)),
        rep([((5,), 0.0, 1.0), ((7,), 3.0, 1.0)], seed=43),
    )
    base = to_int8_tflite(
        _fn(
            [(1, 2, 3, 4), (1, 2, 3, 2), (1, 2, 3, 3)],
            lambda a, b, c: tf.concat([a, b, c], 3),
        ),
        rep([((2, 3, 4), 0.0, 1.0), ((2, 3, 2), 0.0, 1.0), ((2, 3, 3), 0.0, 1.0)], seed=44),
    )
    ins, _ = op_tensors(base)
    base = patch_quant(base, ins[1], 0.11, 20)
    models["concat_qdiff"] = patch_quant(base, ins[2], 0.003, -100)

    # ---------------------------------------------------------------- RESHAPE
    flat = tf.keras.Sequential([tf.keras.Input((3, 3, 4), batch_size=1), tf.keras.layers.Flatten()])
    models["reshape_flatten"] = to_int8_tflite(flat, rep([((3, 3, 4), 0.0, 1.0)], seed=50))
    models["reshape_chain"] = to_int8_tflite(
        _fn(
            [(1, 4, 4, 8), (1, 1, 8)],
            lambda a, b: (
                tf.expand_dims(tf.squeeze(tf.reshape(a * 0.5, (1, 16, 8)) + b, 0), 0) * 2.0
            ),
        ),
        rep([((4, 4, 8), 0.0, 1.0), ((1, 8), 0.5, 1.0)], seed=51),
    )
    models["reshape_squeeze"] = to_int8_tflite(
        _fn([(1, 4, 1, 8)], lambda a: tf.squeeze(a * 2.0, 2) + 1.0),
        rep([((4, 1, 8), 0.0, 1.0)], seed=52),
    )
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
