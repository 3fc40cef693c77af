"""A streaming keyword model with SVDF layers, as TFLM's keyword benchmarks run them: one
40-feature frame per inference, the SVDFs' int16 activation state carrying the past.

int8 frame [1, 40] -> SVDF (32 units, rank 1, memory 8) -> RELU -> SVDF (24 units, rank 2,
memory 6) -> FULLY_CONNECTED (4 classes) -> SOFTMAX. The TF converter has no Keras path to SVDF,
so the flatbuffer is written directly (``tflite_writer``, no TensorFlow needed) and quantized here
the way the converter would: float weights, a float run over keyword-like streams
(``streams``) to calibrate every activation's range, int8 weights_feature, int16 weights_time and
state, int32 biases at the product scale, softmax output at 1/256 and -128.
"""

from __future__ import annotations

import numpy as np
import tflite

from .tflite_writer import Node, T, write

N_IN, N_CLASSES, SEED = 40, 4, 97
LAYERS = [(32, 1, 8), (24, 2, 6)]  # (units, rank, memory)


def streams(n_frames: int, seed: int = 0, n_streams: int = 1) -> np.ndarray:
    """Keyword-like feature streams [n_streams, n_frames, 40]: one of 4 spectro-temporal class
    patterns (a drifting formant) per stretch of 10 frames, plus noise; about normal(0, 1)."""
    rng = np.random.default_rng(SEED + 1000 + seed)
    f = np.arange(N_IN)
    out = np.empty((n_streams, n_frames, N_IN), np.float32)
    for s in range(n_streams):
        for t in range(n_frames):
            if t % 10 == 0:
                c = int(rng.integers(N_CLASSES))
            centre = 6 + 8 * c + 0.6 * (t % 10)
            bump = 2.2 * np.exp(-0.5 * ((f - centre) / 2.5) ** 2)
            out[s, t] = bump - 0.5 + 0.6 * rng.normal(size=N_IN)
    return out


def _sym(w: np.ndarray, qmax: int) -> tuple[np.ndarray, float]:
    s = float(np.float32(np.abs(w).max() / qmax))
    return np.clip(np.round(w / s), -qmax, qmax), s


def _asym(lo: float, hi: float) -> tuple[float, int]:
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = float(np.float32((hi - lo) / 255))
    return s, int(np.clip(round(-128 - lo / s), -128, 127))


def _svdf_float(x: np.ndarray, wf, wt, bias, rank: int) -> tuple[np.ndarray, float]:
    """Float SVDF over a stream [frames, n_in]; returns outputs and the largest |feature|."""
    filters, memory = wt.shape
    state = np.zeros((filters, memory))
    ys, fmax = [], 0.0
    for frame in x:
        state = np.roll(state, -1, axis=1)
        state[:, -1] = wf @ frame
        fmax = max(fmax, float(np.abs(state[:, -1]).max()))
        per_filter = (state * wt).sum(axis=1)
        ys.append(per_filter.reshape(-1, rank).sum(axis=1) + bias)
    return np.array(ys), fmax


def _svdf_options(rank: int):
    def w(b) -> int:
        tflite.SVDFOptionsStart(b)
        tflite.SVDFOptionsAddRank(b, rank)
        return tflite.SVDFOptionsEnd(b)

    return w


def _fc_options(b) -> int:
    tflite.FullyConnectedOptionsStart(b)
    return tflite.FullyConnectedOptionsEnd(b)


def _softmax_options(b) -> int:
    tflite.SoftmaxOptionsStart(b)
    tflite.SoftmaxOptionsAddBeta(b, 1.0)
    return tflite.SoftmaxOptionsEnd(b)


def kws_svdf() -> bytes:
    """The model's flatbuffer (deterministic)."""
    rng = np.random.default_rng(SEED)
    x = streams(60, n_streams=4).reshape(-1, N_IN)  # calibration frames (4 streams in a row)
    in_q = _asym(float(x.min()), float(x.max()))
    tensors = [T("frame", (1, N_IN), quant=in_q)]
    nodes: list[Node] = []
    h, h_id = x, 0
    for k, (units, rank, memory) in enumerate(LAYERS):
        filters, n_in = units * rank, h.shape[1]
        wf, wf_s = _sym(rng.normal(0, 1 / np.sqrt(n_in), (filters, n_in)), 127)
        wt, wt_s = _sym(rng.normal(0, 1 / np.sqrt(memory), (filters, memory)), 32767)
        bias_f = rng.normal(0, 0.1, units)
        y, fmax = _svdf_float(h, wf * wf_s, wt * wt_s, bias_f, rank)
        st_s = float(np.float32(1.1 * fmax / 32767))
        b_s = float(np.float32(np.float32(st_s) * np.float32(wt_s)))
        if k == 0:
            y = np.maximum(y, 0)  # the RELU that follows; SVDF's output range includes it
        o_q = _asym(float(y.min()), float(y.max()))
        base = len(tensors)
        tensors += [
            T(f"svdf{k}/weights_feature", (filters, n_in), quant=(wf_s, 0), data=wf),
            T(f"svdf{k}/weights_time", (filters, memory), "int16", quant=(wt_s, 0), data=wt),
            T(f"svdf{k}/bias", (units,), "int32", quant=(b_s, 0),
              data=np.round(bias_f / b_s)),
            T(f"svdf{k}/state", (1, memory * filters), "int16", quant=(st_s, 0), variable=True),
            T(f"svdf{k}/out", (1, units), quant=o_q),
        ]  # fmt: skip
        ins = [h_id, base, base + 1, base + 2, base + 3]
        nodes.append(Node("SVDF", ins, [base + 4], "SVDFOptions", _svdf_options(rank)))
        h, h_id = y, base + 4
        if k == 0:
            tensors.append(T("relu0", (1, units), quant=o_q))
            nodes.append(Node("RELU", [h_id], [len(tensors) - 1]))
            h_id = len(tensors) - 1
    w = rng.normal(0, 1, (N_CLASSES, h.shape[1]))
    logits = h @ w.T
    w *= 2.5 / logits.std()  # logits spread about +-2.5: softmax outputs neither flat nor 0/1
    wq, w_s = _sym(w, 127)
    logits = h @ (wq * w_s).T
    fc_in_s = tensors[h_id].quant[0]
    b_s = float(np.float32(np.float32(fc_in_s) * np.float32(w_s)))
    base = len(tensors)
    tensors += [
        T("fc/weights", (N_CLASSES, h.shape[1]), quant=(w_s, 0), data=wq),
        T("fc/bias", (N_CLASSES,), "int32", quant=(b_s, 0), data=np.zeros(N_CLASSES)),
        T("logits", (1, N_CLASSES), quant=_asym(float(logits.min()), float(logits.max()))),
        T("probabilities", (1, N_CLASSES), quant=(1 / 256, -128)),
    ]
    nodes.append(
        Node("FULLY_CONNECTED", [h_id, base, base + 1], [base + 2], "FullyConnectedOptions",
             _fc_options)
    )  # fmt: skip
    nodes.append(Node("SOFTMAX", [base + 2], [base + 3], "SoftmaxOptions", _softmax_options))
    return write(tensors, nodes, [0], [base + 3])
