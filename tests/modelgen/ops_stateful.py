"""Generate the stateful-operator test models (SVDF; QUANTIZE int8 <-> int16, the int16
activations around them) into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_stateful`` (no TensorFlow needed).
The converter emits SVDF only for a few graph patterns, so these models are written directly
(``tflite_writer``): an int8 input, SVDF with int8 weights_feature, int16 (or int8)
weights_time, an int32 bias and its activation state as a variable tensor, an int8 output.
Scales keep the state and the outputs alive on uniform random int8 inputs.
"""

from __future__ import annotations

import numpy as np
import tflite

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
Q_IN = (0.05, -3)


def _svdf_options(rank: int, activation: int = 0):
    def w(b) -> int:
        tflite.SVDFOptionsStart(b)
        tflite.SVDFOptionsAddRank(b, rank)
        tflite.SVDFOptionsAddFusedActivationFunction(b, activation)
        return tflite.SVDFOptionsEnd(b)

    return w


def svdf(
    *,
    batch: int,
    n_input: int,
    units: int,
    rank: int,
    memory: int,
    state_dtype: str = "int16",
    state_zp: int = 0,
    activation: int = 0,
    out_q: tuple[float, int] = (0.25, 2),
    seed: int = 0,
    state_range: float = 4.0,
) -> bytes:
    """One SVDF between an int8 input and an int8 output; the state holds ``state_range``
    standard deviations of a filter's feature."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    wf_s = 0.01
    feature_std = Q_IN[0] * 74 * wf_s * 73 * np.sqrt(n_input)  # of one filter's feature
    qmax = 32767 if state_dtype == "int16" else 127
    state_s = float(np.float32(state_range * feature_std / qmax))
    wt_s = float(np.float32(0.6 / qmax))
    bias_s = float(np.float32(np.float32(state_s) * np.float32(wt_s)))
    wt_dt = np.int16 if state_dtype == "int16" else np.int8
    wf = rng.integers(-127, 128, size=(filters, n_input)).astype(np.int8)
    wt = rng.integers(-qmax, qmax + 1, size=(filters, memory)).astype(wt_dt)
    bias = np.round(rng.normal(0, 1.0, size=units) / bias_s).astype(np.int32)
    tensors = [
        T("input", (batch, n_input), quant=Q_IN),
        T("weights_feature", (filters, n_input), quant=(wf_s, 0), data=wf),
        T("weights_time", (filters, memory), state_dtype, quant=(wt_s, 0), data=wt),
        T("bias", (units,), "int32", quant=(bias_s, 0), data=bias),
        T("state", (batch, memory * filters), state_dtype, quant=(state_s, state_zp),
          variable=True),
        T("output", (batch, units), quant=out_q),
    ]  # fmt: skip
    node = Node("SVDF", [0, 1, 2, 3, 4], [5], "SVDFOptions", _svdf_options(rank, activation))
    return write(tensors, [node], [0], [5])


def quantize_chain(qs: list[tuple[str, tuple[float, int]]]) -> bytes:
    """An int8 input, then one QUANTIZE per (dtype, quantization) in ``qs`` (the last int8)."""
    tensors = [T("x", (1, 4, 24), quant=Q_IN)]
    tensors += [T(f"q{k}", (1, 4, 24), dt, quant=q) for k, (dt, q) in enumerate(qs)]
    nodes = [Node("QUANTIZE", [k], [k + 1]) for k in range(len(qs))]
    return write(tensors, nodes, [0], [len(qs)])


def build() -> dict[str, bytes]:
    return {
        # int8 -> int16 (zero point 0, as 16x8) -> int16 (other scale, zero point) -> int8
        "quantize_s8_s16_s8": quantize_chain(
            [("int16", (0.0003, 0)), ("int16", (0.0007, 120)), ("int8", (0.04, 5))]
        ),
        # int8 -> int16 saturating both ways, then int16 -> int8 saturating
        "quantize_s16_clamp": quantize_chain([("int16", (0.00015, -1000)), ("int8", (0.03, 0))]),
        "svdf_s16_rank1": svdf(batch=1, n_input=16, units=8, rank=1, memory=10),
        "svdf_s16_rank2_relu": svdf(
            batch=1, n_input=20, units=6, rank=2, memory=4, activation=1, seed=1
        ),
        "svdf_s16_batch2": svdf(batch=2, n_input=12, units=5, rank=1, memory=6, seed=2),
        "svdf_s8_state_zp": svdf(
            batch=1,
            n_input=10,
            units=4,
            rank=2,
            memory=5,
            state_dtype="int8",
            state_zp=-5,
            seed=3,
        ),
        # int8 state at one standard deviation: features saturate, and TFLM adds the zero point
        # after the clamp (the int8 store wraps)
        "svdf_s8_state_sat": svdf(
            batch=1,
            n_input=10,
            units=4,
            rank=2,
            memory=5,
            state_dtype="int8",
            state_zp=-20,
            seed=3,
            state_range=1.0,
        ),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (OUT / f"{name}.tflite").write_bytes(data)
        print(f"wrote {OUT / name}.tflite ({len(data)} bytes)")


if __name__ == "__main__":
    main()
