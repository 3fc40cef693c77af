"""Generate the TRANSPOSE_CONV, BATCH_MATMUL and RESIZE_BILINEAR test models into
tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_matmul [family ...]`` (families:
tconv, bmm, resize; all by default). Each model is a small tf.function converted with
full-integer quantization (per-channel weights unless noted).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_int8_tflite
from .ops_conv import weights

OUT = MODELS_DIR / "ops"


def _emit(name: str, shapes: list[tuple[int, ...]], body: Callable, seed: int, **kw) -> None:
    import tensorflow as tf

    sig = [tf.TensorSpec((1, *s), tf.float32) for s in shapes]
    post = kw.pop("post", None)
    fn = tf.function(body, input_signature=sig)
    data = to_int8_tflite(fn, random_rep(shapes, 48, seed), **kw)
    save(name, post(data) if post else data, OUT)
    print(name, len(data))


def tconv() -> None:
    """TRANSPOSE_CONV: tf.nn.conv2d_transpose (+ bias, + activation)."""
    import tensorflow as tf

    rng = np.random.default_rng(77)

    def body(shape, k, cout, out_hw, *, stride=1, padding="SAME", act=None, bias=True):
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        w = tf.constant(weights(rng, (kh, kw, cout, shape[-1]), ch_axis=2))
        b = tf.constant(rng.normal(0, 0.5, cout).astype(np.float32))
        oshape = [1, *out_hw, cout]

        def f(x):
            y = tf.nn.conv2d_transpose(x, w, oshape, [1, sh, sw, 1], padding)
            y = y + b if bias else y
            return act(y) if act is not None else y

        return f

    relu = tf.nn.relu
    specs = {
        "tconv_same_s2": ((5, 4, 3), body((5, 4, 3), 3, 6, (10, 8), stride=2)),
        "tconv_same_s2_odd": ((5, 4, 3), body((5, 4, 3), 4, 5, (9, 7), stride=2, act=relu)),
        "tconv_valid_asym": ((4, 5, 2), body((4, 5, 2), (3, 2), 4, (9, 14), stride=(2, 3),
                                             padding="VALID")),
        "tconv_s1_relu": ((6, 7, 4), body((6, 7, 4), 3, 3, (6, 7), act=relu)),
        "tconv_k1_s3": ((3, 3, 5), body((3, 3, 5), 1, 4, (9, 9), stride=3, padding="VALID")),
    }  # fmt: skip
    for i, (name, (shape, f)) in enumerate(specs.items()):
        _emit(name, [shape], f, seed=i)
    shape = (4, 4, 3)
    _emit("tconv_pertensor", [shape], body(shape, 3, 4, (8, 8), stride=2), 9, per_channel=False)
    nob = body((5, 5, 2), 3, 3, (10, 10), stride=2, bias=False)
    _emit("tconv_nobias", [(5, 5, 2)], nob, 10)
    # a RELU on an output whose range is not [0, max]: the clamp is visible
    _emit("tconv_relu_patched", [(5, 4, 3)], body((5, 4, 3), 3, 4, (10, 8), stride=2), 12,
          post=relu_tconv)  # fmt: skip
    _emit("tconv_biasdropped", [(5, 5, 2)], body((5, 5, 2), 3, 3, (10, 10), stride=2), 11,
          post=drop_bias_tconv)  # fmt: skip


def bmm() -> None:
    """BATCH_MATMUL: tf.matmul on activations (rank 3 to 5, broadcast batch dims, adjoints)
    and on a constant right-hand side."""
    import tensorflow as tf

    rng = np.random.default_rng(5)

    def mm(adj_a=False, adj_b=False):
        return lambda a, b: tf.matmul(a, b, adjoint_a=adj_a, adjoint_b=adj_b)

    _emit("bmm_act", [(5, 7), (7, 3)], mm(), 20)
    _emit("bmm_adj_x", [(7, 5), (7, 3)], mm(adj_a=True), 21)
    _emit("bmm_adj_y", [(5, 7), (3, 7)], mm(adj_b=True), 22)
    _emit("bmm_adj_xy", [(2, 6, 3), (2, 4, 6)], mm(True, True), 23)
    _emit("bmm_bcast", [(2, 1, 4, 6), (1, 3, 6, 5)], mm(), 24)
    rank2 = lambda a, b: tf.matmul(a, tf.reshape(b, (5, 2)))  # noqa: E731
    _emit("bmm_bcast_rank", [(3, 4, 5), (5, 2)], rank2, 25)
    w3 = tf.constant(rng.normal(0, 0.4, (3, 6, 4)).astype(np.float32))
    _emit("bmm_const_rhs", [(3, 5, 6)], lambda a: tf.matmul(a, w3), 26)
    w3t = tf.constant(rng.normal(0, 0.4, (3, 4, 6)).astype(np.float32))
    _emit("bmm_const_rhs_adj", [(3, 5, 6)], lambda a: tf.matmul(a, w3t, adjoint_b=True), 27)


def resize() -> None:
    """RESIZE_BILINEAR: half_pixel_centers (tf.image.resize), align_corners and neither
    (tf.compat.v1.image.resize_bilinear), up and down, odd sizes, an output of size 1."""
    import tensorflow as tf

    def v1(size, align):
        return lambda x: tf.compat.v1.image.resize_bilinear(x, size, align_corners=align)

    def v2(size):
        return lambda x: tf.image.resize(x, size, method="bilinear")

    _emit("resize_hpc_up", [(5, 4, 3)], v2((11, 9)), 30)
    _emit("resize_hpc_down", [(9, 10, 2)], v2((4, 7)), 31)
    _emit("resize_hpc_x3", [(3, 2, 4)], v2((9, 6)), 32)
    _emit("resize_align_up", [(5, 6, 3)], v1((9, 13), True), 33)
    _emit("resize_align_down", [(8, 9, 2)], v1((3, 5), True), 34)
    _emit("resize_align_1", [(5, 4, 2)], v1((1, 7), True), 35)
    _emit("resize_legacy", [(4, 5, 2)], v1((7, 12), False), 36)
    _emit("resize_legacy_down", [(7, 9, 3)], v1((5, 4), False), 37)


def drop_bias_tconv(data: bytes) -> bytes:
    """Turn every TRANSPOSE_CONV's bias (input 3) into the optional-tensor marker -1."""
    from .ops_conv import patch

    def edit(m) -> None:
        for op in m.subgraphs[0].operators:
            if len(op.inputs) == 4:
                op.inputs[3] = -1

    return patch(data, edit)


def relu_tconv(data: bytes) -> bytes:
    """Give every TRANSPOSE_CONV the fused activation RELU (the output keeps its range)."""
    from .ops_conv import patch

    def edit(m) -> None:
        for op in m.subgraphs[0].operators:
            if op.builtinOptions is not None and hasattr(op.builtinOptions, "strideH"):
                op.builtinOptions.fusedActivationFunction = 1

    return patch(data, edit)


FAMILIES: dict[str, Callable[[], None]] = {"tconv": tconv, "bmm": bmm, "resize": resize}


def main() -> None:
    for fam in sys.argv[1:] or list(FAMILIES):
        FAMILIES[fam]()


if __name__ == "__main__":
    main()
