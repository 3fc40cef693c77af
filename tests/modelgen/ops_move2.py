"""Generate the second set of data-movement test models (REVERSE_V2, MIRROR_PAD,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, GATHER_ND, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_move2`` (needs TensorFlow). Models
go through the converter with full-integer quantization where it emits the int8 op; the others
are written directly (``tflite_writer``).
"""

from __future__ import annotations

import numpy as np

from .common import MODELS_DIR, save
from .ops_layout import _flat, _model, _r

OUT = MODELS_DIR / "ops"


def reverses() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        "reverse_h": _model([(1, 5, 7, 3)], lambda x: tf.reverse(x, [1]), 80),
        "reverse_hw": _model([(1, 4, 6, 5)], lambda x: tf.reverse(x, [1, 2]), 81, 0.5),
        "reverse_c": _model([(1, 3, 4, 9)], lambda x: tf.reverse(x, [-1]), 82, -0.3, 2.0),
        "reverse_rank2": _model([(1, 35)], lambda x: _flat(tf.reverse(_r(x, (5, 7)), [0])), 83),
    }


def mirror_pads() -> dict[str, bytes]:
    import tensorflow as tf

    def mp(pads, mode):
        return lambda x: tf.pad(x, pads, mode)

    return {
        "mirror_pad_reflect": _model(
            [(1, 6, 5, 3)], mp([[0, 0], [1, 2], [2, 1], [0, 0]], "REFLECT"), 84
        ),
        "mirror_pad_symmetric": _model(
            [(1, 5, 4, 3)], mp([[0, 0], [2, 3], [1, 4], [0, 0]], "SYMMETRIC"), 85, 0.5
        ),
        "mirror_pad_channels": _model(
            [(1, 4, 4, 6)], mp([[0, 0], [0, 0], [3, 3], [2, 5]], "REFLECT"), 86, -0.2, 1.5
        ),
    }


def batch_spaces() -> dict[str, bytes]:
    import tensorflow as tf

    stb, bts = tf.space_to_batch_nd, tf.batch_to_space
    w = np.random.default_rng(87).normal(0, 0.4, (3, 3, 4, 6)).astype(np.float32)

    def dilated(x):
        """What older converters emit for a dilation-2 VALID convolution: SPACE_TO_BATCH_ND,
        CONV_2D, BATCH_TO_SPACE_ND (the crops trim what the blocks add)."""
        y = tf.nn.conv2d(stb(x, [2, 2], [[0, 0], [0, 0]]), w, 1, "VALID")
        return bts(tf.nn.relu(y), [2, 2], [[0, 1], [1, 0]])

    return {
        "space_to_batch": _model([(1, 6, 8, 3)], lambda x: stb(x, [2, 2], [[0, 0], [0, 0]]), 88),
        "space_to_batch_rank3": _model([(1, 9, 5)], lambda x: stb(x, [3], [[0, 0]]), 89, 0.5),
        "batch_to_space_crop": _model(
            [(4, 3, 5, 2)], lambda x: bts(x, [2, 2], [[1, 0], [0, 2]]), 90, -0.4, 1.5
        ),
        "batch_to_space_dilated_conv": _model([(1, 12, 14, 4)], dilated, 91),
    }


def main() -> None:
    models = {**reverses(), **mirror_pads(), **batch_spaces()}
    for name, data in models.items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
