"""Generate the ADD, MUL and MEAN test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_elementwise``. Each model holds one
or a few operators of the family, with small tensors; representative data differs per input
(offsets and spreads) so that scales and zero points differ between operands.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable

import numpy as np

from .common import MODELS_DIR, save, to_int8_tflite

OUT = MODELS_DIR / "ops"

# (shape without batch, mean, std) per input; samples get a leading batch of 1 unless noted
Spec = tuple[tuple[int, ...], float, float]


def rep(specs: list[Spec], n: int = 48, seed: int = 0, batch: bool = True):
    """Representative data: normal noise with a per-input mean and spread."""

    def gen() -> Iterable[list[np.ndarray]]:
        rng = np.random.default_rng(seed)
        for _ in range(n):
            yield [
                rng.normal(m, s, size=((1, *sh) if batch else sh)).astype(np.float32)
                for sh, m, s in specs
            ]

    return gen


def _fn(shapes: list[tuple[int, ...]], body: Callable):
    """A tf.function with fixed input shapes (shapes given in full, batch included)."""
    import tensorflow as tf

    sig = [tf.TensorSpec(s, tf.float32) for s in shapes]
    return tf.function(body, input_signature=sig).get_concrete_function()


def _binary(shape_a, shape_b, body):
    return _fn([shape_a, shape_b], body)


def patch_quant(model: bytes, tensor: int, scale: float, zero_point: int) -> bytes:
    """Overwrite tensor ``tensor``'s (per-tensor) scale and zero point in a .tflite flatbuffer.

    Patches bytes in place (sizes unchanged). Used to reach configurations the converter never
    produces by itself (equal MEAN quantization, concatenation inputs with other scales).
    """
    import tflite

    buf = bytearray(model)
    q = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0).Tensors(tensor).Quantization()
    tab = q._tab
    struct.pack_into("<f", buf, tab.Vector(tab.Offset(8)), scale)  # QuantizationParameters.scale
    struct.pack_into("<q", buf, tab.Vector(tab.Offset(10)), zero_point)  # .zero_point
    q2 = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0).Tensors(tensor).Quantization()
    assert q2.Scale(0) == np.float32(scale) and q2.ZeroPoint(0) == zero_point
    return bytes(buf)


def tensor_quant(model: bytes, tensor: int) -> tuple[float, int]:
    import tflite

    q = tflite.Model.GetRootAsModel(bytearray(model), 0).Subgraphs(0).Tensors(tensor).Quantization()
    return float(q.Scale(0)), int(q.ZeroPoint(0))


def op_tensors(model: bytes, op_index: int = 0) -> tuple[list[int], list[int]]:
    """Input and output tensor indices of operator ``op_index``."""
    import tflite

    op = tflite.Model.GetRootAsModel(bytearray(model), 0).Subgraphs(0).Operators(op_index)
    return [int(x) for x in op.InputsAsNumpy()], [int(x) for x in op.OutputsAsNumpy()]


def set_output_quant_like_input(model: bytes, op_index: int = 0) -> bytes:
    """Give op ``op_index``'s output the exact quantization of its input 0."""
    ins, outs = op_tensors(model, op_index)
    return patch_quant(model, outs[0], *tensor_quant(model, ins[0]))


