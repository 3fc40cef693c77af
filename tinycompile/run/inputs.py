"""Random model inputs for runs and comparisons."""

from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..ir import Graph


def make_inputs(g: Graph, n: int = 20, seed: int = 0) -> list[np.ndarray]:
    """Random inputs, batch on axis 0: uniform int8 codes, or for float inputs, values spanning
    the range of the quantization that follows them (so nothing is clipped away)."""
    rng = np.random.default_rng(seed)
    cons = g.consumers()
    xs = []
    for tid in g.inputs:
        t = g.t(tid)
        shape = (n, *t.shape[1:]) if t.shape else (n,)
        if t.dtype == "int8":
            xs.append(rng.integers(-128, 128, size=shape, dtype=np.int8))
        elif t.dtype == "float32":
            lo, hi = -1.0, 1.0
            for i in cons.get(tid, []):
                q = g.t(g.ops[i].outputs[0]).quant
                if q is not None and g.ops[i].kind == "QUANTIZE":
                    lo = q.s * (-128 - q.zp)
                    hi = q.s * (127 - q.zp)
            xs.append(rng.uniform(lo, hi, size=shape).astype(np.float32))
        else:
            raise CompileError(f"cannot make random inputs of type {t.dtype}")
    return xs
