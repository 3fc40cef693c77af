"""Generate the int16 activation test models (SOFTMAX, LOGISTIC, TANH, RELU, RELU6 with int16
activations; int8 -> int16 SOFTMAX; QUANTIZE to and from int32) and a model in the style of
TFLM's keyword_scrambled benchmark into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_int16_act`` (TensorFlow for the
converted models; ``--written`` makes only the others, without it).

- Converted (TFLite's 16x8 mode, ``common.to_16x8_tflite``; int16 interface, zero point 0):
  softmax over logits of several widths and row lengths (2-D, 3-D), LOGISTIC and TANH at the
  scales calibration gives (TFLM's general-scale int16 path), RELU and RELU6.
- Written with ``tflite_writer`` where the converter cannot make the op or the scale: a 1-D
  int16 softmax and one with beta != 1, int8 -> int16 softmax (output 1/65536, -32768),
  LOGISTIC and TANH at the power-of-two input scales TFLM treats apart (2^-12; TANH also
  2^-11; TANH behind an int8 input and QUANTIZE so that its inputs stay within +-4), the
  QUANTIZE pairs with int32 and int32 graph inputs and outputs.
- ``keyword_s16_softmax``: TFLM's keyword_scrambled (tensorflow/lite/micro/models) layer types
  on a smaller, seeded model: int8 frame, QUANTIZE (int8 -> int8) and FULLY_CONNECTED front,
  three int8 SVDF layers (ranks 1 and 2, int16 weights_time and state), FULLY_CONNECTED logits,
  SOFTMAX int8 -> int16 and QUANTIZE int16 -> int32 output, as TFLM's model ends. Quantized the
  way the converter would, calibrated by a float run over keyword-like streams
  (``real_kws.streams``).

Scales keep outputs alive on uniform random inputs over the input type's range.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import tflite

from .common import MODELS_DIR, random_rep, save, to_16x8_tflite
from .real_kws import _asym, _fc_options, _svdf_float, _svdf_options, _sym, streams
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
S15 = 2.0**-15  # int16 LOGISTIC / TANH output scale
SOFTMAX_S8_S16 = (float(np.float32(1 / 65535)), -32768)  # as TFLM's keyword_scrambled


def _softmax_options(beta: float) -> Callable:
    def w(b) -> int:
        tflite.SoftmaxOptionsStart(b)
        tflite.SoftmaxOptionsAddBeta(b, beta)
        return tflite.SoftmaxOptionsEnd(b)

    return w


def one_op(
    kind: str,
    shape: tuple[int, ...],
    in_t: tuple[str, tuple[float, int]],
    out_t: tuple[str, tuple[float, int]],
    *,
    beta: float | None = None,
    front: tuple[float, int] | None = None,
) -> bytes:
    """One ``kind`` op between an input and an output of the given (dtype, quantization); with
    ``front``, the input is int8 at that quantization and a QUANTIZE makes the op's input."""
    opts = ("SoftmaxOptions", _softmax_options(beta)) if beta is not None else ("NONE", None)
    tensors = [T("x", shape, in_t[0], quant=in_t[1]), T("y", shape, out_t[0], quant=out_t[1])]
    nodes = [Node(kind, [0], [1], *opts)]
    if front is None:
        return write(tensors, nodes, [0], [1])
    tensors.append(T("x8", shape, "int8", quant=front))
    nodes.insert(0, Node("QUANTIZE", [2], [0]))
    return write(tensors, nodes, [2], [1])


def quantize_chain(
    shape: tuple[int, ...], qs: list[tuple[str, tuple[float, int]]], outs: list[int] | None = None
) -> bytes:
    """The first (dtype, quantization) of ``qs`` is the input, then one QUANTIZE per next one;
    ``outs``: which tensors are graph outputs (default the last)."""
    tensors = [T(f"q{k}", shape, dt, quant=q) for k, (dt, q) in enumerate(qs)]
    nodes = [Node("QUANTIZE", [k], [k + 1]) for k in range(len(qs) - 1)]
    return write(tensors, nodes, [0], outs or [len(qs) - 1])


