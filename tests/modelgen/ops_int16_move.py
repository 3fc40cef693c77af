"""Generate the 16x8 models of the data-movement, padding, LEAKY_RELU and TRANSPOSE_CONV
operators into tests/models/ops/ (``*16*`` names), and the 16x8 audio CNN (in the style of the
"seanet" audio codec network of TFLM's int16 integration tests) into tests/models/real/.

Run from the repository root: ``python -m tests.modelgen.ops_int16_move``. Converter models are
tf.functions converted in TFLite's 16x8 mode (``common.to_16x8_tflite``); the TRANSPOSE_CONV
whose output shape is an int32 graph input (as in TFLM's integration-test models; the
converter always makes it a constant) is written with ``tflite_writer``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_16x8_tflite
from .ops_int16 import uniform_rep

OUT = MODELS_DIR / "ops"
REAL = MODELS_DIR / "real"


def _w(rng: np.random.Generator, *shape: int, fan_in: int) -> np.ndarray:
    return (rng.normal(0, 1.0 / np.sqrt(fan_in), size=shape)).astype(np.float32)


def build() -> list[str]:
    import tensorflow as tf

    made: list[str] = []
    rng = np.random.default_rng(1616)

    def emit(name: str, shapes: list[tuple[int, ...]], body: Callable, **kw) -> None:
        sig = [tf.TensorSpec((1, *s), tf.float32) for s in shapes]
        fn = tf.function(body, input_signature=sig)
        folder = kw.pop("folder", OUT)
        rep = kw.pop("rep", None) or random_rep(shapes, n=48, seed=100 + len(made))
        data = to_16x8_tflite(fn, rep, **kw)
        save(name, data, folder)
        made.append(name)

    def conv(x, oc: int, k, stride=1, padding="SAME", dil=1):
        kh, kw = k
        ic = int(x.shape[-1])
        w = tf.constant(_w(rng, kh, kw, ic, oc, fan_in=kh * kw * ic))
        y = tf.nn.conv2d(x, w, stride, padding, dilations=dil)
        return y + tf.constant(rng.normal(0, 0.2, size=oc).astype(np.float32))

    def tconv(x, oc: int, k, stride, padding="SAME", bias=True):
        kh, kw = k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        n, h, w_, ic = (int(d) for d in x.shape)
        w = tf.constant(_w(rng, kh, kw, oc, ic, fan_in=kh * kw * ic // (sh * sw)))
        if padding == "SAME":
            oh, ow = h * sh, w_ * sw
        else:
            oh, ow = (h - 1) * sh + kh, (w_ - 1) * sw + kw
        y = tf.nn.conv2d_transpose(x, w, (n, oh, ow, oc), (sh, sw), padding)
        if bias:
            y = y + tf.constant(rng.normal(0, 0.2, size=oc).astype(np.float32))
        return y

    def leaky(x, alpha=0.3):
        return tf.nn.leaky_relu(x, alpha)

    # 1. LEAKY_RELU
    emit("leaky_relu16", [(6, 7, 5)], lambda x: leaky(x, 0.2))
    emit("leaky_relu16_scaled", [(40, 3)], lambda x: leaky(2.5 * x, 0.01))
    # 2. PAD, PADV2, the layout operators
    # (the converter leaves tf.pad's constant_values float32 in 16x8 models, which TFLM
    # refuses: PADV2 int16 is written below)
    emit("pad16_1d", [(1, 50, 4)], lambda x: tf.pad(x, [[0, 0], [0, 0], [6, 0], [0, 0]]))
    emit("strided_slice16_neg", [(7, 9, 4)], lambda x: x[:, ::-2, 1:8:3, ::-1])
    emit("strided_slice16_shrink", [(5, 6, 4)], lambda x: x[:, 2, 1:5, :])
    emit("slice16", [(6, 7, 5)], lambda x: tf.slice(x, [0, 1, 2, 1], [1, 4, -1, 3]))
    emit("split16", [(4, 6, 6)], lambda x: tf.split(x, 3, axis=3))
    emit("split_v16", [(4, 7, 3)], lambda x: tf.split(x, [2, 4, 1], axis=2))
    emit("pack16", [(3, 4), (3, 4)], lambda a, b: tf.stack([a, b], axis=2))
    emit("unpack16", [(3, 4, 2)], lambda x: tf.unstack(x, axis=1))
    emit("resize_nearest16", [(4, 5, 3)], lambda x: tf.image.resize(x, (7, 9), "nearest"))
    emit(
        "concat16_three", [(1, 9, 2), (1, 4, 2), (1, 6, 2)], lambda a, b, c: tf.concat([a, b, c], 2)
    )
    emit("transpose16_4d", [(3, 4, 5)], lambda x: tf.transpose(x, (0, 2, 3, 1)))

    # 3. MEAN: uniform representative data, as the tests' inputs (normal data would give an
    # output range that uniform inputs' means overflow)
    mean = tf.reduce_mean
    emit("mean16_hw_keep", [(5, 6, 8)], lambda x: mean(x, axis=[1, 2], keepdims=True),
         rep=uniform_rep((5, 6, 8)))  # fmt: skip
    emit("mean16_c", [(4, 5, 9)], lambda x: mean(x, axis=[3]), rep=uniform_rep((4, 5, 9)))
    # 4. TRANSPOSE_CONV
    emit("tconv16_s2_same", [(4, 5, 6)], lambda x: tconv(x, 5, (3, 3), 2))
    emit(
        "tconv16_1d_valid_nobias",
        [(1, 9, 4)],
        lambda x: tconv(x, 3, (1, 4), (1, 2), "VALID", False),
    )

    # 5. the 16x8 audio CNN: a 1-D signal [1, 1, 1024, 1], long 1-D convolutions, LEAKY_RELU,
    # causal PAD, a residual unit (ADD), a strided down-sampling convolution, STRIDED_SLICE,
    # TRANSPOSE_CONV up-sampling; float32 interface
    def audio(x):  # 4 channels at the full rate, 8 at half: fits the SAMD21's 32 KB SRAM
        y = leaky(conv(x, 4, (1, 7)))
        r = y
        y = tf.pad(y, [[0, 0], [0, 0], [12, 0], [0, 0]])  # causal, dilated k=7
        y = leaky(conv(y, 4, (1, 7), padding="VALID", dil=2))
        y = conv(y, 4, (1, 1))
        y = leaky(r + y)
        y = tf.pad(y, [[0, 0], [0, 0], [2, 1], [0, 0]])
        y = leaky(conv(y, 8, (1, 4), stride=(1, 2), padding="VALID"))  # 1024 -> 512
        y = leaky(conv(y, 8, (1, 11)))
        y = y[:, :, 4:-4, :]  # trim the edges: 504
        y = leaky(tconv(y, 4, (1, 4), (1, 2)))  # 1008
        y = tf.pad(y, [[0, 0], [0, 0], [8, 8], [0, 0]])  # 1024
        return conv(y, 1, (1, 15))

    emit("audio16", [(1, 1024, 1)], audio, float_io=True, folder=REAL)
    # 6. BATCH_MATMUL (both operands activations: TFLM's int16 path takes int16 x int16);
    # uniform representative data, as the tests' inputs
    mm = tf.linalg.matmul
    bmm_shapes = [(3, 4, 6), (3, 6, 5)]
    emit("bmm16", bmm_shapes, lambda a, b: mm(a, b), rep=uniform_rep(*bmm_shapes))
    bmm_shapes = [(2, 1, 7, 4), (1, 3, 5, 7)]
    emit("bmm16_adj_bcast", bmm_shapes, lambda a, b: mm(a, b, True, True),
         rep=uniform_rep(*bmm_shapes))  # fmt: skip
    made.append(_tconv_shape_input(rng))
    made.append(_padv2_int16())
    made.append(_leaky_relu16_negative())
    return made


def _leaky_relu16_negative() -> str:
    """LEAKY_RELU 16x8 with a negative alpha (the converter folds such a tf.nn.leaky_relu
    into other ops)."""
    import tflite

    from .tflite_writer import Node, T, write

    def opts(b):
        tflite.LeakyReluOptionsStart(b)
        tflite.LeakyReluOptionsAddAlpha(b, -0.3)
        return tflite.LeakyReluOptionsEnd(b)

    tensors = [T("x", (1, 16, 32), "int16", (1 / 8192, 0)), T("y", (1, 16, 32), "int16", (1e-4, 0))]
    name = "leaky_relu16_negative"
    node = Node("LEAKY_RELU", [0], [1], "LeakyReluOptions", opts)
    save(name, write(tensors, [node], [0], [1]), OUT)
    return name


def _padv2_int16() -> str:
    """PADV2 16x8 with an int16 pad value (what TFLM's int16 PADV2 reads)."""
    import tflite

    from .tflite_writer import Node, T, write

    def opts(b):
        tflite.PadV2OptionsStart(b)
        return tflite.PadV2OptionsEnd(b)

    s = 1.0 / 8192
    pads = np.array([[0, 0], [2, 1], [1, 0], [0, 2]], np.int32)
    tensors = [
        T("x", (1, 5, 4, 3), "int16", (s, 0)),
        T("paddings", (4, 2), "int32", None, pads),
        T("value", (1,), "int16", (s, 0), np.array([1234], np.int16)),
        T("y", (1, 8, 5, 5), "int16", (s, 0)),
    ]
    name = "padv2_16"
    save(name, write(tensors, [Node("PADV2", [0, 1, 2], [3], "PadV2Options", opts)], [0], [3]), OUT)
    return name


def _tconv_shape_input(rng: np.random.Generator) -> str:
    """TRANSPOSE_CONV 16x8 whose output_shape is an int32 graph input (TFLM never reads it),
    stride 2, SAME, int64 bias, per-channel int8 weights."""
    import tflite

    from .tflite_writer import Node, T, write

    oc, kh, kw, ic = 4, 3, 4, 6
    wq = rng.integers(-127, 128, size=(oc, kh, kw, ic)).astype(np.int8)
    ws = [float(s) for s in rng.uniform(0.004, 0.01, size=oc)]
    in_s, out_s = 1.0 / 8192, 1.0 / 4096
    bias = rng.integers(-20000, 20000, size=oc).astype(np.int64)

    def opts(b):
        tflite.TransposeConvOptionsStart(b)
        tflite.TransposeConvOptionsAddPadding(b, tflite.Padding.SAME)
        tflite.TransposeConvOptionsAddStrideH(b, 2)
        tflite.TransposeConvOptionsAddStrideW(b, 2)
        return tflite.TransposeConvOptionsEnd(b)

    tensors = [
        T("output_shape", (4,), "int32"),
        T("weights", (oc, kh, kw, ic), "int8", (ws, [0] * oc), wq, quant_axis=0),
        T("x", (1, 5, 6, ic), "int16", (in_s, 0)),
        T("bias", (oc,), "int64", ([in_s * s for s in ws], [0] * oc), bias),
        T("y", (1, 10, 12, oc), "int16", (out_s, 0)),
    ]
    nodes = [Node("TRANSPOSE_CONV", [0, 1, 2, 3], [4], "TransposeConvOptions", opts)]
    name = "tconv16_shape_input"
    save(name, write(tensors, nodes, [0, 2], [4]), OUT)
    return name


def main() -> None:
    for n in build():
        p = OUT / f"{n}.tflite"
        if not p.exists():
            p = REAL / f"{n}.tflite"
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
