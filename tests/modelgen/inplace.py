"""Generate the in-place convolution test models into tests/models/inplace/.

Run from the repository root: ``python -m tests.modelgen.inplace``. Every model holds
convolutions the compiler can run with their output over their input (ops whose prepared data
offers ``in_place_scratch``: tinycompile/ops/conv2d.py, depthwise.py), chosen for the kernels'
edge cases:

- pointwise CONV_2D with fewer, as many and more output than input channels (forward pass,
  temp for every pixel, backward pass), odd channel counts;
- k x k CONV_2D (stride 1, SAME, out_c <= in_c): dilation, asymmetric and even kernels (padding
  only after), a kernel larger than the image (the output ring spans the whole image);
- DEPTHWISE_CONV_2D (stride 1, SAME, multiplier 1): the same shapes, and 1x1;
- chains where one op's input dies at it (shared buffer) and residual blocks where it does not
  (the planner must keep separate buffers and the kernel its ordinary path).

The models live outside tests/models/ops/ so that loops over "all op models" stay as they were.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_int8_tflite
from .ops_conv import _fn, weights

OUT = MODELS_DIR / "inplace"


def build() -> list[str]:
    import tensorflow as tf

    made: list[str] = []
    rng = np.random.default_rng(77)

    def emit(name: str, shape: tuple[int, ...], body: Callable, **kw) -> None:
        rep = random_rep([shape], n=48, seed=100 + len(made))
        save(name, to_int8_tflite(_fn(shape, body), rep, **kw), OUT)
        made.append(name)

    def conv(cin: int, cout: int, k, *, dil=1, act=None) -> Callable:
        kh, kw = (k, k) if isinstance(k, int) else k
        w = tf.constant(weights(rng, (kh, kw, cin, cout)))
        b = tf.constant(rng.normal(0, 0.5, cout).astype(np.float32))
        dils = [1, *((dil, dil) if isinstance(dil, int) else dil), 1]

        def body(x):
            y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", dilations=dils) + b
            return act(y) if act is not None else y

        return body

    def dw(c: int, k, *, dil=1, act=None, padding="SAME") -> Callable:
        kh, kw = (k, k) if isinstance(k, int) else k
        w = tf.constant(weights(rng, (kh, kw, c)).reshape(kh, kw, c, 1))
        b = tf.constant(rng.normal(0, 0.5, c).astype(np.float32))
        dils = (dil, dil) if isinstance(dil, int) else dil

        def body(x):
            y = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], padding, dilations=dils) + b
            return act(y) if act is not None else y

        return body

    relu, relu6 = tf.nn.relu, tf.nn.relu6

    # ---------------------------------------------------------------- pointwise CONV_2D
    emit("pw_expand_odd", (5, 7, 6), conv(6, 17, 1, act=relu))  # backwards
    emit("pw_equal", (6, 5, 12), conv(12, 12, 1, act=relu6))  # every pixel through the temp
    emit("pw_shrink_odd", (4, 9, 13), conv(13, 7, 1))  # forwards

    # ---------------------------------------------------------------- k x k CONV_2D
    emit("conv_dil2_equal", (9, 8, 6), conv(6, 6, 3, dil=2, act=relu))
    emit("conv_asym_shrink", (7, 10, 8), conv(8, 5, (3, 5), act=relu6))
    emit("conv_even4x4", (6, 7, 5), conv(5, 3, 4))  # padding 1 before, 2 after
    emit("conv_even2x2", (5, 6, 4), conv(4, 4, 2))  # padding only after: a ring of 1
    emit("conv_kernel_gt_image", (3, 4, 4), conv(4, 4, 7))  # ring = whole image

    # ---------------------------------------------------------------- DEPTHWISE_CONV_2D
    emit("dw_dil_asym", (10, 9, 5), dw(5, 3, dil=(2, 3), act=relu))
    emit("dw_1x5", (8, 7, 6), dw(6, (1, 5)))
    emit("dw_5x1_relu6", (7, 6, 9), dw(9, (5, 1), act=relu6))
    emit("dw_even2x2", (6, 6, 8), dw(8, 2))
    emit("dw_kernel_gt_image", (3, 4, 4), dw(4, 7))
    emit("dw_1x1_valid", (6, 5, 7), dw(7, 1, padding="VALID"))

    # ---------------------------------------------------------------- chains
    # depthwise-separable stack: every in-place input dies at its op
    c1 = conv(4, 8, 3, act=relu)
    d1, p1 = dw(8, 3, act=relu), conv(8, 16, 1, act=relu)
    d2, p2 = dw(16, 3, act=relu), conv(16, 8, 1, act=relu)
    c2, p3 = conv(8, 8, 3, act=relu), conv(8, 4, 1)
    emit("chain_dscnn", (12, 10, 4), lambda x: p3(c2(p2(d2(p1(d1(c1(x))))))))

    # residual: the inputs of the depthwise and the first pointwise are read again later
    ra = conv(6, 6, 3, act=relu)
    rd, rp = dw(6, 3, act=relu), conv(6, 6, 1)
    rq = conv(6, 6, 1, act=relu)

    def residual(x):
        y = ra(x)
        z = rp(rd(y)) + y  # y is read by the ADD after the depthwise
        u = rq(z)
        return u + z  # z is read by the ADD after the pointwise

    emit("chain_residual", (8, 9, 6), residual)
    return made


def main() -> None:
    for n in build():
        p = OUT / f"{n}.tflite"
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
