"""Generate the 16x8 test models (int16 activations, int8 weights, int64 biases) into
tests/models/ops/ (``*16_*`` names) and the whole 16x8 CNN into tests/models/real/.

Run from the repository root: ``python -m tests.modelgen.ops_int16``. Each model is a small
tf.function with constant weights, converted with TFLite's 16x8 mode
(``common.to_16x8_tflite``): int16 input and output (zero point 0), so an op model holds just
the op; the whole CNN has a float32 interface (QUANTIZE / DEQUANTIZE at its ends). Weights and
representative data are seeded normal noise scaled so activations stay alive (no layer
collapses to a few values).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_16x8_tflite

OUT = MODELS_DIR / "ops"
REAL = MODELS_DIR / "real"


def _w(rng: np.random.Generator, *shape: int, fan_in: int) -> np.ndarray:
    return (rng.normal(0, 1.0 / np.sqrt(fan_in), size=shape)).astype(np.float32)


def uniform_rep(*shapes: tuple[int, ...]) -> Callable:
    """Representative data uniform in [-1, 1] (48 samples), one array per input shape."""

    def gen():
        rng = np.random.default_rng(7)
        for _ in range(48):
            yield [rng.uniform(-1, 1, size=(1, *s)).astype(np.float32) for s in shapes]

    return gen


def build() -> list[str]:
    import tensorflow as tf

    made: list[str] = []
    rng = np.random.default_rng(16)

    def emit(name: str, shapes: list[tuple[int, ...]], body: Callable, **kw) -> None:
        sig = [tf.TensorSpec((1, *s), tf.float32) for s in shapes]
        fn = tf.function(body, input_signature=sig)
        folder = kw.pop("folder", OUT)
        rep = kw.pop("rep", None) or random_rep(shapes, n=48, seed=len(made))
        data = to_16x8_tflite(fn, rep, **kw)
        save(name, data, folder)
        made.append(name)

    def dense(x, n: int, act=None, bias: bool = True):
        d = int(x.shape[-1])
        y = tf.matmul(x, tf.constant(_w(rng, d, n, fan_in=d)))
        if bias:
            y = y + tf.constant(rng.normal(0, 0.3, size=n).astype(np.float32))
        return act(y) if act else y

    def conv(x, oc: int, k, stride=1, padding="SAME", act=None, dil=1):
        kh, kw = (k, k) if isinstance(k, int) else k
        ic = int(x.shape[-1])
        w = tf.constant(_w(rng, kh, kw, ic, oc, fan_in=kh * kw * ic))
        y = tf.nn.conv2d(x, w, stride, padding, dilations=dil)
        y = y + tf.constant(rng.normal(0, 0.3, size=oc).astype(np.float32))
        return act(y) if act else y

    def dwconv(x, k, stride=1, padding="SAME", mult=1, act=None):
        ic = int(x.shape[-1])
        w = tf.constant(_w(rng, k, k, ic, mult, fan_in=k * k))
        s = [1, stride, stride, 1]
        y = tf.nn.depthwise_conv2d(x, w, s, padding)
        y = y + tf.constant(rng.normal(0, 0.3, size=ic * mult).astype(np.float32))
        return act(y) if act else y

    relu, relu6 = tf.nn.relu, tf.nn.relu6

    # 1. FULLY_CONNECTED
    emit("fc16_relu", [(20,)], lambda x: dense(x, 12, relu))
    emit("fc16_stack", [(33,)], lambda x: dense(dense(x, 17, relu6), 9))
    emit("fc16_nobias", [(16,)], lambda x: dense(x, 7, bias=False))
    emit("fc16_rows", [(3, 10)], lambda x: dense(x, 5))
    # 2. CONV_2D, DEPTHWISE_CONV_2D
    emit("conv16_same_relu", [(9, 9, 3)], lambda x: conv(x, 8, 3, act=relu))
    emit("conv16_valid_s2", [(10, 11, 4)], lambda x: conv(x, 6, (3, 2), 2, "VALID"))
    emit("conv16_pointwise_relu6", [(5, 6, 8)], lambda x: conv(x, 5, 1, act=relu6))
    emit("conv16_dil2", [(9, 8, 2)], lambda x: conv(x, 4, 3, dil=2))
    emit("dwconv16_same_relu", [(8, 9, 5)], lambda x: dwconv(x, 3, act=relu))
    emit("dwconv16_valid_s2_dm2", [(9, 9, 3)], lambda x: dwconv(x, 3, 2, "VALID", mult=2))
    # 3. ADD, MUL, SUB
    emit("add16_same", [(4, 5, 6), (4, 5, 6)], lambda a, b: a + b)
    emit("add16_bcast_relu", [(4, 5, 6), (1, 1, 6)], lambda a, b: relu(a + 0.5 * b))
    emit("mul16_same", [(4, 5, 6), (4, 5, 6)], lambda a, b: a * b)
    emit("mul16_bcast", [(3, 4, 5), (1, 4, 1)], lambda a, b: a * b)
    emit("sub16_same", [(4, 5, 6), (4, 5, 6)], lambda a, b: a - 0.7 * b)
    # 4. LOGISTIC, TANH, SOFTMAX
    emit("logistic16", [(6, 7)], lambda x: tf.sigmoid(3.0 * x))
    emit("tanh16", [(6, 7)], lambda x: tf.tanh(2.0 * x))
    emit("softmax16", [(3, 10)], lambda x: tf.nn.softmax(2.0 * x))
    # 5. pooling, MEAN
    mx, avg = tf.nn.max_pool2d, tf.nn.avg_pool2d
    emit("pool16_max_3x3_s2_same", [(9, 10, 5)], lambda x: mx(x, 3, 2, "SAME"))
    emit("pool16_avg_3x3_s1_same", [(7, 9, 5)], lambda x: avg(x, 3, 1, "SAME"))
    emit("pool16_avg_2x2_s2_relu", [(8, 8, 6)], lambda x: relu(avg(x, 2, 2, "VALID")))
    # uniform representative data, as the tests' inputs: normal data's means give an output
    # range that uniform inputs' means overflow
    emit(
        "mean16_gap",
        [(5, 6, 8)],
        lambda x: tf.reduce_mean(x, axis=[1, 2]),
        rep=uniform_rep((5, 6, 8)),
    )
    # 6. data movement, QUANTIZE / DEQUANTIZE
    emit("reshape16", [(4, 6)], lambda x: tf.reshape(x * 1.0, (1, 24)))
    emit(
        "concat16",
        [(4, 5, 3), (4, 5, 2)],
        lambda a, b: tf.concat([a, b], axis=-1),
    )
    emit("transpose16", [(3, 4, 5)], lambda x: tf.transpose(x, (0, 3, 1, 2)))
    emit("pad16", [(4, 5, 3)], lambda x: tf.pad(x, [[0, 0], [1, 2], [0, 1], [0, 0]]))
    emit("strided_slice16", [(6, 8, 4)], lambda x: x[:, 1:5, ::2, 1:])
    emit("quant16_f32", [(5, 6)], lambda x: dense(x, 4), float_io=True)

    # whole 16x8 CNN: conv, depthwise, pools, FC (logits: SOFTMAX int16 is not supported yet);
    # float32 interface
    def cnn(x):
        y = conv(x, 8, 3, 1, "SAME", relu)
        y = mx(y, 2, 2, "VALID")
        y = dwconv(y, 3, 1, "SAME", act=relu6)
        y = conv(y, 12, 1, act=relu)
        y = avg(y, 2, 2, "VALID")
        y = tf.reshape(y, (1, -1))
        return dense(y, 10)

    emit("cnn16", [(12, 12, 1)], cnn, float_io=True, folder=REAL)
    return made


def main() -> None:
    for n in build():
        p = OUT / f"{n}.tflite"
        if not p.exists():
            p = REAL / f"{n}.tflite"
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
