"""Generate the data-movement test models (TRANSPOSE, RESIZE_NEAREST_NEIGHBOR, STRIDED_SLICE,
SLICE, SPLIT, SPLIT_V, PACK, UNPACK, GATHER, DEPTH_TO_SPACE, SPACE_TO_DEPTH) into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_layout`` (needs TensorFlow). Every
model goes through the converter with full-integer quantization; odd sizes, every permutation
kind, negative strides and masks.
"""

from __future__ import annotations

from .common import MODELS_DIR, save, to_int8_tflite
from .ops_elementwise import _fn, rep

OUT = MODELS_DIR / "ops"


def _model(shapes, body, seed: int, mean: float = 0.0, spread: float = 1.0) -> bytes:
    specs = [(s, mean, spread) for s in shapes]
    return to_int8_tflite(_fn(shapes, body), rep(specs, seed=seed, batch=False))


def _r(x, shape):
    import tensorflow as tf

    return tf.reshape(x, shape)


def _flat(x):
    """Back to a batch-1 output (samples are stacked on axis 0 when compared)."""
    import tensorflow as tf

    return tf.reshape(x, (1, -1))


def transposes() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        # PyTorch NCHW exports begin with NCHW -> NHWC
        "transpose_nchw": _model([(1, 3, 8, 6)], lambda x: tf.transpose(x, [0, 2, 3, 1]), 60),
        "transpose_nhwc_nchw": _model(
            [(1, 5, 7, 3)], lambda x: tf.transpose(x, [0, 3, 1, 2]), 61, 0.5
        ),
        "transpose_rank2": _model([(1, 35)], lambda x: _flat(tf.transpose(_r(x, (7, 5)))), 62),
        "transpose_rank3": _model([(1, 6, 10)], lambda x: tf.transpose(x, [0, 2, 1]), 63),
        "transpose_rank5": _model(
            [(1, 120)],
            lambda x: _flat(tf.transpose(_r(x, (2, 3, 1, 4, 5)), [4, 1, 0, 3, 2])),
            64,
            -0.3,
            2.0,
        ),
        # the innermost dim stays: rows of 4 bytes move
        "transpose_keep_c": _model(
            [(1, 3, 5, 4)], lambda x: tf.transpose(x, [0, 2, 1, 3]), 65, 0.0, 0.5
        ),
    }


def resizes() -> dict[str, bytes]:
    import tensorflow as tf

    v1 = tf.compat.v1.image.resize_nearest_neighbor
    return {
        # TF2's resize: half_pixel_centers
        "resize_nn_up2": _model(
            [(1, 7, 5, 3)], lambda x: tf.image.resize(x, (14, 10), "nearest"), 70
        ),
        "resize_nn_down": _model(
            [(1, 9, 7, 2)], lambda x: tf.image.resize(x, (4, 3), "nearest"), 71, 0.5
        ),
        "resize_nn_align": _model(
            [(1, 5, 4, 3)], lambda x: v1(x, (9, 7), align_corners=True), 72, -0.5, 2.0
        ),
        "resize_nn_plain": _model([(1, 5, 3, 4)], lambda x: v1(x, (8, 7)), 73),
    }


def slices() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        "strided_slice_steps": _model(
            [(1, 9, 8, 5)], lambda x: x[:, 1:8:2, 6:1:-2, 1:], 80, 0.3, 1.5
        ),
        # negative indices, begin/end masks, reversed channels
        "strided_slice_masks": _model([(1, 7, 6, 4)], lambda x: x[:, -5:, :-1, ::-1], 81),
        # shrink_axis drops dims (x[:, 2] and a last-channel pick)
        "strided_slice_shrink": _model([(1, 5, 7, 3)], lambda x: x[:, 2, 1:6, -1], 82, -0.5),
        "strided_slice_rank2": _model([(1, 13)], lambda x: x[:, 11:0:-3], 83),
        "slice_block": _model(
            [(1, 6, 7, 5)], lambda x: tf.slice(x, [0, 1, 2, 1], [1, 4, -1, 3]), 84, 0.0, 2.0
        ),
        # a leading contiguous block (one run of bytes)
        "slice_lead": _model([(1, 8, 3, 4)], lambda x: tf.slice(x, [0, 2, 0, 0], [1, 5, 3, 4]), 85),
    }


