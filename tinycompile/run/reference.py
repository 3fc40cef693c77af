"""Reference runs: TensorFlow Lite Micro's interpreter, the truth comparisons check against.

It is imported lazily: the compiler itself does not need it, only ``run`` comparisons and the
tests do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import CompileError

INSTALL_HINT = "pip install 'tinycompile[reference]'"


def require_reference() -> None:
    """Raise a one-line CompileError naming the extra to install when TFLM is missing."""
    try:
        from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    except ImportError as e:
        raise CompileError(
            f"comparing with TFLM needs the 'reference' extra ({e.name or 'tflite_micro'}"
            f" is missing): {INSTALL_HINT}"
        ) from None


@dataclass
class ReferenceResult:
    """TFLM's outputs for a batch and, when asked, intermediate tensors per sample."""

    outputs: list[np.ndarray]  # one array per graph output, batch along axis 0
    tensors: list[dict[int, np.ndarray]] = field(default_factory=list)  # per sample: id -> value


def run_tflm(
    model: str | Path,
    inputs: list[np.ndarray],
    *,
    tensor_ids: list[int] | None = None,
    n_outputs: int | None = None,
    reset_between: bool = False,
) -> ReferenceResult:
    """Run TFLM on a batch (``inputs[i]`` has the batch on axis 0, one sample per invoke).

    The samples run in order through one interpreter that is never reset between them, so
    variable tensors (state) carry over from one sample to the next, as in the compiled
    model's runner. With ``tensor_ids``, also return those tensors (intermediates, or variable
    tensors: the state after the sample) for every sample. ``reset_between`` resets the
    interpreter after every sample instead (each sample from a fresh state: what state-carrying
    tests compare against).
    """
    require_reference()
    from tflite_micro.python.tflite_micro import runtime

    cfg = runtime.InterpreterConfig.kPreserveAllTensors if tensor_ids else None
    kwargs = {"intrepreter_config": cfg} if cfg is not None else {}
    # TFLM's default arena (10x the file size) is too small for tiny models once every tensor
    # is preserved, and TFLM then crashes the process instead of raising.
    arena = max(16 * Path(model).stat().st_size, 4 << 20)
    interp = runtime.Interpreter.from_file(str(model), arena_size=arena, **kwargs)
    n = inputs[0].shape[0]
    outs: list[list[np.ndarray]] = []
    tensors: list[dict[int, np.ndarray]] = []
    if n_outputs is None:
        n_outputs = _count_outputs(interp)
    for s in range(n):
        for i, x in enumerate(inputs):
            shape = interp.get_input_details(i)["shape"]
            interp.set_input(x[s : s + 1].reshape(shape), i)
        interp.invoke()
        outs.append([np.array(interp.get_output(j)) for j in range(n_outputs)])
        if tensor_ids:
            tensors.append({t: np.array(interp.GetTensor(t, 0)["tensor_data"]) for t in tensor_ids})
        if reset_between:
            interp.reset()
    outputs = [np.concatenate([o[j] for o in outs], axis=0) for j in range(n_outputs)]
    return ReferenceResult(outputs=outputs, tensors=tensors)


def _count_outputs(interp) -> int:
    n = 0
    while True:
        try:
            interp.get_output_details(n)
        except Exception:
            return n
        n += 1
        if n > 64:
            return n