def build() -> dict[str, bytes]:
    import tensorflow as tf

    models: dict[str, bytes] = {}

    # ---------------------------------------------------------------- ADD
    models["add_same"] = to_int8_tflite(
        _binary((1, 6, 6, 8), (1, 6, 6, 8), lambda x, y: x + y),
        rep([((6, 6, 8), 0.0, 1.0), ((6, 6, 8), 0.7, 3.0)]),
    )
    models["add_bcast_c"] = to_int8_tflite(
        _binary((1, 5, 5, 8), (1, 1, 1, 8), lambda x, y: x + y),
        rep([((5, 5, 8), -0.3, 2.0), ((1, 1, 8), 1.0, 0.4)], seed=1),
    )
    models["add_bcast_both"] = to_int8_tflite(
        _binary((1, 4, 1, 6), (1, 1, 5, 6), lambda x, y: x + y),
        rep([((4, 1, 6), 0.2, 0.5), ((1, 5, 6), -1.0, 1.5)], seed=2),
    )
    models["add_first_bcast"] = to_int8_tflite(
        _binary((1, 1, 1, 8), (1, 3, 3, 8), lambda x, y: x + y),
        rep([((1, 1, 8), 0.0, 4.0), ((3, 3, 8), 0.5, 0.3)], seed=3),
    )
    cvec = np.linspace(-1.5, 2.0, 8).astype(np.float32)
    models["add_const_relu"] = to_int8_tflite(
        _fn([(1, 4, 4, 8)], lambda x: tf.nn.relu(x + tf.constant(cvec))),
        rep([((4, 4, 8), 0.0, 1.0)], seed=4),
    )
    models["add_relu6"] = to_int8_tflite(
        _binary((1, 4, 4, 8), (1, 4, 4, 8), lambda x, y: tf.nn.relu6(x + y)),
        rep([((4, 4, 8), 1.0, 2.0), ((4, 4, 8), 2.0, 2.0)], seed=5),
    )
    models["add_rank5"] = to_int8_tflite(
        _binary((1, 2, 3, 4, 5), (1, 2, 1, 4, 1), lambda x, y: x + y),
        rep([((2, 3, 4, 5), 0.0, 1.0), ((2, 1, 4, 1), 0.0, 6.0)], seed=6),
    )
    models["add_rank3_vec"] = to_int8_tflite(
        _binary((1, 3, 10), (1, 10), lambda x, y: x + y),
        rep([((3, 10), 0.1, 0.8), ((10,), -0.4, 0.2)], seed=7),
    )

    # ---------------------------------------------------------------- MUL
    models["mul_same"] = to_int8_tflite(
        _binary((1, 6, 6, 8), (1, 6, 6, 8), lambda x, y: x * y),
        rep([((6, 6, 8), 0.0, 1.0), ((6, 6, 8), 0.5, 2.0)], seed=10),
    )
    models["mul_se"] = to_int8_tflite(  # squeeze-and-excite style channel gate
        _binary((1, 5, 5, 16), (1, 1, 1, 16), lambda x, y: x * y),
        rep([((5, 5, 16), 0.3, 1.5), ((1, 1, 16), 0.5, 0.2)], seed=11),
    )
    gvec = np.linspace(-2.0, 3.0, 8).astype(np.float32)
    models["mul_const_relu"] = to_int8_tflite(
        _fn([(1, 4, 4, 8)], lambda x: tf.nn.relu(x * tf.constant(gvec))),
        rep([((4, 4, 8), 0.0, 1.0)], seed=12),
    )
    models["mul_bcast_both"] = to_int8_tflite(
        _binary((1, 3, 1, 1, 4), (1, 1, 2, 5, 1), lambda x, y: x * y),
        rep([((3, 1, 1, 4), 0.0, 1.0), ((1, 2, 5, 1), 1.0, 0.5)], seed=13),
    )

    # Calibration where big values of x meet small values of y and vice versa: the output range
    # stays narrow, so input_scale1 * input_scale2 / output_scale > 1 (positive shift).
    def rep_anti():
        rng = np.random.default_rng(14)
        for i in range(32):
            big, small = rng.normal(0, 10, (1, 4, 4, 4)), rng.normal(0, 0.01, (1, 4, 4, 4))
            xs = (big, small) if i % 2 else (small, big)
            yield [xs[0].astype(np.float32), xs[1].astype(np.float32)]

    models["mul_bigmult"] = to_int8_tflite(
        _binary((1, 4, 4, 4), (1, 4, 4, 4), lambda x, y: x * y), rep_anti
    )

    # ---------------------------------------------------------------- MEAN
    gap = tf.keras.Sequential(
        [tf.keras.Input((5, 5, 16), batch_size=1), tf.keras.layers.GlobalAveragePooling2D()]
    )
    models["mean_gap"] = to_int8_tflite(gap, rep([((5, 5, 16), 0.5, 1.0)], seed=20))
    gapk = tf.keras.Sequential(
        [
            tf.keras.Input((8, 8, 6), batch_size=1),
            tf.keras.layers.GlobalAveragePooling2D(keepdims=True),
        ]
    )
    models["mean_gap_keep"] = to_int8_tflite(gapk, rep([((8, 8, 6), -0.5, 2.0)], seed=21))
    models["mean_last"] = to_int8_tflite(
        _fn([(1, 4, 3, 10)], lambda x: tf.reduce_mean(x, axis=-1)),
        rep([((4, 3, 10), 0.2, 1.0)], seed=22),
    )
    models["mean_axes13"] = to_int8_tflite(
        _fn([(1, 4, 5, 6)], lambda x: tf.reduce_mean(x, axis=[1, 3], keepdims=True)),
        rep([((4, 5, 6), 0.0, 3.0)], seed=23),
    )
    gap12 = tf.keras.Sequential(
        [tf.keras.Input((12, 12, 4), batch_size=1), tf.keras.layers.GlobalAveragePooling2D()]
    )
    models["mean_gap12"] = to_int8_tflite(gap12, rep([((12, 12, 4), 2.0, 0.7)], seed=25))
    gap7 = tf.keras.Sequential(
        [tf.keras.Input((7, 3, 12), batch_size=1), tf.keras.layers.GlobalAveragePooling2D()]
    )
    models["mean_eqquant"] = set_output_quant_like_input(
        to_int8_tflite(gap7, rep([((7, 3, 12), 0.4, 1.0)], seed=24))
    )
    return models


def main() -> None:
    for name, data in build().items():
        p = save(name, data, OUT)
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}: {len(data)} bytes")


if __name__ == "__main__":
    main()
