"""Generate the CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_conv``. Each model is a small
tf.function converted with full-integer quantization (per-channel weights unless noted, as
TF 2.21's converter emits them). Weights get a different magnitude per output channel, so the
per-channel scales differ. Options the converter never emits (a missing bias, a bias whose
quantized_dimension is 3, an FC fed a rank-4 tensor directly) are made by editing the converted
flatbuffer with TensorFlow's schema object API (``patch``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .common import MODELS_DIR, random_rep, save, to_int8_tflite

OUT = MODELS_DIR / "ops"


def weights(rng: np.random.Generator, shape: tuple[int, ...], ch_axis: int = -1) -> np.ndarray:
    """Normal weights whose spread varies per output channel (so per-channel scales differ)."""
    w = rng.normal(0.0, 0.5, size=shape)
    n = shape[ch_axis]
    spread = rng.uniform(0.1, 2.0, size=n)
    bshape = [1] * len(shape)
    bshape[ch_axis] = n
    return (w * spread.reshape(bshape)).astype(np.float32)


def patch(data: bytes, edit: Callable) -> bytes:
    """Apply ``edit(model_t)`` to a flatbuffer through the schema's object API; re-serialize."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as fb

    m = fb.ModelT.InitFromPackedBuf(bytearray(data), 0)
    edit(m)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def op_code(m, op) -> int:
    oc = m.operatorCodes[op.opcodeIndex]
    return max(oc.builtinCode, oc.deprecatedBuiltinCode)


def drop_bias(data: bytes) -> bytes:
    """Turn every op's bias input (input 2) into the optional-tensor marker -1."""

    def edit(m) -> None:
        for op in m.subgraphs[0].operators:
            if len(op.inputs) == 3:
                op.inputs[2] = -1

    return patch(data, edit)


def zero_bias(data: bytes) -> bytes:
    """Set every bias (input 2) to zeros: the reference twin of ``drop_bias`` (TFLM's
    DEPTHWISE_CONV_2D crashes on a missing bias, so a model without one is checked against this
    twin, whose weights and quantization are identical)."""

    def edit(m) -> None:
        sg = m.subgraphs[0]
        for op in sg.operators:
            if len(op.inputs) == 3 and op.inputs[2] >= 0:
                buf = m.buffers[sg.tensors[op.inputs[2]].buffer]
                buf.data = np.zeros(len(buf.data), np.uint8)

    return patch(data, edit)


def bias_qdim3(data: bytes) -> bytes:
    """Give every bias tensor quantized_dimension 3 (seen in a widely used person-detection
    model; TFLM accepts it)."""

    def edit(m) -> None:
        sg = m.subgraphs[0]
        for op in sg.operators:
            if len(op.inputs) == 3 and op.inputs[2] >= 0:
                sg.tensors[op.inputs[2]].quantization.quantizedDimension = 3

    return patch(data, edit)


def fc_on_input(data: bytes) -> bytes:
    """Remove the RESHAPE feeding the FULLY_CONNECTED op, so FC reads the rank-4 input."""
    from tensorflow.lite.python import schema_py_generated as fb

    def edit(m) -> None:
        sg = m.subgraphs[0]
        ops = sg.operators
        r = next(i for i, op in enumerate(ops) if op_code(m, op) == fb.BuiltinOperator.RESHAPE)
        src, dst = ops[r].inputs[0], ops[r].outputs[0]
        for op in ops:
            op.inputs = [src if t == dst else t for t in op.inputs]
        del ops[r]

    return patch(data, edit)


def _fn(shape: tuple[int, ...], body: Callable):
    import tensorflow as tf

    return tf.function(body, input_signature=[tf.TensorSpec((1, *shape), tf.float32)])