def quantize_fork(shape: tuple[int, ...], src, dsts) -> bytes:
    """One input read by one QUANTIZE per destination, each a graph output."""
    tensors = [T("x", shape, src[0], quant=src[1])]
    tensors += [T(f"y{k}", shape, dt, quant=q) for k, (dt, q) in enumerate(dsts)]
    nodes = [Node("QUANTIZE", [0], [k + 1]) for k in range(len(dsts))]
    return write(tensors, nodes, [0], list(range(1, len(dsts) + 1)))


def _fc(tensors: list[T], nodes: list[Node], h_id: int, w_s, wq, b_s, bias, o_q, name) -> int:
    base = len(tensors)
    n_out, n_in = wq.shape
    tensors += [
        T(f"{name}/weights", (n_out, n_in), quant=(w_s, 0), data=wq),
        T(f"{name}/bias", (n_out,), "int32", quant=(b_s, 0), data=np.round(bias / b_s)),
        T(f"{name}/out", (1, n_out), quant=o_q),
    ]
    ins = [h_id, base, base + 1]
    nodes.append(Node("FULLY_CONNECTED", ins, [base + 2], "FullyConnectedOptions", _fc_options))
    return base + 2


def keyword_s16_softmax(seed: int = 24) -> bytes:
    """keyword_scrambled's layer types, calibrated on keyword-like streams (see the module)."""
    rng = np.random.default_rng(seed)
    x = streams(60, seed=seed, n_streams=4).reshape(-1, 40)
    in_q = _asym(float(x.min()), float(x.max()))
    q0 = _asym(1.2 * float(x.min()), 1.1 * float(x.max()))  # the front's requantization
    tensors = [T("frame", (1, 40), quant=in_q), T("front", (1, 40), quant=q0)]
    nodes = [Node("QUANTIZE", [0], [1])]
    h, h_id = x, 1

    def fc(n_out: int, name: str, spread: float | None = None) -> None:
        nonlocal h, h_id
        n_in = h.shape[1]
        w = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in))
        if spread:
            w *= spread / (h @ w.T).std()
        wq, w_s = _sym(w, 127)
        bias = rng.normal(0, 0.1, n_out)
        b_s = float(np.float32(np.float32(tensors[h_id].quant[0]) * np.float32(w_s)))
        y = h @ (wq * w_s).T + np.round(bias / b_s) * b_s
        h_id = _fc(tensors, nodes, h_id, w_s, wq, b_s, bias, _asym(y.min(), y.max()), name)
        h = y

    def svdf(units: int, rank: int, memory: int, name: str) -> None:
        nonlocal h, h_id
        filters, n_in = units * rank, h.shape[1]
        wf, wf_s = _sym(rng.normal(0, 1 / np.sqrt(n_in), (filters, n_in)), 127)
        wt, wt_s = _sym(rng.normal(0, 1 / np.sqrt(memory), (filters, memory)), 32767)
        bias_f = rng.normal(0, 0.1, units)
        y, fmax = _svdf_float(h, wf * wf_s, wt * wt_s, bias_f, rank)
        st_s = float(np.float32(1.1 * fmax / 32767))
        b_s = float(np.float32(np.float32(st_s) * np.float32(wt_s)))
        base = len(tensors)
        tensors.extend([
            T(f"{name}/weights_feature", (filters, n_in), quant=(wf_s, 0), data=wf),
            T(f"{name}/weights_time", (filters, memory), "int16", quant=(wt_s, 0), data=wt),
            T(f"{name}/bias", (units,), "int32", quant=(b_s, 0), data=np.round(bias_f / b_s)),
            T(f"{name}/state", (1, memory * filters), "int16", quant=(st_s, 0), variable=True),
            T(f"{name}/out", (1, units), quant=_asym(float(y.min()), float(y.max()))),
        ])  # fmt: skip
        ins = [h_id, base, base + 1, base + 2, base + 3]
        nodes.append(Node("SVDF", ins, [base + 4], "SVDFOptions", _svdf_options(rank)))
        h, h_id = y, base + 4

    fc(24, "fc0")
    svdf(32, 1, 8, "svdf0")
    fc(16, "fc1")
    svdf(24, 2, 6, "svdf1")
    svdf(16, 1, 4, "svdf2")
    fc(6, "logits", spread=2.5)  # logits spread about +-2.5: the softmax is neither flat nor 0/1
    base = len(tensors)
    tensors += [
        T("probabilities", (1, 6), "int16", quant=SOFTMAX_S8_S16),
        T("probabilities32", (1, 6), "int32", quant=(float(np.float32(1 / 32767)), 0)),
    ]
    nodes += [
        Node("SOFTMAX", [h_id], [base], "SoftmaxOptions", _softmax_options(1.0)),
        Node("QUANTIZE", [base], [base + 1]),
    ]
    return write(tensors, nodes, [0], [base + 1])


