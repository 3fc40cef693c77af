"""The signal library's state pass: TFLM's SignalFilterBankSpectralSubtraction keeps its noise
estimate in a persistent buffer of its own (reset to zero by the interpreter's Reset), not in a
tensor of the model. The pass gives each such op that state as a uint32 variable tensor (one
per channel) appended to its inputs, so that the planner's state region holds it across
inferences and ``reset_state`` clears it, as for SVDF's and LSTM's variable tensors. The new
tensor is ``hidden``: the model file has no twin to compare it with."""

from __future__ import annotations

from dataclasses import replace

from ..ir import Graph, Tensor
from ..ops.signal_filterbank import SPECTRAL_SUBTRACTION


def add_signal_state(g: Graph) -> Graph:
    """A copy of ``g`` where every spectral subtraction reads (and updates) its own state."""
    tensors = list(g.tensors)
    ops = []
    for op in g.ops:
        if op.kind == SPECTRAL_SUBTRACTION and len(op.inputs) == 1 and op.outputs:
            n = g.t(op.outputs[0]).size
            state = Tensor(
                id=len(tensors),
                name=f"op{op.index}_noise_estimate_state",
                shape=(n,),
                dtype="uint32",
                variable=True,
                hidden=True,
            )
            tensors.append(state)
            op = replace(op, inputs=[*op.inputs, state.id])
        ops.append(op)
    return replace(g, tensors=tensors, ops=ops)
