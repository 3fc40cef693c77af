"""Small models for the command line's refusal tests, written without TensorFlow (``write``).

Each function returns the flatbuffer bytes: operators the compiler does not support or refuses,
with state or scratch tensors no operator writes (LSTM, SVDF without its bias, a custom op), a
zero quantization scale, a model with several problems at once, and a two-input two-output model
for ``.npz`` inputs.
"""

from __future__ import annotations

import numpy as np
import tflite

from .tflite_writer import Node, T, write

Q = (0.05, -3)


def _add_options(b) -> int:
    tflite.AddOptionsStart(b)
    return tflite.AddOptionsEnd(b)


def _softmax_options(b) -> int:
    tflite.SoftmaxOptionsStart(b)
    tflite.SoftmaxOptionsAddBeta(b, 1.0)
    return tflite.SoftmaxOptionsEnd(b)


def lstm() -> bytes:
    """RELU -> UNIDIRECTIONAL_SEQUENCE_LSTM whose output and cell state tensors are variables."""
    w = np.ones((2, 4), np.int8)
    tensors = [
        T("x", (1, 3, 4), quant=Q), T("r", (1, 3, 4), quant=Q),
        T("w", (2, 4), data=w, quant=(0.01, 0)),
        T("h_state", (1, 2), quant=Q, variable=True),
        T("c_state", (1, 2), quant=Q, variable=True),
        T("y", (1, 3, 2), quant=Q),
    ]  # fmt: skip
    ins = [1, 2, 2, 2, 2, 2, 2, 2, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, 3, 4]
    nodes = [Node("RELU", [0], [1]), Node("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [5])]
    return write(tensors, nodes, [0], [5])


def svdf() -> bytes:
    """SVDF reading its activation state (a variable tensor), without the bias TFLM needs."""
    tensors = [
        T("x", (1, 4), quant=Q),
        T("wf", (2, 4), data=np.ones((2, 4), np.int8), quant=(0.01, 0)),
        T("wt", (2, 3), data=np.ones((2, 3), np.int8), quant=(0.01, 0)),
        T("state", (1, 6), quant=Q, variable=True),
        T("y", (1, 2), quant=Q),
    ]  # fmt: skip
    return write(tensors, [Node("SVDF", [0, 1, 2, -1, 3], [4])], [0], [4])


def custom() -> bytes:
    """A custom operator with a scratch input no operator writes."""
    tensors = [T("x", (1, 8), quant=Q), T("scratch", (16,)), T("y", (1, 8), quant=Q)]
    return write(tensors, [Node("CUSTOM:MyPostProcess", [0, 1], [2])], [0], [2])


def zero_scale() -> bytes:
    """RELU whose output has quantization scale 0 (a fuzzed model)."""
    tensors = [T("x", (1, 8), quant=Q), T("y", (1, 8), quant=(0.0, 0))]
    return write(tensors, [Node("RELU", [0], [1])], [0], [1])


def many_problems() -> bytes:
    """RELU (fine), EXP (unsupported), SVDF (refused: no bias; with state), SOFTMAX whose
    output scale is not 1/256 (refused configuration): three problems."""
    tensors = [
        T("x", (1, 4), quant=Q), T("r", (1, 4), quant=Q), T("e", (1, 4), quant=Q),
        T("wf", (2, 4), data=np.ones((2, 4), np.int8), quant=(0.01, 0)),
        T("wt", (2, 3), data=np.ones((2, 3), np.int8), quant=(0.01, 0)),
        T("state", (1, 6), quant=Q, variable=True),
        T("s", (1, 2), quant=Q), T("y", (1, 2), quant=Q),
    ]  # fmt: skip
    nodes = [
        Node("RELU", [0], [1]),
        Node("EXP", [1], [2]),
        Node("SVDF", [2, 3, 4, -1, 5], [6]),
        Node("SOFTMAX", [6], [7], "SoftmaxOptions", _softmax_options),
    ]
    return write(tensors, nodes, [0], [7])


def two_in_two_out() -> bytes:
    """Inputs 'a' (1, 4) and 'b' (1, 4); outputs 'sum' = a + b and 'relu' = relu(a)."""
    tensors = [
        T("a", (1, 4), quant=Q), T("b", (1, 4), quant=Q),
        T("sum", (1, 4), quant=(0.1, 0)), T("relu", (1, 4), quant=Q),
    ]  # fmt: skip
    nodes = [
        Node("ADD", [0, 1], [2], "AddOptions", _add_options),
        Node("RELU", [0], [3]),
    ]
    return write(tensors, nodes, [0, 1], [2, 3])