def build_written() -> dict[str, bytes]:
    s16 = "int16"
    return {
        # int16 SOFTMAX: 1-D, beta != 1 on rows
        "softmax16_1d": one_op("SOFTMAX", (50,), (s16, (2e-4, 0)), (s16, (S15, 0)), beta=1.0),
        "softmax16_beta_rows": one_op(
            "SOFTMAX", (4, 20), (s16, (1.2e-4, 0)), (s16, (S15, 0)), beta=0.7
        ),
        # int8 -> int16 SOFTMAX (TFLM's keyword models end so)
        "softmax_s8_s16_vec": one_op(
            "SOFTMAX", (1, 10), ("int8", (0.1, 3)), ("int16", SOFTMAX_S8_S16), beta=1.0
        ),
        "softmax_s8_s16_rows": one_op(
            "SOFTMAX", (3, 5, 37), ("int8", (0.05, -10)), ("int16", (2.0**-16, -32768)), beta=1.0
        ),
        "softmax_s8_s16_beta": one_op(
            "SOFTMAX", (2, 64), ("int8", (0.02, 0)), ("int16", SOFTMAX_S8_S16), beta=2.5
        ),
        # LOGISTIC / TANH at TFLM's power-of-two input scales
        "logistic16_pot12": one_op("LOGISTIC", (4, 30), (s16, (2.0**-12, 0)), (s16, (S15, 0))),
        "tanh16_pot12_s8in": one_op(
            "TANH", (4, 30), (s16, (2.0**-12, 0)), (s16, (S15, 0)), front=(0.03, 2)
        ),
        "tanh16_pot11_s8in": one_op(
            "TANH", (4, 30), (s16, (2.0**-11, 0)), (s16, (S15, 0)), front=(0.03, -1)
        ),
        # QUANTIZE pairs with int32 (TFLM's quantize.cc), int32 graph inputs and outputs
        "quantize_s32_chain": quantize_chain(
            (1, 4, 24),
            [
                ("int8", (0.05, -3)),
                ("int32", (0.001, 0)),
                ("int16", (0.0004, 0)),
                ("int32", (1e-5, 7)),
                ("int8", (0.04, -3)),
            ],
        ),
        "quantize_s32_in": quantize_fork(
            (2, 25), ("int32", (1e-4, 0)), [("int8", (0.02, 4)), ("int16", (8e-5, 0))]
        ),
        "quantize_s32_out": quantize_fork(
            (3, 17), ("int8", (0.05, 5)), [("int32", (0.0005, -100)), ("int32", (3e-3, 0))]
        ),
        "keyword_s16_softmax": keyword_s16_softmax(),
    }


def build_converted() -> dict[str, bytes]:
    import tensorflow as tf

    made: dict[str, bytes] = {}

    def emit(name: str, shape: tuple[int, ...], body: Callable, scale: float) -> None:
        fn = tf.function(body, input_signature=[tf.TensorSpec((1, *shape), tf.float32)])
        rep = random_rep([shape], n=64, seed=len(made), scale=scale)
        made[name] = to_16x8_tflite(fn, rep)

    emit("softmax16_wide", (120,), tf.nn.softmax, 3.0)
    emit("softmax16_narrow", (3,), tf.nn.softmax, 1.0)
    emit("softmax16_rows3d", (3, 5, 9), tf.nn.softmax, 1.5)
    emit("logistic16_direct", (5, 9), tf.sigmoid, 4.0)
    emit("tanh16_direct", (5, 9), tf.tanh, 1.5)
    emit("relu16", (6, 11), tf.nn.relu, 2.0)
    emit("relu6_16", (6, 11), tf.nn.relu6, 4.0)
    return made


def main() -> None:
    models = build_written()
    if "--written" not in sys.argv:
        models.update(build_converted())
    for name, data in models.items():
        p = save(name, data, OUT)
        print(f"wrote {p} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
