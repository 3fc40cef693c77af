"""Generate the SQUEEZE and EXPAND_DIMS test models into tests/models/ops/.

Run from the repository root: ``python -m tests.modelgen.ops_alias`` (no TensorFlow needed).
The converter turns tf.squeeze / tf.expand_dims into RESHAPE, so these models are written
directly (``tflite_writer``): a RELU (so the alias op reads an activation, not the graph input)
followed by the alias op, which TFLM runs as squeeze.cc / expand_dims.cc.
"""

from __future__ import annotations

import numpy as np
import tflite

from .common import MODELS_DIR
from .tflite_writer import Node, T, write

OUT = MODELS_DIR / "ops"
Q_IN, Q_OUT = (0.05, -3), (0.04, -128)


def _squeeze(dims: list[int]):
    def w(b) -> int:
        tflite.SqueezeOptionsStartSqueezeDimsVector(b, len(dims))
        for d in reversed(dims):
            b.PrependInt32(d)
        vec = b.EndVector()
        tflite.SqueezeOptionsStart(b)
        tflite.SqueezeOptionsAddSqueezeDims(b, vec)
        return tflite.SqueezeOptionsEnd(b)

    return w


def _expand_dims(b) -> int:
    tflite.ExpandDimsOptionsStart(b)
    return tflite.ExpandDimsOptionsEnd(b)


def build() -> dict[str, bytes]:
    models = {}
    models["squeeze_mid"] = write(
        [T("x", (1, 4, 1, 8), quant=Q_IN), T("r", (1, 4, 1, 8), quant=Q_OUT),
         T("y", (1, 4, 8), quant=Q_OUT)],
        [Node("RELU", [0], [1]),
         Node("SQUEEZE", [1], [2], "SqueezeOptions", _squeeze([2]))],
        [0], [2],
    )  # fmt: skip
    models["squeeze_all"] = write(
        [T("x", (1, 1, 6, 1), quant=Q_IN), T("r", (1, 1, 6, 1), quant=Q_OUT),
         T("y", (6,), quant=Q_OUT)],
        [Node("RELU", [0], [1]),
         Node("SQUEEZE", [1], [2], "SqueezeOptions", _squeeze([]))],
        [0], [2],
    )  # fmt: skip
    models["expand_dims_axis2"] = write(
        [T("x", (1, 4, 8), quant=Q_IN), T("r", (1, 4, 8), quant=Q_OUT),
         T("axis", (1,), "int32", data=np.array([2], np.int32)),
         T("y", (1, 4, 1, 8), quant=Q_OUT)],
        [Node("RELU", [0], [1]),
         Node("EXPAND_DIMS", [1, 2], [3], "ExpandDimsOptions", _expand_dims)],
        [0], [3],
    )  # fmt: skip
    models["expand_dims_neg"] = write(
        [T("x", (1, 5, 3), quant=Q_IN), T("r", (1, 5, 3), quant=Q_OUT),
         T("axis", (), "int32", data=np.array(-1, np.int32)),
         T("y", (1, 5, 3, 1), quant=Q_OUT)],
        [Node("RELU", [0], [1]),
         Node("EXPAND_DIMS", [1, 2], [3], "ExpandDimsOptions", _expand_dims)],
        [0], [3],
    )  # fmt: skip
    return models


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in build().items():
        (OUT / f"{name}.tflite").write_bytes(data)
        print(f"wrote {OUT / name}.tflite ({len(data)} bytes)")


if __name__ == "__main__":
    main()
