"""The numpy kernels of the ONNX reference (``onnx_reference``), one per quantized operator.

Each computes the arithmetic docs/onnx.md promises ("The arithmetic matched, and how"), written
from onnxruntime's CPU sources (MLAS and contrib_ops/cpu/quantization), independently of
tinycompile's own kernels: integer accumulators exact (int64 here), every float step an IEEE
float32 operation in the documented order (numpy's float32 arithmetic is correctly rounded; float64
appears only where it is exact, the product of two float32 and its TwoSum in ``fma32``, and where
onnxruntime itself computes in double, QLinearSoftmax's table and quotient), rounding half to
even, saturation. Quantized tensors keep their ONNX type (int8 or uint8, raw values and
zero points) and layout (NCHW).
"""

from __future__ import annotations

import math

import numpy as np

F32 = np.float32
F64 = np.float64
FLT_MAX = float(np.finfo(np.float32).max)


def limits(dtype: np.dtype | type) -> tuple[int, int]:
    """The saturation range of a quantized type."""
    i = np.iinfo(dtype)
    return int(i.min), int(i.max)


def round_sat(v: np.ndarray, zp: int | np.ndarray, dtype: np.dtype | type) -> np.ndarray:
    """MLAS's float -> quantized step: clamp ``v`` to ``[min - zp, max - zp]`` in float32, round
    half to even, add the zero point (the same as ``saturate(rint(v) + zp)``)."""
    lo, hi = limits(dtype)
    z = np.asarray(zp, np.int64)
    v = np.clip(np.asarray(v, F32), (lo - z).astype(F32), (hi - z).astype(F32))
    return (np.rint(v).astype(np.int64) + z).astype(dtype)


def quantize(x: np.ndarray, scale: np.ndarray, zp: int | np.ndarray,
             dtype: np.dtype | type) -> np.ndarray:  # fmt: skip
    """QuantizeLinear (ONNX; MLAS ``MlasQuantizeLinear``): ``saturate(rint(x / scale) + zp)``
    with a float32 division."""
    return round_sat(np.asarray(x, F32) / np.asarray(scale, F32), zp, dtype)


def dequantize(q: np.ndarray, scale: np.ndarray, zp: int | np.ndarray) -> np.ndarray:
    """DequantizeLinear: ``float32(q - zp) * scale`` (the difference exact, one float32 product)."""
    d = (np.asarray(q).astype(np.int64) - np.asarray(zp, np.int64)).astype(F32)
    return d * np.asarray(scale, F32)


def requantize(acc: np.ndarray, scale: np.ndarray, zp: int, dtype: np.dtype | type) -> np.ndarray:
    """``MlasRequantizeOutput``: ``saturate(rint(float32(acc) * scale) + zp)``."""
    return round_sat(np.asarray(acc, np.int64).astype(F32) * np.asarray(scale, F32), zp, dtype)


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Float32 fused multiply-add ``a * b + c`` rounded once, vectorized. The product of two
    float32 is exact in float64; the float64 sum ``s`` and its exact error ``e`` (TwoSum) give
    ``a * b + c == s + e``. Rounding ``s`` to float32 is then correct except when ``s`` is exactly
    halfway between two float32 and ``e != 0``: the exact value lies beyond ``s`` on ``e``'s
    side, whose neighbour is taken."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32))
    p = a.astype(F64) * b.astype(F64)
    cd = c.astype(F64)
    s = p + cd
    z = s - p
    e = (p - (s - z)) + (cd - z)
    f = s.astype(F32)
    fd = f.astype(F64)
    g = np.nextafter(f, np.where(fd < s, F32(np.inf), F32(-np.inf)).astype(F32))
    tie = (fd != s) & (fd + g.astype(F64) == 2.0 * s) & (e != 0.0)
    beyond = np.where(e > 0.0, np.maximum(f, g), np.minimum(f, g))
    return np.where(tie, beyond, f).astype(F32)


