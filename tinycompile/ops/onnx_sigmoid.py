"""ONNX_SIGMOID: onnxruntime's QLinearSigmoid (and a fused QDQ Sigmoid) as the 256-entry table
onnxruntime builds (``QlinearBuildLookupTable``): each input value dequantized in float32,
``x_scale * (q - x_zp)``, through MLAS's logistic (``MlasComputeLogistic``: Eigen's rational
approximation, clamped to [-18, 18], the multiply-adds fused as the x86-64 FMA3 kernel fuses
them, emulated here exactly with rationals), then quantized as ``MlasQuantizeLinear`` does
(divided by y_scale, rounded half to even, saturated, plus y_zp). Kernel: ``tc_lut_s8``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..ir import Graph, Op
from .base import register
from .common import io_int8
from .onnx_requant import F32, OnnxLut, OnnxRequantOp

# MlasLogisticConstants (Eigen's coefficients), as float32
_LO, _HI = F32(-18.0), F32(18.0)
_ALPHA = [F32(v) for v in (4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05,
                            8.51377133304701e-03, 2.48287947061529e-01)]  # fmt: skip
_BETA = [F32(v) for v in (6.10247389755681e-13, 5.76102136993427e-09,
                          6.29106785017040e-06, 1.70198817374094e-03,
                          1.16817656904453e-01, 9.93151921023180e-01)]  # fmt: skip


def round_f32(exact: Fraction) -> np.float32:
    """The float32 nearest to an exact rational (ties to an even mantissa)."""
    r = F32(float(exact))
    best: tuple[tuple[Fraction, int], np.float32] | None = None
    for c in (r, np.nextafter(r, F32(np.inf)), np.nextafter(r, F32(-np.inf))):
        key = (abs(Fraction(float(c)) - exact), int(np.asarray(c).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    assert best is not None
    return best[1]


def fma32(a: np.float32, b: np.float32, c: np.float32) -> np.float32:
    """Fused multiply-add in float32: ``a * b + c`` rounded once."""
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def mlas_logistic(v: np.float32) -> np.float32:
    """MLAS's logistic of one float32, with fused multiply-adds."""
    x = min(max(F32(v), _LO), _HI)
    x2 = F32(x * x)
    p = fma32(x2, _ALPHA[0], _ALPHA[1])
    for a in _ALPHA[2:]:
        p = fma32(p, x2, a)
    p = F32(p * x)
    q = fma32(x2, _BETA[0], _BETA[1])
    for b in _BETA[2:]:
        q = fma32(q, x2, b)
    r = F32(F32(p / q) + F32(0.5))
    return min(max(r, F32(0.0)), F32(1.0))


def sigmoid_lut(xs: float, xz: int, ys: float, yz: int) -> np.ndarray:
    """The table, indexed by the input's bit pattern."""
    lut = np.empty(256, np.int8)
    for q in range(-128, 128):
        y = mlas_logistic(F32(xs) * F32(q - xz))
        lut[q & 0xFF] = int(np.clip(np.rint(F32(y / F32(ys))) + yz, -128, 127))
    return lut


@register
class OnnxSigmoidOp(OnnxRequantOp):
    """ONNX_SIGMOID: a table of onnxruntime's logistic per input value, run as ONNX_REQUANT."""

    kinds = ("ONNX_SIGMOID",)

    def prepare(self, op: Op, g: Graph) -> OnnxLut:
        x, y = io_int8(op, g)
        return OnnxLut(macs=y.size, lut=sigmoid_lut(x.quant.s, x.quant.zp, y.quant.s, y.quant.zp))