def splits() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        # every output a graph output
        "split_c3": _model([(1, 4, 5, 6)], lambda x: tf.split(x, 3, axis=3), 90),
        "split_v": _model(
            [(1, 7, 4, 3)], lambda x: tf.split(x, [2, -1, 3], axis=-3), 92, -0.4, 1.5
        ),
        "unpack_axis1": _model([(1, 3, 5, 4)], lambda x: tf.unstack(x, axis=1), 93),
        "unpack_last": _model([(1, 4, 3)], lambda x: tf.unstack(x, axis=-1), 94, 0.5),
        "pack_axis_last": _model(
            [(1, 4, 5), (1, 4, 5), (1, 4, 5)], lambda a, b, c: tf.stack([a, b, c], -1), 95
        ),
        "pack_axis1": _model(
            [(1, 3, 4), (1, 3, 4)], lambda a, b: tf.stack([a, b * 2.0], axis=1), 96
        ),
    }


def written() -> dict[str, bytes]:
    """Models the converter cannot make: a SPLIT whose outputs 0 and 2 are never read (the
    converter leaves such a SPLIT in float), still placed and written by the compiler."""
    import numpy as np
    import tflite

    from .tflite_writer import Node, T, write

    def split_opts(b) -> int:
        tflite.SplitOptionsStart(b)
        tflite.SplitOptionsAddNumSplits(b, 3)
        return tflite.SplitOptionsEnd(b)

    q_in, q = (0.05, -3), (0.04, -20)
    return {
        "split_unused": write(
            [T("x", (1, 6, 5, 3), quant=q_in), T("r", (1, 6, 5, 3), quant=q),
             T("axis", (), "int32", data=np.array(1, np.int32)),
             T("s0", (1, 2, 5, 3), quant=q), T("s1", (1, 2, 5, 3), quant=q),
             T("s2", (1, 2, 5, 3), quant=q), T("y", (1, 2, 5, 3), quant=(0.03, -128))],
            [Node("RELU", [0], [1]),
             Node("SPLIT", [2, 1], [3, 4, 5], "SplitOptions", split_opts),
             Node("RELU", [4], [6])],
            [0], [6],
        ),
    }  # fmt: skip


def gathers() -> dict[str, bytes]:
    import tensorflow as tf

    idx23 = [[2, 0, 4], [1, 1, 3]]
    return {
        "gather_axis2": _model([(1, 5, 6, 4)], lambda x: tf.gather(x, [3, 0, 3, 5], axis=2), 100),
        "gather_channels": _model(
            [(1, 4, 3, 7)], lambda x: tf.gather(x, [6, 2, 0, 2, 5], axis=-1), 101, 0.5
        ),
        "gather_idx2d": _model([(1, 6, 5)], lambda x: tf.gather(x, idx23, axis=1), 102),
        # batch_dims 2 (one table of (batch, index) pairs) and 1 with outer dims (one call per
        # batch)
        "gather_batch2": _model(
            [(1, 3, 5, 4)],
            lambda x: tf.gather(x, [[[4, 0], [1, 1], [3, 2]]], axis=2, batch_dims=2),
            103,
        ),
        "gather_batch_outer": _model(
            [(1, 40)],
            lambda x: _flat(tf.gather(_r(x, (2, 4, 5)), idx23, axis=2, batch_dims=1)),
            104,
            -0.2,
        ),
    }


def depth_space() -> dict[str, bytes]:
    import tensorflow as tf

    return {
        "depth_to_space_b2": _model([(1, 3, 5, 12)], lambda x: tf.nn.depth_to_space(x, 2), 110),
        "depth_to_space_b3": _model(
            [(1, 2, 3, 9)], lambda x: tf.nn.depth_to_space(x, 3), 111, 0.5, 2.0
        ),
        "space_to_depth_b2": _model([(1, 6, 4, 3)], lambda x: tf.nn.space_to_depth(x, 2), 112),
        "space_to_depth_b3": _model(
            [(1, 3, 9, 2)], lambda x: tf.nn.space_to_depth(x, 3), 113, -0.5
        ),
    }


def build() -> dict[str, bytes]:
    models: dict[str, bytes] = {}
    models.update(depth_space())
    models.update(gathers())
    models.update(written())
    models.update(splits())
    models.update(slices())
    models.update(transposes())
    models.update(resizes())
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