def fc_pertensor_rule() -> bytes:
    """FC (33 -> 7, per-tensor weights) whose multiplier differs between a float and a double
    input*filter scale product in a way some reachable accumulators expose (picked by search);
    tests/test_ops_conv.py feeds it inputs on which the two rules disagree."""
    import tensorflow as tf

    rng = np.random.default_rng(1335)
    w = rng.normal(0.0, 1.0 / np.sqrt(33), size=(33, 7)) * rng.uniform(0.25, 1.0, size=7)
    b = rng.normal(0.0, 0.3, size=7)
    wt, bt = tf.constant(w.astype(np.float32)), tf.constant(b.astype(np.float32))
    f = tf.function(lambda x: tf.matmul(x, wt) + bt, input_signature=[tf.TensorSpec((1, 33))])
    return to_int8_tflite(f, random_rep([(33,)], n=32, seed=0), per_channel=False)


def build() -> list[str]:
    import tensorflow as tf

    made: list[str] = []

    def emit(name: str, shape: tuple[int, ...], body: Callable, post=None, twin=None, **kw):
        data = to_int8_tflite(_fn(shape, body), random_rep([shape], n=48, seed=len(made)), **kw)
        if twin is not None:  # (name, edit) of a second model from the same conversion
            save(twin[0], twin[1](data), OUT)
            made.append(twin[0])
        if post is not None:
            data = post(data)
        save(name, data, OUT)
        made.append(name)

    rng = np.random.default_rng(2024)

    def conv(
        shape, k, cout, *, stride=1, dil=1, padding="SAME", act=None, groups=1, bias=True
    ) -> Callable:
        kh, kw = (k, k) if isinstance(k, int) else k
        w = tf.constant(weights(rng, (kh, kw, shape[-1] // groups, cout)))
        b = tf.constant(rng.normal(0, 0.5, cout).astype(np.float32))
        strides = [1, *((stride, stride) if isinstance(stride, int) else stride), 1]
        dils = [1, *((dil, dil) if isinstance(dil, int) else dil), 1]

        def body(x):
            y = tf.nn.conv2d(x, w, strides, padding, dilations=dils)
            y = y + b if bias else y
            return act(y) if act is not None else y

        return body

    relu, relu6 = tf.nn.relu, tf.nn.relu6

    def n1to1(y):
        return tf.clip_by_value(y, -1.0, 1.0)

    # ---------------------------------------------------------------- CONV_2D
    emit("conv_same_relu", (9, 9, 3), conv((9, 9, 3), 3, 8, act=relu))
    emit("conv_valid_s2", (11, 10, 4), conv((11, 10, 4), 3, 6, stride=2, padding="VALID"))
    emit(
        "conv_same_s2_relu6",
        (10, 9, 5),
        conv((10, 9, 5), (4, 2), 7, stride=2, act=relu6),
    )
    emit("conv_dil2_n1to1", (12, 11, 3), conv((12, 11, 3), 3, 5, dil=2, act=n1to1))
    emit(
        "conv_dil_asym_valid",
        (10, 12, 2),
        conv((10, 12, 2), (2, 3), 4, dil=(3, 2), padding="VALID"),
    )
    emit("conv_pointwise", (6, 7, 16), conv((6, 7, 16), 1, 12, padding="VALID", act=relu))
    emit("conv_stride_asym", (9, 13, 3), conv((9, 13, 3), (3, 5), 6, stride=(1, 3)))
    emit("conv_grouped", (8, 8, 6), conv((8, 8, 6), 3, 9, groups=3, act=relu))
    emit("conv_5x5", (8, 8, 8), conv((8, 8, 8), 5, 8, act=relu6))
    emit("conv_tiny", (2, 3, 4), conv((2, 3, 4), 3, 5, stride=2))
    emit("conv_nobias", (7, 8, 3), conv((7, 8, 3), 3, 4), post=drop_bias)
    emit("conv_biasq3", (6, 6, 4), conv((6, 6, 4), 3, 6, act=relu), post=bias_qdim3)
    emit("conv_pertensor", (8, 7, 4), conv((8, 7, 4), 3, 5, act=relu), per_channel=False)
    emit("conv_1x1_s2", (9, 9, 8), conv((9, 9, 8), 1, 6, stride=2, act=relu6))
    # a window of 3*3*120 values is too large for the im2col scratch: direct loops
    emit("conv_wide_direct", (5, 6, 120), conv((5, 6, 120), 3, 3, act=relu))

    # ---------------------------------------------------------------- DEPTHWISE_CONV_2D
    def dw(shape, k, dm=1, *, stride=1, dil=1, padding="SAME", act=None) -> Callable:
        kh, kw = (k, k) if isinstance(k, int) else k
        w = tf.constant(weights(rng, (kh, kw, shape[-1] * dm)).reshape(kh, kw, shape[-1], dm))
        b = tf.constant(rng.normal(0, 0.5, shape[-1] * dm).astype(np.float32))
        strides = [1, *((stride, stride) if isinstance(stride, int) else stride), 1]
        dils = (dil, dil) if isinstance(dil, int) else dil

        def body(x):
            y = tf.nn.depthwise_conv2d(x, w, strides, padding, dilations=dils) + b
            return act(y) if act is not None else y

        return body

    emit("dwconv_same_relu6", (10, 10, 8), dw((10, 10, 8), 3, act=relu6))
    emit("dwconv_valid_s2_dm2", (9, 11, 4), dw((9, 11, 4), 3, 2, stride=2, padding="VALID"))
    emit("dwconv_dil2_dm3", (11, 10, 3), dw((11, 10, 3), 3, 3, dil=2, act=n1to1))
    emit("dwconv_5x5_s2_relu", (12, 12, 6), dw((12, 12, 6), 5, stride=2, act=relu))
    emit("dwconv_asym", (9, 8, 7), dw((9, 8, 7), (3, 1), stride=(1, 2)))
    emit(
        "dwconv_nobias",
        (8, 8, 5),
        dw((8, 8, 5), 3),
        post=drop_bias,
        twin=("dwconv_nobias_ref", zero_bias),
    )
    emit("dwconv_pertensor", (7, 7, 4), dw((7, 7, 4), 3, act=relu), per_channel=False)

    # ---------------------------------------------------------------- FULLY_CONNECTED
    def fc(din, dout, act=None, bias=True) -> tuple:
        w = tf.constant(weights(rng, (din, dout)))
        b = tf.constant(rng.normal(0, 0.5, dout).astype(np.float32))

        def f(x):
            y = tf.matmul(x, w)
            y = y + b if bias else y
            return act(y) if act is not None else y

        return f

    f1 = fc(33, 11, relu)
    emit("fc_perchannel_relu", (33,), f1)
    f2 = fc(24, 12, relu6)
    emit("fc_pertensor_relu6", (24,), f2, per_channel=False)
    f3 = fc(16, 9, n1to1)
    emit("fc_n1to1", (16,), f3)
    f4 = fc(20, 7)
    emit("fc_nobias", (20,), f4, post=drop_bias)
    wk = tf.constant(weights(rng, (8, 10)))
    bk = tf.constant(rng.normal(0, 0.5, 10).astype(np.float32))
    emit("fc_keepdims", (4, 8), lambda x: tf.einsum("bij,jk->bik", x, wk) + bk)
    emit("fc_rows", (4, 8), lambda x: tf.matmul(tf.reshape(x, (4, 8)), wk) + bk)
    f5 = fc(24, 5, relu)
    emit("fc_rank4_input", (2, 3, 4), lambda x: f5(tf.reshape(x, (1, 24))), post=fc_on_input)
    fa, fb_ = fc(30, 16, relu), fc(16, 6)
    emit("fc_stack", (30,), lambda x: fb_(fa(x)))
    emit("fc_stack_pertensor", (30,), lambda x: fb_(fa(x)), per_channel=False)
    save("fc_pertensor_rule", fc_pertensor_rule(), OUT)
    made.append("fc_pertensor_rule")
    return made


def main() -> None:
    names = build()
    for n in names:
        p = OUT / f"{n}.tflite"
        print(f"{p.relative_to(MODELS_DIR.parent.parent)}  {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