# ---------------------------------------------------------------- accumulating ops


def conv(x: np.ndarray, xz: int, w: np.ndarray, wz: np.ndarray, bias: np.ndarray | None,
         scale: np.ndarray, yz: int, dtype: type, *, group: int, strides: list[int],
         dilations: list[int], pads: list[int]) -> np.ndarray:  # fmt: skip
    """QLinearConv (2-D, NCHW): ``sum (x - xz) * (w - wz) + bias`` exact, requantized per output
    channel with ``scale`` (``(x_scale * w_scale[c]) / y_scale``, float32)."""
    xi = np.asarray(x).astype(np.int64) - xz
    oc, cpg, kh, kw = w.shape
    wi = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    pt, pl, pb, pr = pads
    xp = np.pad(xi, ((0, 0), (0, 0), (pt, pb), (pl, pr)))  # padded taps are the zero point
    n, c, h, wd = xp.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh = (h - (kh - 1) * dh - 1) // sh + 1
    ow = (wd - (kw - 1) * dw - 1) // sw + 1
    xg = xp.reshape(n, group, c // group, h, wd)
    wg = wi.reshape(group, oc // group, cpg, kh, kw)
    acc = np.zeros((n, group, oc // group, oh, ow), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            patch = xg[:, :, :, y0 : y0 + (oh - 1) * sh + 1 : sh, x0 : x0 + (ow - 1) * sw + 1 : sw]
            acc += np.einsum("ngchw,goc->ngohw", patch, wg[..., ky, kx])
    acc = acc.reshape(n, oc, oh, ow)
    if bias is not None:
        acc += bias.astype(np.int64).reshape(1, -1, 1, 1)
    return requantize(acc, np.asarray(scale, F32).reshape(1, -1, 1, 1), yz, dtype)


def gemm(a: np.ndarray, az: int, b: np.ndarray, bz: np.ndarray, bias: np.ndarray | None,
         scale: np.ndarray, yz: int, dtype: type, *, trans_b: bool) -> np.ndarray:  # fmt: skip
    """QGemm / QLinearMatMul: ``(a - az) @ (b - bz) + bias`` exact (A of any rank, B 2-D,
    ``trans_b``: B is [N, K]), requantized per column with ``scale`` (float32)."""
    zb = np.asarray(bz, np.int64).reshape(-1)
    bi = b.astype(np.int64) - (zb.reshape(-1, 1) if trans_b else zb.reshape(1, -1))
    acc = (np.asarray(a).astype(np.int64) - az) @ (bi.T if trans_b else bi)
    if bias is not None:
        acc = acc + np.asarray(bias).astype(np.int64)  # C: [N], [1, N] or [M, N]
    return requantize(acc, np.asarray(scale, F32).reshape(-1), yz, dtype)


def global_avgpool(x: np.ndarray, xs: F32, xz: int, ys: F32, yz: int, dtype: type) -> np.ndarray:
    """QLinearGlobalAveragePool (MLAS): per channel ``sum x - xz * pixels`` requantized with
    ``x_scale / (y_scale * float(pixels))``, refused outside MLAS's range as onnxruntime does."""
    pixels = int(np.prod(x.shape[2:]))
    scale = F32(xs) / (F32(ys) * F32(pixels))
    if pixels >= 1 << 24 or not F32(2.0**-32) <= scale < F32(256.0):
        raise ValueError("QLinearGlobalAveragePool parameters out of MLAS's range")
    acc = x.reshape(*x.shape[:2], -1).astype(np.int64).sum(axis=2) - xz * pixels
    return requantize(acc, scale, yz, dtype).reshape(*x.shape[:2], *([1] * (x.ndim - 2)))


# ---------------------------------------------------------------- float32 ops


def add(a: np.ndarray, aq: tuple, b: np.ndarray, bq: tuple, cq: tuple, dtype: type) -> np.ndarray:
    """QLinearAdd as MLAS's AVX2 kernel (qladd_avx2.cpp): ``ra = a_s / c_s``, ``rb = b_s / c_s``,
    ``fixed = c_zp - fma(ra, a_zp, rb * b_zp)``, then ``fma(a, ra, fma(b, rb, fixed))`` on the raw
    values, rounded half to even and saturated. A broadcast A (a scalar or one value per span)
    enters the fixed part first: ``fma(b, rb, fma(a, ra, fixed))``."""
    (sa, za), (sb, zb), (sc, zc) = aq, bq, cq
    ra = F32(sa) / F32(sc)
    rb = F32(sb) / F32(sc)
    fixed = F32(zc) - fma32(ra, F32(za), F32(rb * F32(zb)))
    fa, fb = np.asarray(a).astype(F32), np.asarray(b).astype(F32)
    shape = np.broadcast_shapes(fa.shape, fb.shape)
    if fa.size < int(np.prod(shape)):
        if fb.size < int(np.prod(shape)):
            raise ValueError("QLinearAdd broadcasting both inputs is not supported")
        v = fma32(fb, rb, fma32(fa, ra, fixed))
    else:
        v = fma32(fa, ra, fma32(fb, rb, fixed))
    return round_sat(np.broadcast_to(v, shape), 0, dtype)


def mul(a: np.ndarray, aq: tuple, b: np.ndarray, bq: tuple, cq: tuple, dtype: type) -> np.ndarray:
    """QLinearMul as MLAS's x86-64 kernel (qlmul.cpp, SSE2): the exact product of the
    differences, ``float32(prod) * ((a_s * b_s) / c_s) + float32(c_zp)`` (the zero point added
    in float32, before rounding), rounded half to even, saturated."""
    (sa, za), (sb, zb), (sc, zc) = aq, bq, cq
    ratio = (F32(sa) * F32(sb)) / F32(sc)
    prod = (np.asarray(a).astype(np.int64) - za) * (np.asarray(b).astype(np.int64) - zb)
    return round_sat(prod.astype(F32) * ratio + F32(zc), 0, dtype)


def avgpool(x: np.ndarray, xs: F32, xz: int, ys: F32, yz: int, dtype: type, *,
            kernel: list[int], strides: list[int], pads: list[int],
            include_pad: bool) -> np.ndarray:  # fmt: skip
    """QLinearAveragePool (qlinear_pool.cc, 2-D NCHW): ``x_scale * (q - x_zp)`` in float32, the
    window summed rows first from 0, divided by the tap count (clipped to the image unless
    ``include_pad``), then ``nearbyint(y / y_scale + y_zp)`` saturated. A window covering the
    whole unpadded image takes QLinearGlobalAveragePool's integer path, as onnxruntime does."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw) = kernel, strides
    pt, pl, pb, pr = pads
    if (kh, kw) == (h, w) and not any(pads):
        return global_avgpool(x, xs, xz, ys, yz, dtype)
    deq = (x.astype(np.int64) - xz).astype(F32) * F32(xs)
    xp = np.pad(deq, ((0, 0), (0, 0), (pt, pb), (pl, pr)))  # +0.0 leaves a float sum unchanged
    oh = (h + pt + pb - kh) // sh + 1
    ow = (w + pl + pr - kw) // sw + 1
    total = np.zeros((n, c, oh, ow), F32)
    for ky in range(kh):
        for kx in range(kw):
            total += xp[:, :, ky : ky + (oh - 1) * sh + 1 : sh, kx : kx + (ow - 1) * sw + 1 : sw]
    if include_pad:
        count = np.full((oh, ow), kh * kw, np.int64)
    else:
        y0, x0 = np.arange(oh) * sh - pt, np.arange(ow) * sw - pl
        rows = np.minimum(y0 + kh, h) - np.maximum(y0, 0)
        cols = np.minimum(x0 + kw, w) - np.maximum(x0, 0)
        count = rows[:, None] * cols[None, :]
    y = total / count.astype(F32)
    return round_sat(y / F32(ys) + F32(yz), 0, dtype)


# MlasLogisticConstants (Eigen's coefficients), float32 as the C compiler rounds the literals
_ALPHA = [F32(v) for v in (4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05,
                           8.51377133304701e-03, 2.48287947061529e-01)]  # fmt: skip
_BETA = [F32(v) for v in (6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06,
                          1.70198817374094e-03, 1.16817656904453e-01,
                          9.93151921023180e-01)]  # fmt: skip


def logistic(v: np.ndarray) -> np.ndarray:
    """MLAS's logistic as its x86-64 FMA3 kernel (LogisticKernelFma3.S) computes it: clamp to
    [-18, 18], ``p`` and ``q`` by Horner with fused multiply-adds, ``max(p * x / q + 0.5, 0)``."""
    x = np.minimum(np.maximum(np.asarray(v, F32), F32(-18.0)), F32(18.0))
    x2 = x * x
    p = fma32(x2, _ALPHA[0], _ALPHA[1])
    for k in _ALPHA[2:]:
        p = fma32(x2, p, k)
    q = fma32(x2, _BETA[0], _BETA[1])
    for k in _BETA[2:]:
        q = fma32(x2, q, k)
    return np.maximum((x * p) / q + F32(0.5), F32(0.0))


def all_values(dtype: type) -> np.ndarray:
    """Every value of a quantized type, in the order of its bit patterns (a table's index)."""
    return np.arange(256, dtype=np.uint8).view(dtype)


def lookup(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """A 256-entry table indexed by each value's bit pattern."""
    return table[np.asarray(x).view(np.uint8)]


def sigmoid(x: np.ndarray, xq: tuple, yq: tuple, dtype: type) -> np.ndarray:
    """QLinearSigmoid: onnxruntime's table (``QlinearBuildLookupTable``): each value dequantized
    (``x_scale * (q - x_zp)``), MLAS's logistic, ``MlasQuantizeLinear``."""
    table = quantize(logistic(dequantize(all_values(x.dtype), *xq)), yq[0], yq[1], dtype)
    return lookup(x, table)


def softmax_table(x_scale: F32, depth: int) -> np.ndarray:
    """QLinearSoftmax's exp table (qlinear_softmax.cc) as onnxruntime 1.32 builds it: ``t[i] =
    float(exp((i - 255 + shift) * x_scale))`` in double with ``shift = max(0, L - 5) / x_scale``,
    ``L = log(FLT_MAX / depth)`` in float32 (``logf`` of the float32 quotient: the float32 rounding
    of the double ``log`` here, the same on every depth tried)."""
    xs = float(F32(x_scale))
    big = float(math.log(float(F32(FLT_MAX) / F32(depth))))
    shift = max(0.0, float(F32(big)) - 5.0) / xs
    return np.array([math.exp((float(i) - 255.0 + shift) * xs) for i in range(256)]).astype(F32)


def softmax(x: np.ndarray, xs: F32, ys: F32, yz: int, dtype: type, *, axis: int,
            opset: int) -> np.ndarray:  # fmt: skip
    """QLinearSoftmax as onnxruntime 1.32 computes it: per row ``e = t[255 - (max - x)]`` (float32),
    their float32 sum in order, then ``nearbyintf((e * floor(1 / y_scale)) / sum)`` with the
    product and quotient in double, plus ``y_zp``, saturated to the type (int8 to 127 since
    microsoft/onnxruntime#29728). Opset < 13 flattens from ``axis``; 13+ runs along ``axis``."""
    axis %= x.ndim
    if opset >= 13 and axis != x.ndim - 1:
        moved = np.moveaxis(x, axis, -1)
        return np.moveaxis(softmax(moved, xs, ys, yz, dtype, axis=-1, opset=opset), -1, axis)
    depth = int(np.prod(x.shape[axis:])) if opset < 13 else int(x.shape[-1])
    rows = x.reshape(-1, depth).astype(np.int64)
    e = softmax_table(xs, depth)[255 - (rows.max(axis=1, keepdims=True) - rows)]
    total = np.add.accumulate(e, axis=1, dtype=F32)[:, -1:]  # sequential, as the C loop
    inv = F32(math.floor(F32(1.0) / F32(ys)))
    q = ((e.astype(F64) * F64(inv)) / total.astype(F64)).astype(F32)
    return round_sat(q, yz, dtype).reshape(x.shape)


# ---------------------------------------------------------------- data movement


def maxpool(x: np.ndarray, *, kernel: list[int], strides: list[int], pads: list[int]) -> np.ndarray:
    """MaxPool (2-D, NCHW, any type): the largest value of each window, padded taps skipped."""
    low = np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf
    (kh, kw), (sh, sw) = kernel, strides
    pt, pl, pb, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=low)
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    out = np.full((*x.shape[:2], oh, ow), low, x.dtype)
    for ky in range(kh):
        for kx in range(kw):
            win = xp[:, :, ky : ky + (oh - 1) * sh + 1 : sh, kx : kx + (ow - 1) * sw + 1 : sw]
            out = np.maximum(out, win)
    return out


def _original(i: np.ndarray, scale: F32, n_out: int, n_in: int, mode: str) -> np.ndarray:
    """onnxruntime's ``GetOriginalCoordinateFromResizedCoordinate``, in float32."""
    x, s, half = i.astype(F32), F32(scale), F32(0.5)
    if mode == "half_pixel":
        return (x + half) / s - half
    if mode == "asymmetric":
        return x / s
    if mode == "pytorch_half_pixel":
        return (x + half) / s - half if n_out > 1 else np.zeros_like(x)
    if mode == "tf_half_pixel_for_nn":
        return (x + half) / s
    if mode == "align_corners":
        return (x * F32(n_in - 1)) / F32(n_out - 1) if n_out > 1 else np.zeros_like(x)
    raise ValueError(f"coordinate_transformation_mode {mode} is not supported")


def _nearest(v: np.ndarray, mode: str, down: bool) -> np.ndarray:
    """onnxruntime's ``GetNearestPixelFromOriginal`` (std::round: halves away from zero)."""
    mag = np.floor(np.abs(v))
    away = np.sign(v) * (mag + (np.abs(v) - mag >= F32(0.5)))  # the fraction is exact
    if mode == "round_prefer_floor":
        return np.where(v == np.trunc(v) + F32(0.5), np.floor(v), away)
    if mode == "round_prefer_ceil":
        return away
    if mode == "floor":
        return np.floor(v)
    if mode == "ceil":
        return np.ceil(v)
    if mode == "simple":  # Resize-10
        return np.ceil(v) if down else np.trunc(v)
    raise ValueError(f"nearest_mode {mode} is not supported")


def resize_nearest(x: np.ndarray, scales: list[F32], sizes: list[int], coord: str,
                   nearest: str) -> np.ndarray:  # fmt: skip
    """Resize in nearest mode (upsample.cc): per axis, each output index's source index from
    its original coordinate (float32) and the nearest mode, clamped to the input; an axis whose
    scale is 1 maps one to one (onnxruntime skips its coordinate transformation)."""
    out = x
    for axis, (s, n_out) in enumerate(zip(scales, sizes, strict=True)):
        n_in = x.shape[axis]
        if s == F32(1.0) and n_out == n_in:
            continue
        v = _original(np.arange(n_out), s, n_out, n_in, coord)
        idx = np.clip(_nearest(v, nearest, bool(s < 1)).astype(np.int64), 0, n_in - 1)
        out = np.take(out, idx, axis=axis)
    return out
